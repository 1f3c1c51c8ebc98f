"""`rag doctor`: check the settings, the index, the models and that nothing reaches the network.

Each check returns a `Check` (pass, fail or skip, with a detail and a hint). A failed check
carries the exit code of its kind (config 5, index 4, provider 3); `rag doctor` exits with the
code of the first failure. The network checks run parts of the pipeline with Python's socket
layer blocked, so they see connections made from Python (not from native code).
"""
from __future__ import annotations

import ipaddress
import math
import os
import socket
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from rag.config import Settings, load_settings
from rag.errors import ConfigError, IndexError_, ProviderError, RagError

LLM_TIMEOUT = 5.0  # seconds for GET /models


@dataclass
class Check:
    """One line of the doctor's report."""

    name: str
    status: str  # "pass", "warn", "fail" or "skip"
    detail: str
    hint: str | None = None
    exit_code: int = 0  # the exit code of this kind of failure

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fail(name: str, err: RagError | str, *, code: int | None = None, hint: str | None = None) -> Check:
    if isinstance(err, RagError):
        return Check(name, "fail", str(err), hint or err.hint, code or err.exit_code)
    return Check(name, "fail", err, hint, code or 1)


@dataclass
class NetworkLog:
    """Connections attempted while the network was blocked."""

    attempts: list[str] = field(default_factory=list)


@contextmanager
def no_network() -> Iterator[NetworkLog]:
    """Block and record every Python-level DNS lookup and non-Unix socket connect."""
    log = NetworkLog()
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def _deny(sock: socket.socket, address: Any, real: Callable) -> Any:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return real(sock, address)
        log.attempts.append(f"connect {address}")
        raise OSError("network blocked by rag doctor")

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            ipaddress.ip_address(host.decode() if isinstance(host, bytes) else host)
            return real_getaddrinfo(host, *args, **kwargs)  # a literal address needs no lookup
        except (TypeError, ValueError):
            pass
        log.attempts.append(f"DNS lookup {host}")
        raise socket.gaierror("network blocked by rag doctor")

    socket.socket.connect = lambda self, address: _deny(self, address, real_connect)  # type: ignore[method-assign]
    socket.socket.connect_ex = lambda self, address: _deny(self, address, real_connect_ex)  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield log
    finally:
        socket.socket.connect, socket.socket.connect_ex = real_connect, real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo  # type: ignore[assignment]


def check_settings(env: dict[str, str]) -> tuple[Check, Settings | None, dict[str, str]]:
    """Load the settings; count where the non-default values came from."""
    try:
        settings, origin = load_settings(env=env)
    except ConfigError as e:
        return _fail("settings", e), None, {}
    files = sorted({o[5:] for o in origin.values() if o.startswith("file ")})
    n_env = sum(o.startswith("env ") for o in origin.values())
    where = f"config file {files[0]}" if files else "no config file"
    return Check("settings", "pass", f"valid; {where}, {n_env} from the environment"), settings, origin


def check_index(settings: Settings) -> Check:
    """The index for these settings exists, holds chunks, and its BM25 index matches it."""
    from rag.index import Index, lexical

    where = settings.chroma_url or str(Path(settings.index_dir).expanduser())
    try:
        index = Index.open(settings)
        store = index.store
        chunks = store.count()
        docs = len(index.documents())
        others = [c.name for c in store.client.list_collections() if c.name != store.name]
    except IndexError_ as e:
        return _fail("index", e)
    if chunks == 0:
        return _fail("index", f"collection {store.name} in {where} is empty", code=4, hint="run `rag ingest`")
    try:
        bm25 = lexical.stored_count(index.paths.lexical)
    except IndexError_:
        bm25 = -1
    if bm25 != chunks:
        return _fail("index", f"the BM25 index ({max(bm25, 0)} chunks) does not match the vectors ({chunks})",
                     code=4, hint="run `rag ingest`")
    extra = f"; {len(others)} other index(es) built with other settings" if others else ""
    if index.stale_extras():
        return Check("index", "warn", f"{docs} documents, {chunks} chunks in {store.name} ({where}); built by an "
                     "older version: the MiniLM or mpnet ranking's vectors (or another file kept beside BM25) are "
                     "missing, so retrieval runs without that ranking, or the mpnet vectors were made by an older "
                     "engine (used as they are)", hint="run `rag ingest` to rebuild them")
    return Check("index", "pass", f"{docs} documents, {chunks} chunks in {store.name} ({where}), "
                 f"named by the current chunking and embedding settings{extra}")


def check_embedder(settings: Settings) -> Check:
    """The embedding model loads and embeds; the bundled model must do so with the network blocked."""
    from rag.index.embedders import get_embedder

    remote = settings.embed_model.startswith("openai:")
    started = time.perf_counter()
    try:
        if remote:
            vec = get_embedder(settings.with_overrides(llm_timeout=LLM_TIMEOUT, llm_max_retries=0)).embed_query("ok")
            log = NetworkLog()
        else:
            with no_network() as log:
                vec = get_embedder(settings).embed_query("doctor check")
    except (ConfigError, ProviderError) as e:
        return _fail("embedding model", e)
    except OSError as e:
        return _fail("embedding model", f"{settings.embed_model} needed the network: {e}", code=3)
    seconds = time.perf_counter() - started
    if log.attempts:
        return _fail("embedding model", f"{settings.embed_model} tried the network: {log.attempts[0]}", code=3)
    if not len(vec) or not all(math.isfinite(float(x)) for x in vec):
        return _fail("embedding model", f"{settings.embed_model} returned an invalid vector", code=3)
    how = "through the configured provider" if remote else "offline (network blocked)"
    from rag.index.ensemble import paraphrase_available, paraphrase_model, second_model

    english, absent = [], ""
    for weight, load, model in ((settings.ensemble_weight, second_model, "all-MiniLM-L6-v2"),
                                (settings.paraphrase_weight, paraphrase_model, "all-mpnet-base-v2")):
        if weight <= 0:
            continue
        if load is paraphrase_model and not paraphrase_available():
            absent = "; all-mpnet-base-v2 is not installed (`make install` adds it): reworded questions rank worse"
            continue
        try:
            with no_network() as log2:
                load().embed(["doctor check"])
        except ConfigError as e:
            return _fail("embedding model", e)
        if log2.attempts:
            return _fail("embedding model", f"{model} tried the network: {log2.attempts[0]}", code=3)
        if load is paraphrase_model:
            agreement = int8_agreement()
            if agreement < INT8_MIN_COSINE:
                return _fail("embedding model", f"{model}'s int8 engine (it embeds chunks at ingest) gives vectors at "
                             f"cosine {agreement:.2f} to its float32 engine on this CPU (expected >= "
                             f"{INT8_MIN_COSINE}): the ranking made from them would be noise", code=3,
                             hint="set paraphrase_weight = 0, and report the CPU (`lscpu`) and onnxruntime version")
        english.append(model)
    second = (f"; {' and '.join(english)} (English rankings) loaded offline" if english else "") + absent
    return Check("embedding model", "pass", f"{settings.embed_model} loaded and embedded {how} in {seconds:.1f}s, "
                 f"dimension {len(vec)}{second}")


# The int8 engine's vectors stay at cosine >= 0.99 to float32 (tests/test_sentence_encoders.py); far
# below, ONNX Runtime's int8 kernels compute something else on this CPU (8-bit weights on a CPU with
# AVX2 but no VNNI saturated and gave 0.05).
INT8_MIN_COSINE = 0.95
_INT8_PROBE = ("We propose a method that adapts the exit threshold of an early-exit network per input, "
               "and reach a 1.7-2.1x speedup with a minimal drop in accuracy.")


def int8_agreement() -> float:
    """Cosine between mpnet's int8 (ingest) and float32 (question) vectors of one sentence."""
    from rag.index.ensemble import paraphrase_model

    a = paraphrase_model(bulk=True).embed([_INT8_PROBE])[0]
    b = paraphrase_model().embed([_INT8_PROBE])[0]
    return float(sum(float(x) * float(y) for x, y in zip(a, b)))


def check_llm(settings: Settings, origin: dict[str, str], *, timeout: float = LLM_TIMEOUT) -> Check:
    """If an LLM is configured, its server answers GET /models and lists the model."""
    from rag.answering import resolve_mode

    configured = settings.llm_configured
    mode = resolve_mode(settings)
    if not configured:
        if mode == "llm":
            return _fail("llm endpoint", "answer_mode is llm but no OPENAI_API_KEY or OPENAI_BASE_URL is set",
                         code=5, hint="set one, or use answer_mode offline")
        return Check("llm endpoint", "skip", "not configured: answers are offline (quoted sentences)")
    import openai

    from rag.llm import OPENAI_API_BASE, provider_name

    provider = provider_name(settings)
    client = openai.OpenAI(api_key=settings.openai_api_key or "no-key",
                           base_url=settings.openai_base_url or OPENAI_API_BASE, timeout=timeout, max_retries=0)
    try:
        ids = sorted(m.id for m in client.models.list())
    except openai.AuthenticationError:
        return _fail("llm endpoint", f"{provider} rejected the API key", code=3, hint="check OPENAI_API_KEY")
    except openai.APITimeoutError:
        return _fail("llm endpoint", f"{provider} did not answer within {timeout:.0f}s", code=3)
    except openai.APIConnectionError:
        return _fail("llm endpoint", f"cannot connect to {provider}", code=3, hint="is the server running?")
    except openai.APIStatusError as e:
        return _fail("llm endpoint", f"{provider} answered GET /models with HTTP {e.status_code}", code=3)
    used = "used for answers" if mode == "llm" else f"not used: answer_mode is {settings.answer_mode}"
    key = f"; key from {origin.get('openai_api_key', 'default')}" if settings.openai_api_key else ""
    if settings.llm_model not in ids:
        if len(ids) == 1:
            # A single-model server (llama.cpp's llama-server, a LM Studio model) answers whatever
            # model name a request carries, so `rag ask` works: warn, as `rag ask` would not fail.
            return Check("llm endpoint", "warn",
                         f"{provider} does not list model {settings.llm_model!r} but serves one model, {ids[0]!r}, "
                         f"which a single-model server uses for any name ({used}{key})",
                         hint=f"set RAG_LLM_MODEL={ids[0]} to name it")
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        return _fail("llm endpoint", f"{provider} does not list model {settings.llm_model!r} (it has: {shown or 'none'})",
                     code=3, hint="set RAG_LLM_MODEL to one of them")
    return Check("llm endpoint", "pass", f"{provider} answers and lists {settings.llm_model} ({used}{key})")


def check_offline_env(env_before: dict[str, str]) -> Check:
    """llama-index uses its bundled caches, hub downloads are off and its defaults are mocks."""
    from rag.offline_env import offline_llama_index

    offline_llama_index()
    from llama_index.core import Settings as LlamaSettings

    if os.environ.get("HF_HUB_OFFLINE") not in ("1", "true", "True", "TRUE", "yes", "on"):
        return _fail("offline guards", f"HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE')!r} allows hub downloads",
                     code=5, hint="unset HF_HUB_OFFLINE or set it to 1")
    notes = []
    for name in ("TIKTOKEN_CACHE_DIR", "NLTK_DATA"):
        path = Path(os.environ.get(name, ""))
        if not path.is_dir() or not any(path.iterdir()):
            return _fail("offline guards", f"{name}={path} is not llama-index's bundled cache", code=5)
        if env_before.get(name) and env_before[name] != str(path):
            notes.append(f"your {name} is overridden")
    llm, embed = type(LlamaSettings._llm).__name__, type(LlamaSettings._embed_model).__name__
    if llm != "MockLLM" or embed != "MockEmbedding":
        return _fail("offline guards", f"llama-index defaults are {llm}/{embed}, not mocks", code=5)
    detail = "HF_HUB_OFFLINE=1; tiktoken and NLTK from llama-index's bundled caches; its default LLM and embedder are mocks"
    return Check("offline guards", "pass", detail + (f" ({', '.join(notes)})" if notes else ""))


def check_retrieval_offline(settings: Settings) -> Check:
    """A search opens no network connection (embedded Chroma, telemetry off, local embeddings)."""
    if settings.chroma_url or settings.embed_model.startswith("openai:"):
        remote = "Chroma server" if settings.chroma_url else "embedding provider"
        return Check("retrieval offline", "skip", f"uses the network by configuration ({remote})")
    from rag.index import Index

    try:
        with no_network() as log:
            index = Index.open(settings)
            index.retrieve("doctor check", k=1)
    except RagError as e:
        return _fail("retrieval offline", e)
    if log.attempts:
        return _fail("retrieval offline", f"a search tried the network: {log.attempts[0]}", code=5)
    telemetry = index.store.client.get_settings().anonymized_telemetry
    if telemetry:
        return _fail("retrieval offline", "Chroma telemetry is on", code=5)
    return Check("retrieval offline", "pass", "a search opened no connection; Chroma telemetry off; "
                 "OPENAI_API_KEY is not used for embeddings")


def run_checks(*, env: dict[str, str] | None = None, timeout: float = LLM_TIMEOUT) -> list[Check]:
    """Run every check, skipping those that depend on one that failed."""
    env = dict(os.environ) if env is None else env
    first, settings, origin = check_settings(env)
    checks = [first]
    if settings is None:
        return checks
    index = check_index(settings)
    checks += [index, check_embedder(settings), check_llm(settings, origin, timeout=timeout), check_offline_env(env)]
    if index.failed:
        checks.append(Check("retrieval offline", "skip", "no index to search"))
    else:
        checks.append(check_retrieval_offline(settings))
    return checks


def exit_code(checks: list[Check]) -> int:
    """Return 0 when nothing failed, else the exit code of the first failure."""
    return next((c.exit_code or 1 for c in checks if c.failed), 0)
