"""`rag eval`: registered on the main CLI app (the eval harness lives in rag/evals/ and eval/)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the `eval` command to the app (not implemented yet: see issue 5)."""
    return None
