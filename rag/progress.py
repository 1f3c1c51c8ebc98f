"""A rich progress bar on stderr for ingest, silent when not wanted."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from rag.index.sync import Progress

_LABELS = {"parse": "Reading files", "embed": "Embedding chunks", "lexical": "Building BM25"}


@contextmanager
def progress_bar(*, enabled: bool) -> Iterator[Progress]:
    """Yield a progress callback; draws a bar with counts and ETA only when enabled."""
    if not enabled:
        yield lambda stage, done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

    with Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    ) as bar:
        tasks: dict[str, int] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(_LABELS.get(stage, stage), total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update
