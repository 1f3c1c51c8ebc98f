"""The real OpenAI client (via llama-index) against a local HTTP server speaking the protocol.

tests/openai_server.py runs on 127.0.0.1 and answers from a script: these tests exercise real
HTTP, JSON, server-sent events, status codes, Retry-After and socket timeouts.
"""
from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from openai_server import FakeOpenAI, Reply, Stall, Status
from rag.cli import app
from rag.config import Settings
from rag.errors import ProviderAuthError, ProviderError, ProviderRateLimitError, ProviderTimeoutError
from rag.answering.generate import generate
from rag.llm import OpenAIChatClient
from rag.answering.prompt import load_prompts
from rag.types import Hit

HELLO = [{"role": "user", "content": "Say hello."}]


def _client(server: FakeOpenAI, sleeps: list[float] | None = None, **overrides) -> OpenAIChatClient:
    settings = Settings(openai_base_url=server.base_url, openai_api_key="sk-local-secret",
                        llm_model="local-model", llm_timeout=5.0, llm_max_retries=2).with_overrides(**overrides)
    recorder = sleeps.append if sleeps is not None else (lambda s: None)
    return OpenAIChatClient(settings, sleep=recorder, jitter=lambda: 1.0)


def test_plain_reply_with_usage_and_model():
    with FakeOpenAI([Reply("Hello [1].")]) as server:
        done = _client(server).chat(HELLO)
    assert done.text == "Hello [1]."
    assert done.usage == {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    assert done.attempts == 1 and done.latency_ms > 0
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "local-model"
    assert request["body"]["messages"] == HELLO
    assert request["body"]["stream"] is False
    assert request["body"]["max_tokens"] == 512  # llm_max_tokens: a small local model must stop
    assert "timeout" not in request["body"]
    assert request["headers"]["Authorization"] == "Bearer sk-local-secret"
    assert done.tries == [{"attempt": 1, "outcome": "ok", "ms": done.tries[0]["ms"]}]


def test_rate_limit_then_success_honours_retry_after():
    sleeps: list[float] = []
    with FakeOpenAI([Status(429, {"Retry-After": "1"}), Status(503), Reply("Hello.")]) as server:
        done = _client(server, sleeps).chat(HELLO)
    assert done.text == "Hello." and done.attempts == 3
    assert sleeps == [1.0, 1.0]  # Retry-After, then our backoff (0.5 * 2, jitter pinned)
    assert len(server.requests) == 3


def test_persistent_server_error_ends_in_provider_error():
    sleeps: list[float] = []
    with FakeOpenAI([Status(500, message="upstream exploded")] * 3) as server:
        with pytest.raises(ProviderError) as info:
            _client(server, sleeps).chat(HELLO)
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]
    message = str(info.value)
    assert message == (f"OpenAI-compatible server {server.base_url} (model local-model): "
                       "HTTP 500: upstream exploded after 3 attempts")
    assert info.value.exit_code == 3
    assert "sk-local-secret" not in message


def test_persistent_rate_limit_is_a_rate_limit_error():
    with FakeOpenAI([Status(429, {"retry-after-ms": "10"})] * 2) as server:
        with pytest.raises(ProviderRateLimitError, match="HTTP 429.*after 2 attempts"):
            _client(server, llm_max_retries=1).chat(HELLO)


def test_retry_after_beyond_the_cap_stops_at_once():
    with FakeOpenAI([Status(429, {"Retry-After": "3600"})]) as server:
        with pytest.raises(ProviderRateLimitError, match="asked to wait 3600s"):
            _client(server).chat(HELLO)
    assert len(server.requests) == 1


def test_auth_error_is_not_retried():
    with FakeOpenAI([Status(401, message="Incorrect API key provided: sk-local-secret")]) as server:
        with pytest.raises(ProviderAuthError) as info:
            _client(server).chat(HELLO)
    assert len(server.requests) == 1
    assert "sk-local-secret" not in str(info.value)
    assert info.value.hint == "check OPENAI_API_KEY"


def test_timeout_is_retried_then_reported():
    started = time.perf_counter()
    with FakeOpenAI([Stall(5), Stall(5)]) as server:
        with pytest.raises(ProviderTimeoutError, match=r"\(model local-model\): timed out after 2 attempts"):
            _client(server, llm_timeout=0.3, llm_max_retries=1).chat(HELLO)
    assert len(server.requests) == 2
    assert time.perf_counter() - started < 4


def test_each_retried_request_is_listed_with_why_it_failed():
    with FakeOpenAI([Stall(5), Reply("Hello.")]) as server:
        done = _client(server, llm_timeout=0.3).chat(HELLO)
    assert done.text == "Hello." and done.attempts == 2
    assert [(t["attempt"], t["outcome"]) for t in done.tries] == [(1, "timed out"), (2, "ok")]
    assert done.tries[0]["ms"] >= 300 and done.latency_ms >= done.tries[0]["ms"]


def test_a_slow_stream_times_out_only_when_a_gap_between_bytes_exceeds_the_timeout():
    """While streaming, llm_timeout counts from the last byte, not from the request."""
    slow = "one two three four five six"
    with FakeOpenAI([Reply(slow, delay=0.25)]) as server:
        started = time.perf_counter()
        done = _client(server, llm_timeout=0.6).chat(HELLO, on_token=lambda t: None)
    assert done.text == slow and time.perf_counter() - started > 1.2  # longer than the timeout in all
    tokens: list[str] = []
    with FakeOpenAI([Reply(slow, delay=1.5)]) as server:
        with pytest.raises(ProviderError, match=r"stream interrupted after 1 token: timed out"):
            _client(server, llm_timeout=0.6).chat(HELLO, on_token=tokens.append)
    assert tokens == ["one "]


def test_connect_timeout_is_its_own_setting():
    from rag.llm import _timeouts

    t = _timeouts(Settings(llm_timeout=180, llm_connect_timeout=4))
    assert (t.connect, t.read, t.write, t.pool) == (4, 180, 180, 180)


def test_connection_refused_is_a_provider_error():
    with FakeOpenAI([]) as server:
        url = server.base_url
    settings = Settings(openai_base_url=url, llm_max_retries=1, llm_timeout=2)
    with pytest.raises(ProviderError, match="connection failed after 2 attempts"):
        OpenAIChatClient(settings, sleep=lambda s: None).chat(HELLO)


def test_streamed_reply_arrives_token_by_token_with_usage():
    tokens: list[str] = []
    with FakeOpenAI([Reply("RoTO is a tactile benchmark [1].")]) as server:
        done = _client(server).chat(HELLO, on_token=tokens.append)
    assert tokens == ["RoTO ", "is ", "a ", "tactile ", "benchmark ", "[1]."]
    assert done.text == "RoTO is a tactile benchmark [1]."
    assert done.usage["total_tokens"] == 150
    body = server.requests[0]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_stream_is_retried_when_it_fails_before_the_first_token():
    tokens: list[str] = []
    with FakeOpenAI([Status(502), Reply("Hello there.")]) as server:
        done = _client(server).chat(HELLO, on_token=tokens.append)
    assert "".join(tokens) == "Hello there." and done.attempts == 2


def test_generate_streams_then_repairs_over_http():
    hits = [Hit(doc_id="a", title="RoTO", label="RoTO", text="RoTO is a tactile benchmark.", score=1.0)]
    tokens: list[str] = []
    with FakeOpenAI([Reply("Researchers love it [2]."), Reply("RoTO is a tactile benchmark [1].")]) as server:
        result = generate("What is RoTO?", hits, client=_client(server), prompts=load_prompts(), on_token=tokens.append)
    assert "".join(tokens) == "Researchers love it [2]."
    assert result.text == "RoTO is a tactile benchmark [1]." and result.cited == [0]
    assert [r["body"]["stream"] for r in server.requests] == [True, False]
    assert '"Researchers love it." has no citation' in server.requests[1]["body"]["messages"][-1]["content"]


runner = CliRunner()


def test_cli_streams_then_shows_validated_citations(seed_settings):
    reply = "BraVE evaluates joint actions with tree-structured action traversal [1]."
    with FakeOpenAI([Reply(reply)]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "--model", "local-model",
                                     "--stream", "Which method uses tree-structured action traversal?"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(reply)
    assert result.stdout.count(reply) == 1  # streamed once, not printed again
    assert "Sources:\n  [1] BraVE" in result.stdout
    assert server.requests[0]["body"]["stream"] is True
    assert server.requests[0]["body"]["model"] == "local-model"


def test_cli_stream_reprints_the_answer_when_the_check_changed_it(seed_settings):
    with FakeOpenAI([Reply("BraVE uses trees [1][42]."), Reply("BraVE uses trees [1][42].")]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "--stream", "What does BraVE use?"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("BraVE uses trees [1][42].")
    assert "(citations checked; the answer as corrected:)\nBraVE uses trees [1]." in result.stdout
    assert "warning: citation check: citation [42] names source 42" in result.stdout


def test_cli_json_is_not_streamed_and_records_usage(seed_settings):
    with FakeOpenAI([Reply("BraVE uses tree-structured action traversal [1].")]) as server:
        result = runner.invoke(app, ["ask", "--json", "--stream", "--base-url", server.base_url,
                                     "Which method uses tree-structured action traversal?"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mode"] == "llm" and data["answer"] == "BraVE uses tree-structured action traversal [1]."
    assert data["usage"]["total_tokens"] == 150
    assert data["timings_ms"]["llm"] > 0
    assert data["citations"][0]["label"] == "BraVE"
    assert server.requests[0]["body"]["stream"] is False


def test_cli_provider_failure_is_one_line_with_exit_code_3(seed_settings, monkeypatch):
    monkeypatch.setenv("RAG_LLM_MAX_RETRIES", "0")
    with FakeOpenAI([Status(500, message="boom")]) as server:
        result = runner.invoke(app, ["ask", "--base-url", server.base_url, "What does BraVE use?"])
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr == f"error: OpenAI-compatible server {server.base_url} (model gpt-4o-mini): HTTP 500: boom after 1 attempt\n"
    assert "Traceback" not in result.output


def test_terminal_output_streams_by_default(seed_settings):
    """Run the real `rag` executable in a pseudo-terminal: no --stream flag, tokens arrive live."""
    import os
    import sys
    from pathlib import Path

    pexpect = pytest.importorskip("pexpect")
    rag_bin = str(Path(sys.executable).parent / "rag")
    reply = "BraVE uses tree-structured action traversal [1]."
    with FakeOpenAI([Reply(reply)]) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "RAG_LLM_MAX_RETRIES": "0"}
        child = pexpect.spawn(rag_bin, ["ask", "Which method uses tree-structured action traversal?"],
                              env=env, encoding="utf-8", timeout=60)
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0, child.before
    assert server.requests[0]["body"]["stream"] is True
    assert reply in child.before and "[1] BraVE" in child.before
