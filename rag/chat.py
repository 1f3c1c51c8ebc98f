"""`rag chat`: an interactive loop over `answer()`, with follow-ups rewritten by rag.rewrite.

The loop reads lines through an injected `read(prompt)` callable (readline in a terminal)
and writes to injected rich consoles, so tests drive it with a list of lines and a buffer.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from rich.console import Console
from rich.text import Text

from rag.answering import resolve_mode
from rag.api import answer, default_index, needs_build
from rag.config import Settings
from rag.errors import ConfigError, RagError, UsageError
from rag.history import AnswerLog, new_conversation
from rag.llm import OpenAIChatClient
from rag.index.chunk import doc_of
from rag.index.filters import Where, WhereLike
from rag.render import abstract_text, byline, cited_markdown, plural, safe, sources_text
from rag.rewrite import Rewrite, Turn, rewrite
from rag.types import Answer

MAX_K = 20
HELP = (
    ("/sources", "show the full abstracts cited by the last answer"),
    ("/open N", "show source N of the last answer in full (with its files and URL)"),
    ("/k N", "retrieve N documents per question"),
    ("/mode offline|llm", "answer by quoting the abstracts, or with the configured LLM"),
    ("/where FIELD=VALUE", "search only matching papers: year=2025 venue=NeurIPS author=Smith; /where alone clears"),
    ("/reset", "forget the conversation (follow-ups start afresh)"),
    ("/help", "show this list"),
    ("/exit", "leave (or Ctrl-D; Ctrl-C cancels a running answer)"),
)
COMMANDS = tuple(name.split()[0] for name, _ in HELP)
_EXIT_WORDS = {"/exit", "/quit", "exit", "quit", ":q"}


def history_path(env: dict[str, str] | None = None) -> Path | None:
    """Return the readline history file: RAG_CHAT_HISTORY, else the XDG state dir; None if off."""
    env = dict(os.environ) if env is None else env
    explicit = env.get("RAG_CHAT_HISTORY")
    if explicit is not None:
        return None if explicit.strip().lower() in ("", "0", "off", "none") else Path(explicit).expanduser()
    state = env.get("XDG_STATE_HOME") or str(Path("~/.local/state").expanduser())
    return Path(state) / "rag" / "chat_history"


class LineReader:
    """Read lines with readline editing, persistent history and /command completion."""

    def __init__(self, history: Path | None) -> None:
        import readline

        self._readline = readline
        self.history = history
        readline.set_history_length(1000)
        readline.set_completer(self._complete)
        readline.set_completer_delims(" ")
        readline.parse_and_bind("tab: complete")
        if history is not None and history.is_file():
            try:
                readline.read_history_file(history)
            except OSError:
                pass

    def _complete(self, text: str, state: int) -> str | None:
        matches = [c + " " for c in COMMANDS if text.startswith("/") and c.startswith(text)]
        return matches[state] if state < len(matches) else None

    def __call__(self, prompt: str) -> str:
        return input(prompt)

    def close(self) -> None:
        """Save the history (best effort: a read-only home must not break the chat)."""
        if self.history is None:
            return
        try:
            self.history.parent.mkdir(parents=True, exist_ok=True)
            self._readline.write_history_file(self.history)
        except OSError:
            pass


@dataclass
class _Watched:
    """Wrap an LLM client to report each call (the spinner says what is happening)."""

    client: Any
    on_call: Callable[[int], None]
    calls: int = 0

    @property
    def model(self) -> str:
        return self.client.model

    def chat(self, messages, *, on_token=None):
        self.calls += 1
        self.on_call(self.calls)
        return self.client.chat(messages, on_token=on_token)


def _default_client(settings: Settings):
    return OpenAIChatClient(settings)


class Chat:
    """One conversation: settings, k, mode, the turns so far and the last answer."""

    def __init__(
        self,
        settings: Settings,
        *,
        read: Callable[[str], str],
        console: Console,
        err_console: Console | None = None,
        answer_fn: Callable[..., Answer] | None = None,
        client_factory: Callable[[Settings], Any] = _default_client,
        prompt: str = "› ",
        verbose: bool = False,
        log: AnswerLog | None = None,
        where: WhereLike = None,
    ) -> None:
        self.settings = settings
        self.read = read
        self.out = console
        self.err = err_console or console
        self.answer_fn = answer_fn or answer
        self.client_factory = client_factory
        self.prompt = prompt
        self.verbose = verbose
        self.k = settings.k
        self.mode = resolve_mode(settings)
        self.where = Where.parse(where)
        self.history: list[Turn] = []
        self.last: Answer | None = None
        self.labels: list[str] = []
        self._by_label: dict[str, str] = {}
        self._index: Any = None
        self._client: Any = None
        self.log = log or AnswerLog(None)
        self.conversation = new_conversation()

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> int:
        """Open the index, greet, then read and handle lines until /exit, Ctrl-D or Ctrl-C."""
        self._index = self._open_index()  # RagError here ends the chat: nothing to ask
        docs = self._index.documents()
        if self.where is not None and not self._index.matching(self.where):  # `rag chat --where ...`
            raise UsageError(f"no indexed abstract matches {self.where.describe()}",
                             hint="`rag sources` lists the documents with their year, venue and authors")
        self.labels = sorted({d.label for d in docs.values() if d.label})
        self._by_label = {d.label: d.id for d in sorted(docs.values(), key=lambda d: d.id) if d.label}
        self.out.print(Text.assemble(
            ("rag chat", "bold"), f" · {len(docs)} abstracts · {self.mode} mode · k={self.k}"
            + (f" · where {safe(self.where.describe())}" if self.where else "") + " — ",
            ("/help", "bold"), " for commands, ", ("/exit", "bold"), " or Ctrl-D to leave.",
        ))
        while True:
            try:
                line = self.read(self.prompt)
            except (EOFError, KeyboardInterrupt):
                self.out.print()
                return 0
            if not self.handle(line):
                return 0

    def _open_index(self) -> Any:
        """Open the index; a first use builds it from the data folder, with its progress shown."""
        if not needs_build(self.settings):
            with self.out.status("Opening the index…"):
                return default_index(self.settings)
        labels = {"parse": "reading files", "embed": "embedding chunks", "lexical": "building BM25"}
        announced: list[bool] = []
        with self.out.status("Reading the data folder…") as status:
            def progress(stage: str, done: int, total: int) -> None:
                if not announced and not (stage == "parse" and done < total):  # the files were found
                    announced.append(True)
                    self.err.print(Text(f"no index yet in {self.settings.index_dir}: building it from "
                                        f"{self.settings.data_dir} (first use only)…", style="dim"), soft_wrap=True)
                count = f" {done}/{total}" if stage == "embed" and total else ""
                status.update(f"Building the index: {labels.get(stage, stage)}{count}…")

            return default_index(self.settings, progress=progress)

    def handle(self, line: str) -> bool:
        """Handle one input line; return False when the user leaves."""
        line = line.strip()
        if not line:
            return True
        if line.lower() in _EXIT_WORDS:
            return False
        try:
            if line.startswith("/"):
                self.command(line)
            else:
                self.ask(line)
        except KeyboardInterrupt:
            self.out.print(Text("(answer cancelled)", style="dim"))
        except RagError as e:
            self.error(e)
        return True

    def error(self, err: RagError) -> None:
        """Print one error line (with its hint) and carry on."""
        msg = f"error: {safe(str(err))}" + (f" (hint: {safe(err.hint)})" if err.hint else "")
        self.err.print(Text(msg, style="red"), soft_wrap=True)
        if self.verbose and err.__cause__ is not None:
            self.err.print(Text(f"cause: {safe(repr(err.__cause__))}", style="dim"), soft_wrap=True)

    # -- commands -------------------------------------------------------------------------------
    def command(self, line: str) -> None:
        """Run a /command."""
        name, _, arg = line.partition(" ")
        name, arg = name.lower(), arg.strip()
        if name == "/help":
            for cmd, what in HELP:
                self.out.print(Text.assemble((f"  {cmd:<20}", "bold"), what), soft_wrap=True)
        elif name == "/sources":
            self.show_sources()
        elif name == "/open":
            self.open_source(arg)
        elif name == "/k":
            self.k = _number(arg, "/k", 1, MAX_K)
            self.out.print(Text(f"k = {self.k}", style="dim"))
        elif name == "/mode":
            self.set_mode(arg)
        elif name == "/where":
            self.set_where(arg)
        elif name == "/reset":
            self.history.clear()
            self.last = None
            self.conversation = new_conversation()
            self.out.print(Text("conversation cleared", style="dim"))
        else:
            raise UsageError(f"unknown command {name}", hint="/help lists the commands")

    def set_mode(self, arg: str) -> None:
        """Switch between offline and LLM answers; LLM mode must be configured."""
        mode = arg.lower()
        if mode not in ("offline", "llm"):
            raise UsageError(f"/mode takes offline or llm, got {arg!r}" if arg else "/mode takes offline or llm")
        if mode == "llm":
            self._client = self._make_client()
        self.mode = mode
        self.out.print(Text(f"{mode} mode", style="dim"))

    def set_where(self, arg: str) -> None:
        """Keep only papers matching `arg` (`year=2025 author=Smith`); no argument clears the filter.

        A filter no indexed paper matches is refused and the previous one stays.
        """
        where = Where.parse(arg) if arg else None
        if where is None:
            self.where = None
            self.out.print(Text("filter cleared: searching every paper", style="dim"))
            return
        docs = len({doc_of(cid) for cid in self._index.matching(where)}) if self._index is not None else None
        if docs == 0:
            raise UsageError(f"no indexed abstract matches {where.describe()}; the filter is unchanged",
                             hint="`rag sources` lists the documents with their year, venue and authors")
        self.where = where
        count = f" ({plural(docs, 'paper')})" if docs is not None else ""
        self.out.print(Text(f"filter: {where.describe()}{count}", style="dim"), soft_wrap=True)

    def _last_or_fail(self) -> Answer:
        if self.last is None:
            raise UsageError("no answer yet", hint="ask a question first")
        return self.last

    def show_sources(self) -> None:
        """Print every abstract the last answer cited, in full."""
        ans = self._last_or_fail()
        if not ans.citations:
            raise UsageError("the last answer cites no source", hint="/open N shows any retrieved source")
        for c in sorted(ans.citations, key=lambda c: c.n):
            hit = ans.sources[c.n - 1] if 0 < c.n <= len(ans.sources) else None
            self._print_source(c.n, c.label or c.title, c.doc_id, c.dense_score, c.text,
                               hit.sources if hit else [], c.url, by=byline(c.authors, c.year, c.venue))

    def open_source(self, arg: str) -> None:
        """Print source N of the last answer in full."""
        ans = self._last_or_fail()
        if not ans.sources:
            raise UsageError("the last answer retrieved no source")
        n = _number(arg, "/open", 1, len(ans.sources))
        h = ans.sources[n - 1]
        self._print_source(n, h.label or h.title, h.doc_id, h.dense_score, h.text, h.sources, h.url,
                           by=byline(h.authors, h.year, h.venue))

    def _print_source(self, n, label, doc_id, score, chunk_text, files, url, *, by: str = "") -> None:
        body = self._index.document_text(doc_id) if self._index is not None else ""
        self.out.print(abstract_text(n, label, body or chunk_text, score=score, files=files, url=url, doc_id=doc_id,
                                     by=by))

    # -- questions ------------------------------------------------------------------------------
    def abstract_of(self, label: str) -> str | None:
        """The full abstract of the document with this label (for the follow-up rewrite)."""
        doc_id = self._by_label.get(label)
        if doc_id is None or self._index is None:
            return None
        return self._index.document_text(doc_id) or None

    def _make_client(self) -> Any:
        """The LLM client; an unconfigured LLM's hint names the chat's own command."""
        try:
            return self.client_factory(self.settings.with_overrides(answer_mode="llm"))
        except ConfigError as e:
            if e.hint and "--mode offline" in e.hint:
                e.hint = e.hint.replace("--mode offline", "/mode offline")
            raise

    def _llm(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def ask(self, question: str) -> None:
        """Rewrite a follow-up, answer it, and print the answer with its sources."""
        client = self._llm() if self.mode == "llm" else None
        if client is not None and self.history:
            with self.out.status("Rewriting the follow-up…"):
                rw = rewrite(question, self.history, mode="llm", client=client, labels=self.labels,
                             abstract_of=self.abstract_of)
        else:
            rw = rewrite(question, self.history, mode="offline", labels=self.labels, abstract_of=self.abstract_of)
        if rw.changed:
            self.out.print(Text(f"↳ searching: {safe(rw.question)}", style="dim italic"))
        ans = self._answer(rw, client)
        self.last = ans
        self.history.append(Turn.from_answer(question, rw.question, ans))
        self.log.record(ans, question=rw.original, conversation=self.conversation)
        self.out.print(sources_text(ans, width=max(40, self.out.width - 6)))
        if ans.mode == "llm":
            tokens = ans.usage.get("total_tokens")
            if tokens is not None and rw.usage.get("total_tokens"):
                tokens += rw.usage["total_tokens"]  # the follow-up's rewrite call counts too
            extra = f" · {tokens} tokens" if tokens is not None else ""
            self.out.print(Text(f"llm {safe(ans.model or '')}{extra} · {ans.timings_ms.get('total', 0) / 1000:.1f}s",
                                style="dim"))

    def _answer(self, rw: Rewrite, client: Any) -> Answer:
        """Run answer() under a spinner; in LLM mode stream the tokens as rendered Markdown."""
        streamed: list[str] = []
        live: list[Any] = []
        status = self.out.status("Searching the abstracts…")

        def on_call(n: int) -> None:
            status.update("Asking the model…" if n == 1 else "Repairing citations…")

        def on_token(token: str) -> None:
            streamed.append(token)
            if not live:
                status.stop()
                live.append(_start_stream(self.out))
            live[0].update("".join(streamed))

        kwargs: dict[str, Any] = {"k": self.k, "settings": self.settings, "mode": self.mode}
        if self.where is not None:
            kwargs["where"] = self.where
        if client is not None:
            kwargs.update(llm=_Watched(client, on_call), on_token=on_token)
        status.start()
        try:
            ans = self.answer_fn(rw.question, **kwargs)
        except (RagError, KeyboardInterrupt):
            if streamed:  # tokens are on screen: they must not pass for a complete answer
                status.stop()
                if live:
                    live[0].stop()
                self.out.print(Text("(answer incomplete: the stream was interrupted)", style="yellow"))
            raise
        finally:
            status.stop()
            if live:
                live[0].stop()
        if live and live[0].shown.strip() == ans.text.strip():
            live[0].finish(ans.text)
        else:
            if streamed:
                live[0].finish("".join(streamed))
                self.out.print(Text("(citations checked; the answer as corrected:)", style="yellow"))
            self.out.print(cited_markdown(ans.text))
        if ans.mode == "offline" and not ans.refused:
            self.out.print(Text("offline mode: sentences quoted from the abstracts", style="dim"))
        for w in ans.warnings:
            self.out.print(Text(f"warning: {safe(w)}", style="yellow"))
        return ans


class _Stream:
    """Show streamed tokens: live-rendered Markdown in a terminal, plain text otherwise."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown = ""
        self.live: Any = None
        if console.is_terminal:
            from rich.live import Live

            self.live = Live(console=console, refresh_per_second=12, vertical_overflow="visible",
                             transient=True)
            self.live.start()

    def update(self, text: str) -> None:
        self.shown = text
        if self.live is not None:
            self.live.update(cited_markdown(text))

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def finish(self, text: str) -> None:
        """Print the final text once (the live view was transient)."""
        self.stop()
        self.console.print(cited_markdown(text))


def _start_stream(console: Console) -> _Stream:
    return _Stream(console)


def _number(arg: str, command: str, low: int, high: int) -> int:
    """Parse a command's integer argument within [low, high]."""
    try:
        n = int(arg)
    except ValueError:
        raise UsageError(f"{command} takes a number, got {arg!r}" if arg else f"{command} takes a number") from None
    if not low <= n <= high:
        raise UsageError(f"{command} takes a number from {low} to {high}, got {n}")
    return n


def lines(items: Iterable[str]) -> Callable[[str], str]:
    """Return a `read` that yields `items` then raises EOFError (for tests and piped input)."""
    it = iter(items)

    def read(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read
