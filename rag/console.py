"""What every `rag` command prints the same way: error lines and JSON."""
from __future__ import annotations

import json

import typer

from rag.errors import RagError
from rag.text import UNSAFE


def fail(err: RagError, *, verbose: bool = False) -> None:
    """Print `error: message (hint: ...)` on stderr and exit with the error's code."""
    msg = f"error: {err}"
    if err.hint:
        msg += f" (hint: {err.hint})"
    typer.echo(msg, err=True)
    if verbose and err.__cause__ is not None:
        typer.echo(f"cause: {err.__cause__!r}", err=True)
    raise typer.Exit(err.exit_code)


def emit_json(obj) -> None:
    """Print JSON; text stays exact, but terminal-active characters are written as \\uXXXX."""
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    typer.echo(UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
