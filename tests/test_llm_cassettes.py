"""LLM answers replayed from vcrpy cassettes (pytest-recording) in tests/cassettes/test_llm_cassettes/.

HAND-WRITTEN CASSETTES: no OpenAI server was reachable where these tests were written, so every
cassette here holds replies we scripted ourselves. They were produced by running this module as
a script (`python tests/test_llm_cassettes.py`), which plays each scenario against the local fake
server in tests/openai_server.py, records the real client's requests with vcrpy, and rewrites the
host to api.openai.com. The requests (bodies included) are exactly what the client sends; the
replies are ours.

Replay: record mode `none` (the pytest-recording default), the request body is matched, so any
change to the prompts, the model name or the request options fails these tests until the
cassettes are regenerated. Authorization, api-key and cookie headers are never stored.

Re-recording against the real API (docs/llm.md): the `test_live_*` tests hold for any sensible
model, so `OPENAI_API_KEY=sk-... .venv/bin/pytest tests/test_llm_cassettes.py -k live
--record-mode=rewrite` replaces their cassettes with real answers. The `test_fault_*` tests
script failures no real server produces on demand (invented citations, 429, 500); they skip
when recording and are regenerated only by the script.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from rag.config import Settings
from rag.errors import ProviderError
from rag.answering.generate import generate
from rag.llm import OpenAIChatClient
from rag.text import redact
from rag.answering import REFUSAL
from rag.answering.prompt import load_prompts
from rag.types import Hit

# Read at import time: the autouse isolated_env fixture removes OPENAI_API_KEY before each test.
_RECORDING_KEY = os.environ.get("OPENAI_API_KEY")
_FAKE_KEY = "sk-test-not-a-real-key"
CASSETTES = Path(__file__).parent / "cassettes" / "test_llm_cassettes"
_KEEP_REQUEST_HEADERS = {"content-type"}
_KEEP_RESPONSE_HEADERS = {"content-type", "retry-after", "retry-after-ms"}

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


def _keep_headers(headers: dict, keep: set[str]) -> dict:
    return {k: v for k, v in headers.items() if k.lower() in keep}


def _tidy_request(request):
    """Store only the content type and a pretty-printed JSON body (no keys, reviewable diffs)."""
    request.headers = _keep_headers(dict(request.headers), _KEEP_REQUEST_HEADERS)
    request.uri = redact(request.uri)  # http://user:password@host/... keeps no password
    if request.body:
        request.body = json.dumps(json.loads(request.body), indent=2, ensure_ascii=False).encode()
    return request


def _tidy_response(response):
    response["headers"] = _keep_headers(response["headers"], _KEEP_RESPONSE_HEADERS)
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


@pytest.fixture
def recording(request) -> bool:
    return (request.config.getoption("--record-mode") or "none") != "none"


def _settings(*, key: str, base_url: str | None = None, retries: int = 0) -> Settings:
    # max_retries=0 where a missing interaction must fail fast rather than be retried.
    return Settings(openai_api_key=key, openai_base_url=base_url, llm_model="gpt-4o-mini",
                    llm_timeout=30.0, llm_max_retries=retries)


def _key(recording: bool) -> str:
    if recording and not _RECORDING_KEY:
        pytest.fail("set OPENAI_API_KEY to re-record cassettes")
    return _RECORDING_KEY if recording else _FAKE_KEY


# name -> (question, stream?, retries, scripted replies for the hand-written cassette)
SCENARIOS = {
    "test_live_cited_answer": (QUESTION, False, 0, [
        "The Robot Tactile Olympiad (RoTO) benchmark is released for tactile-based manipulation [1].",
    ]),
    "test_live_refusal": (OFF_TOPIC, False, 0, [REFUSAL]),
    "test_live_streamed_answer": (QUESTION, True, 0, [
        "The paper releases the Robot Tactile Olympiad (RoTO) benchmark [1]. It targets tactile-based manipulation [1].",
    ]),
    "test_fault_invented_citation": (QUESTION, False, 0, [
        "RoTO is the benchmark [1][4]. It was released in 2025 [7].",
        "RoTO is the benchmark [1][4].",
    ]),
    "test_fault_uncited_answer_is_repaired": (QUESTION, False, 0, [
        "The benchmark is called RoTO. It targets tactile-based manipulation [1].",
        "The benchmark is called RoTO [1]. It targets tactile-based manipulation [1].",
    ]),
    "test_fault_rate_limit_then_success": (QUESTION, False, 2, [
        ("status", 429, {"Retry-After": "2"}),
        "RoTO, the Robot Tactile Olympiad, is the tactile manipulation benchmark [1].",
    ]),
    "test_fault_persistent_server_error": (QUESTION, False, 2, [("status", 500, {})] * 3),
}


def _run(name: str, key: str, *, base_url: str | None = None, sleeps: list[float] | None = None):
    question, stream, retries, _ = SCENARIOS[name]
    client = OpenAIChatClient(_settings(key=key, base_url=base_url, retries=retries),
                              sleep=(sleeps.append if sleeps is not None else lambda s: None), jitter=lambda: 1.0)
    tokens: list[str] = []
    result = generate(question, HITS, client=client, prompts=load_prompts(),
                      on_token=tokens.append if stream else None)
    return result, tokens


@pytest.mark.vcr
def test_live_cited_answer(vcr, recording):
    """Hand-written cassette (re-recordable): a normal answer citing the RoTO abstract."""
    result, _ = _run("test_live_cited_answer", _key(recording))
    assert not result.refused
    assert 0 in result.cited  # the RoTO abstract is source [1]
    assert all(0 <= i < len(HITS) for i in result.cited)
    assert "RoTO" in result.text
    assert result.usage.get("total_tokens", 0) > 0
    assert recording or vcr.all_played


@pytest.mark.vcr
def test_live_refusal(vcr, recording):
    """Hand-written cassette (re-recordable): the sources cannot answer, so the model refuses."""
    result, _ = _run("test_live_refusal", _key(recording))
    assert result.refused and result.text == REFUSAL
    assert result.cited == [] and result.warnings == []
    assert recording or vcr.all_played


@pytest.mark.vcr
def test_live_streamed_answer(vcr, recording):
    """Hand-written cassette (re-recordable): the answer arrives as server-sent events."""
    result, tokens = _run("test_live_streamed_answer", _key(recording))
    assert len(tokens) > 1
    assert result.repair is not None or "".join(tokens) == result.raw_text
    assert 0 in result.cited and not result.refused
    assert result.usage.get("total_tokens", 0) > 0  # stream_options.include_usage honoured
    assert json.loads(vcr.requests[0].body)["stream"] is True
    assert recording or vcr.all_played


@pytest.fixture
def handwritten(recording):
    if recording:
        pytest.skip("hand-written fault cassette: regenerate with `python tests/test_llm_cassettes.py`")


@pytest.mark.vcr
def test_fault_invented_citation(vcr, handwritten):
    """Hand-written cassette: invented citations survive the repair call and are stripped with warnings."""
    result, _ = _run("test_fault_invented_citation", _FAKE_KEY)
    assert result.text == "RoTO is the benchmark [1]."
    assert result.raw_text == "RoTO is the benchmark [1][4]."
    assert result.cited == [0]
    assert result.warnings == [
        "citation check: citation [4] names source 4, which was not given (only sources 1 to 3 exist)"
    ]
    assert result.repair["fixed"] is False
    assert "citation [7] names source 7" in json.loads(vcr.requests[1].body)["messages"][-1]["content"]
    assert vcr.all_played


@pytest.mark.vcr
def test_fault_uncited_answer_is_repaired(vcr, handwritten):
    """Hand-written cassette: an uncited sentence triggers one repair call that fixes it."""
    result, _ = _run("test_fault_uncited_answer_is_repaired", _FAKE_KEY)
    assert result.text == "The benchmark is called RoTO [1]. It targets tactile-based manipulation [1]."
    assert result.warnings == [] and result.repair["fixed"] is True
    assert result.usage["total_tokens"] == 300  # both calls counted
    assert len(vcr.requests) == 2 and vcr.all_played


@pytest.mark.vcr
def test_fault_rate_limit_then_success(vcr, handwritten):
    """Hand-written cassette: a 429 with Retry-After: 2, then the answer."""
    sleeps: list[float] = []
    result, _ = _run("test_fault_rate_limit_then_success", _FAKE_KEY, sleeps=sleeps)
    assert sleeps == [2.0]
    assert result.cited == [0] and result.warnings == []
    assert vcr.all_played


@pytest.mark.vcr
def test_fault_persistent_server_error(vcr, handwritten):
    """Hand-written cassette: three 500s, then a clean ProviderError naming OpenAI."""
    sleeps: list[float] = []
    with pytest.raises(ProviderError) as info:
        _run("test_fault_persistent_server_error", _FAKE_KEY, sleeps=sleeps)
    assert str(info.value) == "OpenAI (model gpt-4o-mini): HTTP 500: scripted failure after 3 attempts"
    assert info.value.exit_code == 3
    assert sleeps == [0.5, 1.0]
    assert vcr.all_played


def test_cassettes_hold_no_secrets():
    files = sorted(CASSETTES.glob("*.yaml"))
    assert len(files) == len(SCENARIOS)
    for path in files:
        text = path.read_text(encoding="utf-8")
        lowered = text.lower()
        assert "authorization" not in lowered and "bearer" not in lowered and "sk-" not in lowered, path
        uris = [line.split("uri:", 1)[1].strip() for line in text.splitlines() if line.strip().startswith("uri:")]
        assert uris and set(uris) == {"https://api.openai.com/v1/chat/completions"}, path


def _write_handwritten() -> None:
    """Regenerate every cassette from SCENARIOS by recording against the local fake server."""
    import vcr as vcrpy

    sys.path.insert(0, str(Path(__file__).parent))
    from openai_server import FakeOpenAI, Reply, Status

    config = _vcr_settings()
    CASSETTES.mkdir(parents=True, exist_ok=True)
    for name, (_, _, _, script) in SCENARIOS.items():
        steps = [Status(s[1], s[2]) if isinstance(s, tuple) else Reply(s, model="gpt-4o-mini-2024-07-18")
                 for s in script]
        path = CASSETTES / f"{name}.yaml"
        path.unlink(missing_ok=True)
        with FakeOpenAI(steps) as server, vcrpy.use_cassette(str(path), record_mode="all", **config):
            try:
                _run(name, "sk-placeholder", base_url=server.base_url)
            except ProviderError:
                pass
        local = server.base_url.removesuffix("/v1")
        body = path.read_text(encoding="utf-8").replace(local, "https://api.openai.com")
        header = (f"# HAND-WRITTEN cassette for tests/test_llm_cassettes.py::{name}.\n"
                  "# The replies were scripted (no OpenAI server was reachable); the requests are what the\n"
                  "# client really sends. Regenerate: .venv/bin/python tests/test_llm_cassettes.py\n")
        path.write_text(header + body, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    _write_handwritten()
