"""`rag chat` with injected input and output: follow-ups, commands, cancelling, untrusted text."""
from __future__ import annotations

import io

import pytest
from rich.console import Console
from typer.testing import CliRunner

from rag.chat import Chat, history_path, lines
from rag.cli import app
from rag.errors import ConfigError
from rag.llm import Completion
from rag.types import Answer, Citation, Hit

runner = CliRunner()


def _console(terminal: bool = False) -> Console:
    return Console(file=io.StringIO(), width=100, force_terminal=terminal, highlight=False)


def _chat(settings, inputs, **kwargs) -> tuple[Chat, Console, Console, int]:
    out, err = _console(), _console()
    chat = Chat(settings, read=lines(inputs), console=out, err_console=err, **kwargs)
    code = chat.run()
    return chat, out, err, code


def test_question_follow_up_and_sources(seed_settings, seed_index):
    from conftest import seed_paragraphs

    chat, out, err, code = _chat(seed_settings, ["What does RoboRefer do?", "what dataset did it use?", "/sources"])
    text = out.file.getvalue()
    assert code == 0 and err.file.getvalue() == ""
    assert "/exit" in text.splitlines()[0]  # the first line says how to leave
    assert "↳ searching: What dataset did RoboRefer use?" in text
    assert [t.standalone for t in chat.history] == ["What does RoboRefer do?", "What dataset did RoboRefer use?"]
    assert chat.history[0].subject == "RoboRefer"
    assert "RefSpatial" in chat.last.text and "[1]" in chat.last.text
    assert "[1] RoboRefer  NeurIPS 2025 · similarity 0." in text  # numbered sources after the answer
    # /sources prints the whole cited abstract, rebuilt from the store
    abstract = next(p for p in seed_paragraphs() if "we propose RoboRefer" in p)
    assert " ".join(abstract.split()[-12:]) in " ".join(text.split())


def test_commands(seed_settings):
    chat, out, err, code = _chat(
        seed_settings,
        ["/sources", "Which paper introduces a tactile manipulation benchmark?", "/open 2", "/open 9",
         "/k 2", "/k zero", "What does BraVE do?", "/mode llm", "/mode fast", "/nope", "/help", "/exit",
         "never read"],
    )
    text, errors = out.file.getvalue(), err.file.getvalue().splitlines()
    assert code == 0
    assert chat.k == 2 and len(chat.last.sources) == 2
    assert chat.mode == "offline"  # /mode llm without a configured LLM is refused
    assert errors == [
        "error: no answer yet (hint: ask a question first)",
        "error: /open takes a number from 1 to 5, got 9",
        "error: /k takes a number, got 'zero'",
        "error: LLM answers need OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a compatible server) "
        "(hint: or use /mode offline)",
        "error: /mode takes offline or llm, got 'fast'",
        "error: unknown command /nope (hint: /help lists the commands)",
    ]
    assert "[2] " in text and "similarity" in text and "k = 2" in text
    for command in ("/sources", "/open N", "/k N", "/mode offline|llm", "/reset", "/help", "/exit"):
        assert command in text


def test_reset_forgets_the_subject(seed_settings):
    chat, out, _, _ = _chat(seed_settings, ["What does RoboRefer do?", "/reset", "what dataset did it use?"])
    assert "↳ searching" not in out.file.getvalue() and "conversation cleared" in out.file.getvalue()
    assert chat.history[0].standalone == "what dataset did it use?"


def _fake_answer(text: str, label: str, body: str):
    def answer_fn(question, **kwargs):
        hit = Hit(doc_id="d1", title=label, text=body, score=0.5, label=label)
        cite = Citation(n=1, doc_id="d1", title=label, text=body, score=0.5, label=label)
        return Answer(question=question, text=text, citations=[cite], refused=False, mode="offline", sources=[hit])

    return answer_fn


def test_untrusted_text_cannot_reach_the_terminal(seed_settings):
    evil = "[bold red]pwned[/] \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[2J done"
    chat, out, _, _ = _chat(seed_settings, ["q", "/sources", "/open 1"],
                            answer_fn=_fake_answer(f"Claim {evil} [1].", f"Label{evil}", f"Body {evil}"))
    text = out.file.getvalue()
    assert "\x1b" not in text
    assert "[bold red]pwned[/]" in text  # shown literally, not interpreted as rich markup


def test_markdown_answer_highlights_citations(seed_settings):
    out = _console(terminal=True)
    chat = Chat(seed_settings, read=lines(["q"]), console=out,
                answer_fn=_fake_answer("It works **well** [1].", "X", "Body."))
    chat.run()
    text = out.file.getvalue()
    assert "\x1b[1;36m[1]\x1b[0m" in text  # the marker is styled
    assert "**" not in text and "well" in text  # Markdown rendered


def test_ctrl_c_cancels_the_answer_not_the_session(seed_settings):
    calls = []

    def answer_fn(question, **kwargs):
        calls.append(question)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return _fake_answer("Fine [1].", "X", "Body.")(question, **kwargs)

    chat, out, _, code = _chat(seed_settings, ["first", "second"], answer_fn=answer_fn)
    assert code == 0 and calls == ["first", "second"]
    assert "(answer cancelled)" in out.file.getvalue() and chat.last.question == "second"


def test_ctrl_c_and_ctrl_d_at_the_prompt_end_cleanly(seed_settings):
    def interrupt(prompt):
        raise KeyboardInterrupt

    out = _console()
    assert Chat(seed_settings, read=interrupt, console=out).run() == 0
    assert Chat(seed_settings, read=lines([]), console=out).run() == 0


class StreamingClient:
    """A ChatClient that streams scripted replies word by word and records each call."""

    model = "fake-model"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, bool]] = []

    def chat(self, messages, *, on_token=None):
        text = self.replies.pop(0)
        self.calls.append((messages[-1]["content"], on_token is not None))
        if on_token is not None:
            for word in text.split(" "):
                on_token(word + " ")
        return Completion(text=text, model=self.model, usage={"total_tokens": 42})


@pytest.mark.parametrize("terminal", [False, True])
def test_llm_mode_streams_and_rewrites_with_the_model(seed_settings, terminal):
    client = StreamingClient(
        "RoboRefer is a 3D-aware vision language model for spatial referring [1].",
        "What dataset did RoboRefer use?",
        "RoboRefer is trained on RefSpatial, a dataset of 20M QA pairs [1].",
    )
    settings = seed_settings.with_overrides(answer_mode="llm")
    out = _console(terminal)
    chat = Chat(settings, read=lines(["What does RoboRefer do?", "what dataset did it use?"]), console=out,
                client_factory=lambda s: client)
    assert chat.run() == 0
    text = out.file.getvalue()
    assert [streamed for _, streamed in client.calls] == [True, False, True]  # the rewrite is not streamed
    assert "<conversation>" in client.calls[1][0] and "RoboRefer is a 3D-aware" in client.calls[1][0]
    assert "RefSpatial" in client.calls[2][0]  # the rewritten question retrieved RoboRefer's abstract
    assert "searching: What dataset did RoboRefer use?" in text
    assert chat.last.mode == "llm" and chat.last.citations[0].label == "RoboRefer"
    if terminal:  # live frames are redrawn in place; the check did not change the streamed text
        assert "RoboRefer is trained on RefSpatial" in text and "citations checked" not in text
    else:
        assert text.count("RoboRefer is trained on RefSpatial") == 1  # printed once, not twice
    assert "42 tokens" in text
    assert "84 tokens" in text  # the follow-up's footer counts its rewrite call too


def test_verbose_shows_the_cause(seed_settings):
    def failing(question, **kwargs):
        from rag.errors import ProviderError

        try:
            raise TimeoutError("read timed out")
        except TimeoutError as cause:
            raise ProviderError("server (model m): timed out after 1 attempt") from cause

    _, _, err, _ = _chat(seed_settings, ["q"], answer_fn=failing, verbose=True)
    assert err.file.getvalue().splitlines() == [
        "error: server (model m): timed out after 1 attempt", "cause: TimeoutError('read timed out')"]


def test_llm_mode_needs_a_configured_llm(seed_settings):
    def unconfigured(settings):
        raise ConfigError("no LLM configured", hint="set OPENAI_BASE_URL")

    chat, _, err, _ = _chat(seed_settings.with_overrides(answer_mode="llm"), ["hello"], client_factory=unconfigured)
    assert err.file.getvalue().strip() == "error: no LLM configured (hint: set OPENAI_BASE_URL)"
    assert chat.last is None


def test_mode_llm_without_an_llm_hints_the_chat_command(seed_settings):
    """The hint names `/mode offline` (what works inside the chat), not the `--mode` flag."""
    chat, _, err, _ = _chat(seed_settings, ["/mode llm", "What does BraVE do?"])
    lines = err.file.getvalue().strip().splitlines()
    assert len(lines) == 1 and "OPENAI_API_KEY" in lines[0]
    assert "/mode offline" in lines[0] and "--mode" not in lines[0]
    assert chat.mode == "offline" and chat.last is not None  # the chat went on, offline
    _, _, err, _ = _chat(seed_settings.with_overrides(answer_mode="llm"), ["What does BraVE do?"])
    assert "/mode offline" in err.file.getvalue() and "--mode" not in err.file.getvalue()


def test_document_text_joins_overlapping_chunks():
    class Collection:
        def get(self, where, include):
            text = "alpha beta gamma delta epsilon"
            spans = [(17, 30), (0, 16), (11, 22)]
            return {"ids": [f"d:{n}" for n in range(len(spans))],
                    "documents": [text[s:e] for s, e in spans],
                    "metadatas": [{"start": s, "end": e} for s, e in spans]}

    from rag.index.store import Store

    store = Store.__new__(Store)  # no Chroma: only the collection's `get` is used
    store.collection = Collection()
    assert store.document_text("d") == "alpha beta gamma delta epsilon"


def test_history_file_is_outside_the_repo(tmp_path):
    assert history_path({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "rag" / "chat_history"
    assert history_path({"RAG_CHAT_HISTORY": "off"}) is None
    assert history_path({"RAG_CHAT_HISTORY": str(tmp_path / "h")}) == tmp_path / "h"


def test_cli_chat_with_piped_input(seed_settings, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    res = runner.invoke(app, ["chat"], input="What does RoboRefer do?\nwhat dataset did it use?\n/exit\n")
    assert res.exit_code == 0, res.output
    assert "searching: What dataset did RoboRefer use?" in res.stdout and "RefSpatial" in res.stdout
    assert not (tmp_path / "state" / "rag" / "chat_history").exists()  # no input history without a terminal


@pytest.mark.parametrize(
    "args, env, code, message",
    [
        (["chat", "-k", "0"], {}, 2, "-k must be at least 1"),
        (["chat", "--mode", "fast"], {}, 2, "--mode must be auto, llm or offline"),  # a bad flag: usage error
        (["chat"], {"RAG_INDEX_DIR": "{tmp}/none-here", "RAG_DATA_DIR": "{tmp}/no-data"}, 2, "no such file"),
    ],
)
def test_cli_chat_errors_are_one_line(seed_settings, monkeypatch, tmp_path, args, env, code, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    res = runner.invoke(app, args, input="hello\n")
    assert res.exit_code == code, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_stream_broken_after_tokens_is_marked_incomplete(seed_settings):
    from rag.errors import ProviderStreamError

    class Breaks:
        model = "scripted"

        def chat(self, messages, *, on_token=None):
            on_token("Partial answer about")
            raise ProviderStreamError("stream interrupted after 1 tokens")

    chat, out, err, _ = _chat(seed_settings.with_overrides(answer_mode="llm"), ["What does BraVE do?"],
                              client_factory=lambda settings: Breaks())
    assert "(answer incomplete: the stream was interrupted)" in out.file.getvalue()
    assert "stream interrupted" in err.file.getvalue()
    assert chat.last is None
