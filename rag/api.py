"""The top-level functions: `answer`, `retrieve` and `ingest` on the default index.

Each opens the index named by the settings. The one policy decision lives here: **a missing
index is built from the data folder on first use** (`rag ask` right after install works);
an index that exists but cannot be read is an error, never silently rebuilt. An `Index`
opened here is kept for the process (it reloads itself when an ingest changes it), so
repeated calls do not reopen Chroma or reload BM25.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

from rag.answering import answer_from
from rag.config import Settings, get_settings
from rag.index import Index
from rag.index.embedders import Embedder
from rag.index.filters import Where, WhereLike
from rag.index.sync import Progress
from rag.llm import ChatClient
from rag.types import Answer, Hit, IngestReport

_OPEN: dict[tuple, Index] = {}


def _key(settings: Settings) -> tuple:
    return (settings.index_dir, settings.chroma_url, settings.model_dump_json())


def needs_build(settings: Settings | None = None) -> bool:
    """True when the next `default_index(settings)` will build the index from `data_dir`.

    Clients call it to tell the user before a first build (tens of seconds of embedding).
    """
    settings = settings or get_settings()
    return _key(settings) not in _OPEN and Index.missing(settings)


def default_index(settings: Settings | None = None, *, build_missing: bool = True,
                  progress: Progress | None = None) -> Index:
    """The index for these settings, built from `data_dir` first when none exists yet."""
    settings = settings or get_settings()
    key = _key(settings)
    if key not in _OPEN:
        if build_missing and Index.missing(settings):
            index = Index.create(settings)
            index.ingest(progress=progress)
        else:
            index = Index.open(settings)
        _OPEN[key] = index
    return _OPEN[key]


def answer(
    question: str,
    *,
    k: int | None = None,
    settings: Settings | None = None,
    mode: str | None = None,
    llm: ChatClient | None = None,
    on_token: Callable[[str], None] | None = None,
    index: Index | None = None,
    where: WhereLike = None,
) -> Answer:
    """Answer `question` from the indexed abstracts, citing every sentence.

    `mode` is offline, llm or auto; `llm` replaces the OpenAI-compatible client and
    `on_token` receives the reply as it streams; `index` replaces the default one;
    `where` keeps only matching documents (`{"year": 2025, "venue": "NeurIPS", "author": "smith"}`).
    """
    started = time.perf_counter()
    where = Where.parse(where)  # a bad filter fails before the index is opened
    if index is None:
        settings = settings or get_settings()
        if mode is not None:
            settings.with_overrides(answer_mode=mode)  # a bad mode fails before the index is opened
        index = default_index(settings)
    opened = (time.perf_counter() - started) * 1000
    ans = answer_from(index, question, k=k, mode=mode, llm=llm, on_token=on_token, where=where)
    ans.timings_ms = {"open_index": round(opened, 2), **ans.timings_ms}
    if "total" in ans.timings_ms:
        ans.timings_ms["total"] = round(ans.timings_ms["total"] + opened, 2)
    return ans


def retrieve(query: str, *, k: int | None = None, settings: Settings | None = None,
             index: Index | None = None, where: WhereLike = None) -> list[Hit]:
    """Return the k best chunks for the query (k defaults to `settings.k`), one per document.

    `where` keeps only matching documents, e.g. `{"year": 2025, "author": "smith"}`
    (fields: year, venue, author; a filter nothing matches is a `UsageError`).
    """
    where = Where.parse(where)
    index = index or default_index(settings)
    return index.retrieve(query, k=k, where=where).hits


def ingest(
    paths: Sequence[str | Path] | None = None,
    *,
    settings: Settings | None = None,
    rebuild: bool = False,
    progress: Progress | None = None,
    wait: bool = True,
    embedder: Embedder | None = None,
) -> IngestReport:
    """Bring the index in line with the files under `paths` (default: the data folder)."""
    settings = settings or get_settings()
    key = _key(settings)
    index = _OPEN.get(key) or Index.create(settings)
    report = index.ingest(paths, rebuild=rebuild, progress=progress, wait=wait, embedder=embedder)
    _OPEN[key] = index
    return report
