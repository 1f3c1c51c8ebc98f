"""The `rag` command line: a thin client of the Python API.

Answers go to stdout, progress and errors to stderr. Only `RagError`s are turned into
one-line messages with their exit codes; anything else is a bug and shows a traceback.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from rag.console import emit_json as _emit_json
from rag.console import fail
from rag.errors import RagError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Ask grounded, cited questions about research-paper abstracts (offline by default).",
    pretty_exceptions_enable=False,
)
_state = {"verbose": False}


def _fail(err: RagError) -> None:
    fail(err, verbose=_state["verbose"])


# CLI spellings of settings, so a bad value names the flag the user typed.
FLAGS = {"k": "-k", "answer_mode": "--mode", "llm_model": "--model", "openai_base_url": "--base-url"}


def _settings(**overrides):
    from rag.config import get_settings

    return get_settings(flag_names=FLAGS, **overrides)


@app.callback()
def _root(verbose: bool = typer.Option(False, "-v", "--verbose", help="Show error details.")) -> None:
    _state["verbose"] = verbose


@app.command()
def ingest(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: the data folder)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Drop the index for these settings and build it anew."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for a running ingest (default) or exit 6."),
) -> None:
    """Parse, clean, de-duplicate, chunk and embed abstracts into the index."""
    try:
        from rag import ingest as run_ingest
        from rag.errors import BusyError
        from rag.progress import progress_bar
        from rag.render import format_report

        settings = _settings()
        with progress_bar(enabled=not quiet and sys.stderr.isatty()) as progress:
            try:
                report = run_ingest(paths or None, settings=settings, rebuild=rebuild, progress=progress, wait=False)
            except BusyError as busy:
                if not wait:
                    raise
                typer.echo(f"{busy}; waiting for it to finish…", err=True)
                report = run_ingest(paths or None, settings=settings, rebuild=rebuild, progress=progress)
    except RagError as e:
        _fail(e)
    if as_json:
        _emit_json(report.to_dict())
    else:
        typer.echo(format_report(report), err=True, nl=False)


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question, in quotes."),
    k: Optional[int] = typer.Option(None, "-k", help="Number of documents to retrieve."),
    mode: Optional[str] = typer.Option(None, "--mode", help="offline, llm or auto."),
    model: Optional[str] = typer.Option(None, "--model", help="LLM model name (RAG_LLM_MODEL)."),
    base_url: Optional[str] = typer.Option(
        None, "--base-url", help="OpenAI-compatible server URL (OPENAI_BASE_URL)."
    ),
    stream: Optional[bool] = typer.Option(
        None, "--stream/--no-stream", help="Stream LLM tokens (default: when stdout is a terminal)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (never streamed)."),
) -> None:
    """Answer a question with citations to the abstracts."""
    from rag.render import safe

    streamed: list[str] = []

    def show(token: str) -> None:
        streamed.append(token)
        sys.stdout.write(safe(token))
        sys.stdout.flush()

    live = not as_json and (stream if stream is not None else sys.stdout.isatty())
    try:
        from rag import answer

        settings = _settings(answer_mode=mode, llm_model=model, openai_base_url=base_url, k=k)
        ans = answer(question, settings=settings, on_token=show if live else None)
    except RagError as e:
        if streamed:  # the tokens on screen are not an answer: say so where they were printed
            from rag.errors import ProviderStreamError

            why = "the stream was interrupted" if isinstance(e, ProviderStreamError) else "it could not be checked"
            typer.echo(f"\n(answer incomplete: {why})")
        _fail(e)
    if as_json:
        _emit_json(ans.to_dict())
        return
    _print_answer(ans, "".join(streamed))


def _print_answer(ans, streamed: str) -> None:
    """Print the answer; after a stream, print only what the citation check added or changed."""
    import dataclasses

    from rag.render import format_answer, safe

    if not streamed:
        typer.echo(format_answer(ans), nl=False)
    elif streamed.strip() == ans.text.strip():
        typer.echo("\n")
        typer.echo(format_answer(dataclasses.replace(ans, text="")).lstrip("\n"), nl=False)
    else:
        typer.echo("\n\n(citations checked; the answer as corrected:)")
        typer.echo(format_answer(ans), nl=False)
    if ans.mode == "llm":
        tokens = ans.usage.get("total_tokens")
        cost = f", {tokens} tokens" if tokens is not None else ""
        typer.echo(f"(llm: {safe(ans.model)}{cost}, {ans.timings_ms.get('total', 0) / 1000:.1f}s)", err=True)


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    k: Optional[int] = typer.Option(None, "-k", help="Number of documents."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of hits."),
) -> None:
    """Show the retrieved chunks for a query, without composing an answer."""
    try:
        from rag import retrieve
        from rag.render import format_hits

        hits = retrieve(query, settings=_settings(k=k))
    except RagError as e:
        _fail(e)
    if as_json:
        _emit_json([h.to_dict() for h in hits])
    else:
        typer.echo(format_hits(hits), nl=False)


@app.command()
def sources(as_json: bool = typer.Option(False, "--json", help="Print a JSON list of documents.")) -> None:
    """List the indexed documents with their labels and source files."""
    try:
        from rag import Index
        from rag.render import safe

        docs = Index.open(_settings()).documents()
    except RagError as e:
        _fail(e)
    rows = [
        {"id": d.id, "label": d.label, "title": d.title, "files": d.sources, "chunks": len(d.chunk_ids)}
        for d in sorted(docs.values(), key=lambda d: d.label.lower())
    ]
    if as_json:
        _emit_json(rows)
        return
    for r in rows:
        files = ", ".join(safe(Path(f).name) for f in r["files"])
        typer.echo(f"{r['id']}  {safe(r['label'])}  [{files}]")
    typer.echo(f"{len(rows)} documents", err=True)


@app.command()
def chat(
    k: Optional[int] = typer.Option(None, "-k", help="Documents retrieved per question (/k changes it)."),
    mode: Optional[str] = typer.Option(None, "--mode", help="offline, llm or auto (/mode changes it)."),
    model: Optional[str] = typer.Option(None, "--model", help="LLM model name (RAG_LLM_MODEL)."),
    base_url: Optional[str] = typer.Option(
        None, "--base-url", help="OpenAI-compatible server URL (OPENAI_BASE_URL)."
    ),
    history: bool = typer.Option(
        True, "--history/--no-history",
        help="Keep input history in $XDG_STATE_HOME/rag/chat_history (or RAG_CHAT_HISTORY).",
    ),
) -> None:
    """Chat with the abstracts: follow-up questions, sources and /commands (/help lists them)."""
    from rich.console import Console

    from rag.chat import Chat, LineReader, history_path

    reader = None
    try:
        settings = _settings(answer_mode=mode, llm_model=model, openai_base_url=base_url, k=k)
        if sys.stdin.isatty():
            reader = LineReader(history_path() if history else None)
            read = reader
        else:
            read = _read_piped
        out = Console(highlight=False)
        prompt = "\001\x1b[1;36m\002›\001\x1b[0m\002 " if out.is_terminal and not out.no_color else "› "
        code = Chat(settings, read=read, console=out, err_console=Console(stderr=True, highlight=False),
                    prompt=prompt if reader else "", verbose=_state["verbose"]).run()
    except RagError as e:
        _fail(e)
    finally:
        if reader is not None:
            reader.close()
    raise typer.Exit(code)


def _read_piped(prompt: str) -> str:
    """Read one line from a non-terminal stdin; EOFError at its end."""
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


@app.command()
def doctor(as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON.")) -> None:
    """Check the index, the models, the LLM endpoint and that nothing reaches the network."""
    from rag.doctor import exit_code, run_checks

    checks = run_checks()
    if as_json:
        _emit_json([c.to_dict() for c in checks])
    else:
        from rag.render import safe

        marks = {"pass": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}
        for c in checks:
            line = f"{marks[c.status]}  {c.name}: {safe(c.detail)}"
            if c.status in ("fail", "warn") and c.hint:
                line += f" (hint: {safe(c.hint)})"
            typer.echo(line)
    raise typer.Exit(exit_code(checks))


config_app = typer.Typer(help="Show the effective configuration.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(as_json: bool = typer.Option(False, "--json", help="Print settings and origins as JSON.")) -> None:
    """Print the effective settings and where each came from (secrets masked)."""
    try:
        from rag.config import load_settings
        from rag.render import format_settings, masked_settings

        settings, origin = load_settings()
    except RagError as e:
        _fail(e)
    rows = masked_settings(settings, origin)
    if as_json:
        _emit_json(rows)
    else:
        typer.echo(format_settings(rows), nl=False)


def _register_extensions() -> None:
    from rag import eval_cli

    eval_cli.register(app)


_register_extensions()


def main() -> None:
    """Console-script entry point: click's usage errors become one line (exit code 2)."""
    try:
        code = app(standalone_mode=False)
    except Exception as e:  # noqa: BLE001 - typer vendors click, so its errors are matched by shape
        name = type(e).__name__
        if name == "Abort":
            typer.echo("aborted", err=True)
            sys.exit(130)
        if not (hasattr(e, "format_message") and isinstance(getattr(e, "exit_code", None), int)):
            raise
        if name == "NoArgsIsHelpError":  # `rag` alone shows the help, as before
            e.show()
            sys.exit(e.exit_code)
        ctx = getattr(e, "ctx", None)
        hint = f" (hint: see `{ctx.command_path} --help`)" if ctx is not None else ""
        typer.echo(f"error: {e.format_message()}{hint}", err=True)
        sys.exit(e.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
