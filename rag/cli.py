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
    # Plain click help: rich mode prints a type column (`<bool>` beside every flag, `<str>`).
    rich_markup_mode=None,
)
_state = {"verbose": False}


def _fail(err: RagError) -> None:
    fail(err, verbose=_state["verbose"])


# CLI spellings of settings, so a bad value names the flag the user typed.
FLAGS = {"k": "-k", "answer_mode": "--mode", "llm_model": "--model", "openai_base_url": "--base-url"}
FLAG_HINTS = {
    "--mode": "--mode offline quotes the abstracts, --mode llm uses OPENAI_API_KEY or OPENAI_BASE_URL, "
              "--mode auto picks llm when one is set",
}


WHERE_HELP = ("Only papers matching FIELD=VALUE: year=2025, venue=NeurIPS (case and a year in the venue "
              "name ignored), author=Smith (substring). Repeat to combine (AND).")


def _where_option():
    return typer.Option(None, "--where", metavar="FIELD=VALUE", help=WHERE_HELP)


def _settings(**overrides):
    from rag.config import get_settings
    from rag.errors import UsageError

    try:
        return get_settings(flag_names=FLAGS, **overrides)
    except UsageError as e:
        flag = str(e).split(" ", 1)[0]
        if e.hint is None and flag in FLAG_HINTS:
            e.hint = FLAG_HINTS[flag]
        raise


def _verbose(value: bool) -> bool:
    if value:
        _state["verbose"] = True
    return value


# -v works before the command (`rag -v ask`) and after it (`rag ask "x" -v`).
VERBOSE = typer.Option(False, "-v", "--verbose", help="Show error details.", callback=_verbose, is_eager=True)


@app.callback()
def _root(verbose: bool = typer.Option(False, "-v", "--verbose", help="Show error details.")) -> None:
    _state["verbose"] = verbose  # a command's own -v (VERBOSE) may turn it on after this


def _warn(message: str) -> None:
    from rag.render import safe

    typer.echo(safe(message), err=True)


def _stage_lines():
    """A progress callback for a non-terminal stderr: one line when a stage starts."""
    started: set[str] = set()
    labels = {"parse": "read the files", "embed": "embedding {total} chunks", "lexical": "building BM25"}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in started and (stage != "embed" or total):
            started.add(stage)
            typer.echo(f"  {labels.get(stage, stage).format(total=total)}…", err=True)

    return update


def _open_index(settings):
    """The default index; a first use builds it from the data folder, with progress on stderr."""
    import time

    from rag.api import default_index, needs_build
    from rag.progress import progress_bar

    if not needs_build(settings):
        return default_index(settings)
    started = time.perf_counter()
    announced: list[bool] = []

    def announce_then(target):
        # Said once the files are read, so a missing or empty data folder is one error line.
        def update(stage: str, done: int, total: int) -> None:
            if not announced:
                if stage == "parse" and done < total:
                    return
                announced.append(True)
                typer.echo(f"no index yet in {settings.index_dir}: building it from {settings.data_dir} "
                           "(first use only; later questions start at once)…", err=True)
            if stage != "parse":
                target(stage, done, total)

        return update

    tty = sys.stderr.isatty()
    try:
        with progress_bar(enabled=tty) as bar:
            index = default_index(settings, progress=announce_then(bar if tty else _stage_lines()))
    except KeyboardInterrupt:
        typer.echo("interrupted; run `rag ingest` to finish building the index", err=True)
        raise typer.Exit(130) from None
    typer.echo(f"index built in {time.perf_counter() - started:.0f}s", err=True)
    return index


@app.command()
def ingest(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: the data folder)."),
    rebuild: bool = typer.Option(
        False, "--rebuild",
        help="Rebuild the index for these settings from these paths and every file ingested earlier that "
             "still exists (a damaged or outdated index is fixed this way; nothing is dropped)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for a running ingest (default) or exit 6."),
    verbose: bool = VERBOSE,
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
    except KeyboardInterrupt:
        # Finished batches are stored and the next run embeds only what is missing.
        again = " ".join(["rag ingest", *(str(p) for p in paths or [])])
        typer.echo(f"interrupted; run `{again}` again to finish", err=True)
        raise typer.Exit(130) from None
    if as_json:
        _emit_json(report.to_dict())
        return
    typer.echo(format_report(report), err=True, nl=False)
    _report_rebuild(report)


def _report_rebuild(report) -> None:
    """Say which earlier files `--rebuild` read again and which it could not (they are gone)."""
    from rag.render import safe

    def names(files: list[str]) -> str:
        shown = ", ".join(safe(f) for f in files[:5])
        return shown + (f", … ({len(files)} files)" if len(files) > 5 else "")

    if report.kept_sources:
        typer.echo(f"Kept {len(report.kept_sources)} file(s) ingested earlier from other paths (read again): "
                   f"{names(report.kept_sources)}", err=True)
    if report.dropped_sources:
        typer.echo(f"Dropped {len(report.dropped_sources)} file(s) ingested earlier that no longer exist: "
                   f"{names(report.dropped_sources)}", err=True)


def _read_question(question: str) -> str:
    """`-` reads the question from stdin (all of it: a question may span lines)."""
    if question != "-":
        return question
    return sys.stdin.read()


@app.command()
def ask(
    question: str = typer.Argument(..., metavar="QUESTION", help="The question, in quotes; `-` reads it from stdin."),
    k: Optional[int] = typer.Option(None, "-k", metavar="N", help="Number of documents to retrieve."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="MODE", help="offline, llm or auto."),
    model: Optional[str] = typer.Option(None, "--model", metavar="NAME", help="LLM model name (RAG_LLM_MODEL)."),
    base_url: Optional[str] = typer.Option(
        None, "--base-url", metavar="URL", help="OpenAI-compatible server URL (OPENAI_BASE_URL)."
    ),
    stream: Optional[bool] = typer.Option(
        None, "--stream/--no-stream", help="Stream LLM tokens (default: when stdout is a terminal)."
    ),
    continue_: bool = typer.Option(
        False, "-c", "--continue",
        help="Continue the last conversation in the answer log: a follow-up is rewritten from it."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (never streamed)."),
    where: Optional[List[str]] = _where_option(),
    verbose: bool = VERBOSE,
) -> None:
    """Answer a question with citations to the abstracts."""
    from rag.history import AnswerLog, new_conversation
    from rag.render import safe

    streamed: list[str] = []

    def show(token: str) -> None:
        streamed.append(token)
        sys.stdout.write(safe(token))
        sys.stdout.flush()

    live = not as_json and (stream if stream is not None else sys.stdout.isatty())
    log = AnswerLog.default(warn=_warn)
    conversation = new_conversation()
    try:
        from rag import answer
        from rag.index.search import check_query

        question = _read_question(question)
        settings = _settings(answer_mode=mode, llm_model=model, openai_base_url=base_url, k=k)
        check_query(question)
        _open_index(settings)
        searched, client = question, None
        if continue_:
            searched, client, conversation = _continue(question, settings, log, conversation)
        ans = answer(searched, settings=settings, on_token=show if live else None, llm=client, where=where or None)
    except RagError as e:
        if streamed:  # the tokens on screen are not an answer: say so where they were printed
            from rag.errors import ProviderStreamError

            why = "the stream was interrupted" if isinstance(e, ProviderStreamError) else "it could not be checked"
            typer.echo(f"\n(answer incomplete: {why})")
        _fail(e)
    log.record(ans, question=" ".join(question.split()), conversation=conversation)
    if as_json:
        _emit_json({**ans.to_dict(), "asked": " ".join(question.split()), "conversation": conversation})
        return
    _print_answer(ans, "".join(streamed))


def _continue(question: str, settings, log, conversation: str):
    """Rewrite `question` as a follow-up of the log's last conversation.

    Returns the question to search, the LLM client (LLM mode) and the conversation id. A
    log that is off is a usage error; an empty or unreadable one leaves the question as it is.
    """
    from rag.answering import resolve_mode
    from rag.api import default_index
    from rag.errors import UsageError
    from rag.history import LOG_ENV
    from rag.render import safe
    from rag.rewrite import Turn, rewrite

    if not log.enabled:
        raise UsageError(f"-c continues the last conversation of the answer log, which is off ({LOG_ENV}=off)",
                         hint=f"unset {LOG_ENV} (or set it to a file) to keep a log")
    try:
        entries = log.last_conversation()
    except RagError as e:
        log.broken = True  # one warning: this answer is not logged either
        _warn(f"warning: {e}; answering without the conversation, and not logging (hint: {e.hint})")
        return question, None, conversation
    if not entries:
        _warn("note: the answer log holds no earlier answer; this starts a new conversation")
        return question, None, conversation
    history = [Turn(question=e.question, standalone=e.searched, answer=e.answer, subject=e.subject,
                    cited=[c.get("label") or c.get("title") or "" for c in e.citations]) for e in entries]
    index = default_index(settings)
    docs = index.documents()
    by_label = {d.label: d.id for d in sorted(docs.values(), key=lambda d: d.id) if d.label}

    def abstract_of(label: str) -> str | None:
        return index.document_text(by_label[label]) if label in by_label else None

    client = None
    if resolve_mode(settings) == "llm":
        from rag.llm import OpenAIChatClient

        client = OpenAIChatClient(settings)
    rw = rewrite(question, history, mode="llm" if client else "offline", client=client,
                 labels=sorted(by_label), abstract_of=abstract_of)
    if rw.changed:
        typer.echo(f"↳ searching: {safe(rw.question)}", err=True)
    return rw.question, client, entries[-1].conversation


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
    query: str = typer.Argument(..., metavar="QUERY", help="What to look for."),
    k: Optional[int] = typer.Option(None, "-k", metavar="N", help="Number of documents."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of hits."),
    where: Optional[List[str]] = _where_option(),
    verbose: bool = VERBOSE,
) -> None:
    """Show the retrieved chunks for a query, without composing an answer."""
    try:
        from rag import retrieve
        from rag.index.search import check_query
        from rag.render import format_hits

        settings = _settings(k=k)
        check_query(query)
        _open_index(settings)
        hits = retrieve(query, settings=settings, where=where or None)
    except RagError as e:
        _fail(e)
    if as_json:
        _emit_json([h.to_dict() for h in hits])
    else:
        typer.echo(format_hits(hits), nl=False)


@app.command()
def sources(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of documents."),
    where: Optional[List[str]] = _where_option(),
    verbose: bool = VERBOSE,
) -> None:
    """List the indexed documents with their labels, authors, year, venue and source files."""
    try:
        from rag import Index
        from rag.index.chunk import doc_of
        from rag.render import byline, plural, safe

        index = Index.open(_settings())
        docs = index.documents()
        if where:
            keep = {doc_of(cid) for cid in index.matching(where)}
            docs = {did: d for did, d in docs.items() if did in keep}
    except RagError as e:
        _fail(e)
    rows = [
        {"id": d.id, "label": d.label, "title": d.title, "files": d.sources, "chunks": len(d.chunk_ids),
         "authors": d.authors, "year": d.year, "venue": d.venue, "url": d.url}
        for d in sorted(docs.values(), key=lambda d: d.label.lower())
    ]
    if as_json:
        _emit_json(rows)
        return
    for r in rows:
        files = ", ".join(safe(Path(f).name) for f in r["files"])
        by = byline(r["authors"], r["year"], r["venue"])
        typer.echo(f"{r['id']}  {safe(r['label'])}{' — ' + by if by else ''}  [{files}]")
    typer.echo(plural(len(rows), "document"), err=True)


@app.command()
def chat(
    k: Optional[int] = typer.Option(None, "-k", metavar="N", help="Documents retrieved per question (/k changes it)."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="MODE", help="offline, llm or auto (/mode changes it)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="NAME", help="LLM model name (RAG_LLM_MODEL)."),
    base_url: Optional[str] = typer.Option(
        None, "--base-url", metavar="URL", help="OpenAI-compatible server URL (OPENAI_BASE_URL)."
    ),
    history: bool = typer.Option(
        True, "--history/--no-history",
        help="Keep input history in $XDG_STATE_HOME/rag/chat_history (or RAG_CHAT_HISTORY).",
    ),
    where: Optional[List[str]] = _where_option(),
    verbose: bool = VERBOSE,
) -> None:
    """Chat with the abstracts: follow-up questions, sources and /commands (/help lists them)."""
    from rich.console import Console
    from rich.text import Text

    from rag.chat import Chat, LineReader, history_path
    from rag.history import AnswerLog

    reader = None
    try:
        settings = _settings(answer_mode=mode, llm_model=model, openai_base_url=base_url, k=k)
        if sys.stdin.isatty():
            reader = LineReader(history_path() if history else None)
            read = reader
        else:
            read = _read_piped
        out = Console(highlight=False)
        err = Console(stderr=True, highlight=False)
        prompt = "\001\x1b[1;36m\002›\001\x1b[0m\002 " if out.is_terminal and not out.no_color else "› "
        log = AnswerLog.default(warn=lambda message: err.print(Text(message, style="yellow"), soft_wrap=True))
        code = Chat(settings, read=read, console=out, err_console=err, log=log,
                    prompt=prompt if reader else "", verbose=_state["verbose"], where=where or None).run()
    except RagError as e:
        _fail(e)
    finally:
        if reader is not None:
            reader.close()
    raise typer.Exit(code)


@app.command("log")
def log_command(
    n: int = typer.Option(10, "-n", "--count", help="How many of the latest answers (0: all)."),
    query: Optional[str] = typer.Option(None, "-q", "--query", help="Only answers whose question or text has this."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown: each answer with its references."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of entries."),
    path: bool = typer.Option(False, "--path", help="Print where the log is and exit."),
    verbose: bool = VERBOSE,
) -> None:
    """List, search or export the answer log (every `rag ask` and `rag chat` answer)."""
    from rag.errors import UsageError
    from rag.history import LOG_ENV, AnswerLog, to_markdown
    from rag.render import safe

    log = AnswerLog.default()
    try:
        if n < 0:
            raise UsageError(f"-n must be 0 (all) or more, got {n}")
        if path:
            typer.echo(str(log.path) if log.enabled else f"off ({LOG_ENV}=off)")
            return
        if not log.enabled:
            typer.echo(f"the answer log is off ({LOG_ENV}=off)", err=True)
            return
        entries = log.recent(n, search=query)
    except RagError as e:
        _fail(e)
    if as_json:
        _emit_json([e.to_dict() for e in entries])
        return
    if not entries:
        what = f"no logged answer matches {query!r}" if query else "no answers logged yet"
        typer.echo(f"{safe(what)} (log: {log.path})", err=True)
        return
    if markdown:
        typer.echo(to_markdown(entries, clean=safe), nl=False)
        return
    for e in entries:
        stamp = e.time.replace("T", " ").replace("Z", "")
        model = f" {safe(e.model)}" if e.model else ""
        typer.echo(f"#{e.id}  {stamp}  {e.mode}{model}  conversation {e.conversation}")
        typer.echo(f"  Q: {safe(e.question)}")
        if e.rewritten:
            typer.echo(f"  ↳ searched: {safe(e.searched)}")
        answer = " ".join(safe(e.answer).split())
        typer.echo(f"  A: {answer if len(answer) <= 300 else answer[:299] + '…'}")
        if e.citations:
            cites = ", ".join(f"[{c.get('n')}] {safe(c.get('label') or c.get('title') or '')}" for c in e.citations)
            typer.echo(f"  cites: {cites}")
        typer.echo("")


def _read_piped(prompt: str) -> str:
    """Read one line from a non-terminal stdin; EOFError at its end."""
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


@app.command()
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
    verbose: bool = VERBOSE,
) -> None:
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
def config_show(
    as_json: bool = typer.Option(False, "--json", help="Print settings and origins as JSON."),
    verbose: bool = VERBOSE,
) -> None:
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
