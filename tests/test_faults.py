"""Provider faults beyond the basics: each is one specific line and exit code 3, and no partial
answer is ever shown as if it were complete.

Every fault is played by tests/openai_server.py on 127.0.0.1 (or, for DNS, a host under the
reserved `.invalid` TLD, which never resolves), through the real OpenAI SDK and llama-index.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest
from typer.testing import CliRunner

from openai_server import FakeOpenAI, Malformed, Reply, Status, Truncated
from rag.cli import app
from rag.config import Settings
from rag.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderStreamError,
)
from rag.answering.generate import generate
from rag.llm import OpenAIChatClient, _classify
from rag.answering.prompt import load_prompts
from rag.types import Hit

HELLO = [{"role": "user", "content": "Say hello."}]
DNS_URL = "http://no-such-host.invalid/v1"
ANSWER = "BraVE evaluates joint actions with tree-structured action traversal [1]."
QUESTION = "Which method uses tree-structured action traversal?"
runner = CliRunner()


def _client(base_url: str, sleeps: list[float] | None = None, **overrides) -> OpenAIChatClient:
    settings = Settings(openai_base_url=base_url, llm_model="local-model", llm_timeout=5.0,
                        llm_max_retries=1).with_overrides(**overrides)
    return OpenAIChatClient(settings, sleep=sleeps.append if sleeps is not None else (lambda s: None),
                            jitter=lambda: 1.0)


def _closed_port_url() -> str:
    with FakeOpenAI([]) as server:
        return server.base_url  # nothing listens there any more


# -- the client: one specific error class and message per fault ---------------------------------

def test_connection_refused_is_retried_then_names_the_refusal():
    url = _closed_port_url()
    sleeps: list[float] = []
    with pytest.raises(ProviderConnectionError) as info:
        _client(url, sleeps).chat(HELLO)
    assert str(info.value) == f"OpenAI-compatible server {url} (model local-model): connection failed after 2 attempts"
    assert info.value.hint == "the connection was refused: is the server running? check OPENAI_BASE_URL"
    assert info.value.exit_code == 3 and sleeps == [0.5]


def test_unknown_host_is_not_retried_and_names_the_host():
    with pytest.raises(ProviderConnectionError) as info:
        _client(DNS_URL, llm_max_retries=0).chat(HELLO)
    assert str(info.value) == (f"OpenAI-compatible server {DNS_URL} (model local-model): "
                               "cannot resolve host 'no-such-host.invalid' after 1 attempt")
    assert info.value.hint == "check the host name in OPENAI_BASE_URL"


@pytest.mark.parametrize("code, retried", [(socket.EAI_NONAME, False), (getattr(socket, "EAI_AGAIN", -3), True)])
def test_only_a_temporary_resolver_failure_is_retried(code, retried):
    """A name that does not exist will not appear on retry; a resolver hiccup may pass."""
    err = openai.APIConnectionError(request=httpx.Request("POST", DNS_URL))
    err.__cause__ = httpx.ConnectError("resolution failed")
    err.__cause__.__context__ = socket.gaierror(code, "resolution failed")
    failure = _classify(err, "no-such-host.invalid")
    assert failure.error is ProviderConnectionError and failure.retryable is retried
    assert failure.reason == "cannot resolve host 'no-such-host.invalid'"


@pytest.mark.parametrize("step, reason", [
    (Malformed(), "malformed response: the body is not valid JSON (Unterminated string starting at)"),
    (Malformed(body="<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
     "malformed response: the body is not a chat completion"),
    (Malformed(body="{}"), "malformed response: the body is not a chat completion"),
    (Malformed(body='{"choices": []}'), "malformed response: the body is not a chat completion"),
])
def test_malformed_bodies_are_response_errors_and_not_retried(step, reason):
    with FakeOpenAI([step, Reply("never asked")]) as server:
        with pytest.raises(ProviderResponseError) as info:
            _client(server.base_url).chat(HELLO)
    assert str(info.value) == f"OpenAI-compatible server {server.base_url} (model local-model): {reason} after 1 attempt"
    assert info.value.hint == "is OPENAI_BASE_URL an OpenAI-compatible /v1 endpoint?"
    assert len(server.requests) == 1


def test_a_body_cut_mid_way_is_retried_then_reported():
    with FakeOpenAI([Truncated("Hello there."), Reply("Hello there.")]) as server:
        done = _client(server.base_url).chat(HELLO)
    assert done.text == "Hello there." and done.attempts == 2
    with FakeOpenAI([Truncated("Hello there.")] * 2) as server:
        with pytest.raises(ProviderError, match="connection closed before the response was complete after 2 attempts"):
            _client(server.base_url).chat(HELLO)


def test_stream_closed_without_finishing_is_an_error_not_a_short_answer():
    """The SDK ends a stream quietly when the server hangs up before `data: [DONE]`."""
    tokens: list[str] = []
    with FakeOpenAI([Truncated("RoTO is a tactile benchmark [1].", tokens=3), Reply("unused")]) as server:
        with pytest.raises(ProviderStreamError) as info:
            _client(server.base_url).chat(HELLO, on_token=tokens.append)
    assert tokens == ["RoTO ", "is ", "a "]
    assert str(info.value) == (f"OpenAI-compatible server {server.base_url} (model local-model): "
                               "stream interrupted after 3 tokens: it ended without finishing the answer")
    assert len(server.requests) == 1  # tokens were shown: a retry would show them twice


def test_stream_with_a_malformed_event_after_tokens_is_a_stream_error():
    tokens: list[str] = []
    with FakeOpenAI([Malformed(body="{not json", text="Hello brave new world.", tokens=2)]) as server:
        with pytest.raises(ProviderStreamError, match=r"stream interrupted after 2 tokens: malformed response: "
                                                      r"the body is not valid JSON"):
            _client(server.base_url).chat(HELLO, on_token=tokens.append)
    assert tokens == ["Hello ", "brave "]


def test_stream_that_breaks_before_any_token_is_retried():
    tokens: list[str] = []
    with FakeOpenAI([Truncated("Hello there.", tokens=0), Reply("Hello there.")]) as server:
        done = _client(server.base_url).chat(HELLO, on_token=tokens.append)
    assert "".join(tokens) == "Hello there." and done.attempts == 2 and done.finish_reason == "stop"
    with FakeOpenAI([Truncated("x", tokens=0)] * 2) as server:
        with pytest.raises(ProviderStreamError, match="the stream ended before the answer was complete after 2 attempts"):
            _client(server.base_url).chat(HELLO, on_token=tokens.append)


def test_an_error_in_the_callers_token_sink_is_not_a_provider_fault():
    def broken_pipe(token: str) -> None:
        raise BrokenPipeError("stdout closed")

    with FakeOpenAI([Reply("Hello there.")]) as server:
        with pytest.raises(BrokenPipeError, match="stdout closed"):
            _client(server.base_url).chat(HELLO, on_token=broken_pipe)
    assert len(server.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_cut_at_the_token_limit_is_marked_incomplete(stream):
    hits = [Hit(doc_id="a", title="RoTO", label="RoTO", text="RoTO is a tactile benchmark.", score=1.0)]
    tokens: list[str] = []
    with FakeOpenAI([Reply("RoTO is a tactile benchmark [1].", finish_reason="length")]) as server:
        result = generate("What is RoTO?", hits, client=_client(server.base_url), prompts=load_prompts(),
                          on_token=tokens.append if stream else None)
    assert result.text == "RoTO is a tactile benchmark [1]."
    assert result.warnings == ["the answer is incomplete: the provider cut the reply short (finish reason length)"]


def test_a_broken_stream_reaches_the_caller_of_generate_as_an_error():
    hits = [Hit(doc_id="a", title="RoTO", label="RoTO", text="RoTO is a tactile benchmark.", score=1.0)]
    with FakeOpenAI([Truncated("RoTO is a tactile benchmark [1].", tokens=2)]) as server:
        with pytest.raises(ProviderStreamError):
            generate("What is RoTO?", hits, client=_client(server.base_url), prompts=load_prompts(),
                     on_token=lambda t: None)


# -- the CLI: one line on stderr, exit 3, nothing partial on stdout -----------------------------

def _one_error_line(result, *needles: str) -> str:
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("fault, needles", [
    ("refused", ["connection failed after 1 attempt", "(hint: the connection was refused"]),
    ("dns", ["cannot resolve host 'no-such-host.invalid' after 1 attempt",
             "(hint: check the host name in OPENAI_BASE_URL)"]),
    ("malformed", ["malformed response: the body is not valid JSON", "(hint: is OPENAI_BASE_URL"]),
    ("truncated", ["connection closed before the response was complete after 1 attempt"]),
    ("bad key", ["HTTP 401: Incorrect API key provided", "(hint: check OPENAI_API_KEY)"]),
])
@pytest.mark.parametrize("as_json", [False, True])
def test_cli_fault_is_one_specific_line_exit_3_and_nothing_on_stdout(seed_settings, monkeypatch, fault, needles,
                                                                     as_json):
    monkeypatch.setenv("RAG_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fault-test-key")
    steps = {"malformed": [Malformed()], "truncated": [Truncated(ANSWER)],
             "bad key": [Status(401, message="Incorrect API key provided: sk-fau*****-key")]}.get(fault, [])
    with FakeOpenAI(steps) as server:
        url = {"refused": _closed_port_url(), "dns": DNS_URL}.get(fault, server.base_url)
        args = ["ask", "--base-url", url, "--no-stream"] + (["--json"] if as_json else []) + [QUESTION]
        result = runner.invoke(app, args)
    assert result.exit_code == 3, result.output
    assert result.stdout == ""
    _one_error_line(result, *needles)


def test_cli_stream_cut_after_tokens_says_the_answer_is_incomplete(seed_settings, monkeypatch):
    monkeypatch.setenv("RAG_LLM_MAX_RETRIES", "0")
    with FakeOpenAI([Truncated(ANSWER, tokens=3)]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "--stream", QUESTION])
    assert result.exit_code == 3, result.output
    assert result.stdout == "BraVE evaluates joint \n(answer incomplete: the stream was interrupted)\n"
    _one_error_line(result, "stream interrupted after 3 tokens: it ended without finishing the answer")


def test_cli_stream_with_a_malformed_event_says_the_answer_is_incomplete(seed_settings):
    with FakeOpenAI([Malformed(body="{oops", text=ANSWER, tokens=2)]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "--stream", QUESTION])
    assert result.exit_code == 3, result.output
    assert result.stdout.endswith("\n(answer incomplete: the stream was interrupted)\n")
    assert "Sources:" not in result.stdout
    _one_error_line(result, "stream interrupted after 2 tokens: malformed response")


def test_cli_stream_whose_repair_call_fails_is_not_shown_as_final(seed_settings, monkeypatch):
    """The first reply streamed completely but cites a source that was not given for a claim no
    source states (so no deterministic fix applies); the repair call fails."""
    monkeypatch.setenv("RAG_LLM_MAX_RETRIES", "0")
    reply = "BraVE was first tested on lunar rovers [42]."
    with FakeOpenAI([Reply(reply), Status(500, message="boom")]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "--stream", "What does BraVE use?"])
    assert result.exit_code == 3, result.output
    assert result.stdout == f"{reply}\n(answer incomplete: it could not be checked)\n"
    _one_error_line(result, "HTTP 500: boom after 1 attempt")


def test_cli_json_prints_nothing_partial_when_the_stream_would_have_broken(seed_settings, monkeypatch):
    """--json is never streamed: a reply cut mid-body is retried, then the complete one is printed."""
    with FakeOpenAI([Truncated(ANSWER), Reply(ANSWER)]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "--stream", "--json", QUESTION])
    assert result.exit_code == 0, result.output
    assert '"answer": "' + ANSWER + '"' in result.stdout
    assert [r["body"]["stream"] for r in server.requests] == [False, False]


def test_real_executable_reports_a_broken_stream_without_a_traceback(seed_settings):
    rag_bin = str(Path(sys.executable).parent / "rag")
    with FakeOpenAI([Truncated(ANSWER, tokens=2)]) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "RAG_LLM_MAX_RETRIES": "0"}
        proc = subprocess.run([rag_bin, "ask", "--stream", QUESTION], env=env, capture_output=True, text=True,
                              timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "BraVE evaluates \n(answer incomplete: the stream was interrupted)\n"
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
