"""Answer with an LLM: OpenAI or any OpenAI-compatible chat server, citations enforced.

`generate` prompts the model with numbered sources, checks the citations of its reply and
makes one repair call when they fail. `OpenAIChatClient` does the talking: llama-index's `OpenAILike` does the HTTP; its own retries (and the OpenAI SDK's) are switched
off so that backoff is ours: 408/409/429/5xx, timeouts and dropped connections are retried
with exponential backoff, honouring `Retry-After`; after the last try a `ProviderError`
naming the provider is raised. llama-index is imported only when a request is made.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Protocol
from urllib.parse import urlsplit

from rag.citations import CitationCheck, check_citations
from rag.config import Settings
from rag.errors import (
    ConfigError,
    ProviderAuthError,
    ProviderError,
    ProviderRateLimitError,
    ProviderTimeoutError,
)
from rag.offline import REFUSAL
from rag.prompt import Prompts, build_messages, build_repair
from rag.types import Hit

OPENAI_API_BASE = "https://api.openai.com/v1"
BACKOFF_BASE = 0.5  # seconds before the first retry; doubles each time
BACKOFF_MAX = 8.0
MAX_RETRY_AFTER = 60.0  # a server asking us to wait longer than this ends the retries
RETRY_STATUSES = frozenset({408, 409, 429})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

Message = dict[str, str]
TokenSink = Callable[[str], None]


@dataclass
class Completion:
    """One chat completion: the text and what it cost."""

    text: str
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0
    attempts: int = 1


class ChatClient(Protocol):
    """What the answerer needs from an LLM; tests pass their own."""

    model: str

    def chat(self, messages: list[Message], *, on_token: TokenSink | None = None) -> Completion:
        """Return the model's reply, calling `on_token` with each piece when streaming."""
        ...


def provider_name(settings: Settings) -> str:
    """Name the provider for messages: OpenAI, or the server's URL without credentials."""
    base = settings.openai_base_url
    if not base:
        return "OpenAI"
    parts = urlsplit(base)
    host = parts.hostname or base
    if host == "api.openai.com":
        return "OpenAI"
    port = f":{parts.port}" if parts.port else ""
    return f"OpenAI-compatible server {parts.scheme}://{host}{port}{parts.path}".rstrip("/")


@dataclass
class _Failure:
    error: type[ProviderError]
    reason: str
    retryable: bool
    retry_after: float | None = None


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms` or `Retry-After`), if it said."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _server_message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        msg = inner.get("message") if isinstance(inner, dict) else inner
        if msg:
            return str(msg)
    return ""


def _classify(err: BaseException) -> _Failure | None:
    """Map a transport exception to a failure, or None when it is not a transport error."""
    import httpx
    import openai

    if isinstance(err, (openai.APITimeoutError, httpx.TimeoutException)):
        return _Failure(ProviderTimeoutError, "timed out", True)
    if isinstance(err, (openai.APIConnectionError, httpx.TransportError)):
        return _Failure(ProviderError, "connection failed", True)
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        detail = _server_message(err)
        reason = f"HTTP {status}" + (f": {detail}" if detail else "")
        retry_after = _retry_after(err.response.headers)
        if status == 429:
            return _Failure(ProviderRateLimitError, reason, True, retry_after)
        if status in (401, 403):
            return _Failure(ProviderAuthError, reason, False)
        return _Failure(ProviderError, reason, status in RETRY_STATUSES or status >= 500, retry_after)
    if isinstance(err, openai.APIError):
        return _Failure(ProviderError, f"bad response: {err}", False)
    if isinstance(err, (IndexError, KeyError, AttributeError)):
        return _Failure(ProviderError, f"malformed response ({type(err).__name__})", False)
    return None


class OpenAIChatClient:
    """Chat with OpenAI or an OpenAI-compatible server through llama-index's OpenAILike."""

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        if not settings.openai_base_url and not settings.openai_api_key:
            raise ConfigError(
                "LLM answers need OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a compatible server)",
                hint="or use --mode offline",
            )
        if settings.llm_timeout <= 0:
            raise ConfigError(f"llm_timeout must be positive, got {settings.llm_timeout}")
        if settings.llm_max_retries < 0:
            raise ConfigError(f"llm_max_retries must be >= 0, got {settings.llm_max_retries}")
        self.settings = settings
        self.model = settings.llm_model
        self.provider = provider_name(settings)
        self._sleep = sleep
        self._jitter = jitter
        self._llm: Any = None

    def _client(self) -> Any:
        if self._llm is None:
            from rag.offline_env import offline_llama_index

            offline_llama_index()
            from llama_index.llms.openai_like import OpenAILike

            s = self.settings
            self._llm = OpenAILike(
                model=s.llm_model,
                api_base=s.openai_base_url or OPENAI_API_BASE,
                # Local servers usually need no key, but the SDK insists on one.
                api_key=s.openai_api_key or "no-key",
                is_chat_model=True,
                is_function_calling_model=False,
                context_window=128_000,
                temperature=0.0,
                timeout=s.llm_timeout,
                max_retries=0,  # retries are ours (see chat)
                additional_kwargs={"stream_options": {"include_usage": True}},
            )
        return self._llm

    def _redact(self, text: str) -> str:
        key = self.settings.openai_api_key
        if key:
            text = text.replace(key, "***")
        text = " ".join(_CONTROL.sub(" ", text).split())
        return text if len(text) <= 300 else text[:299] + "\u2026"

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        backoff = min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (attempt - 1))
        return backoff * (0.5 + 0.5 * self._jitter())

    def _fail(self, failure: _Failure, attempts: int, cause: BaseException) -> ProviderError:
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        msg = f"{self.provider} (model {self.model}): {self._redact(failure.reason)} {tries}"
        return failure.error(msg)

    def chat(self, messages: list[Message], *, on_token: TokenSink | None = None) -> Completion:
        """Send `messages`, retrying transient failures; stream to `on_token` when given."""
        from llama_index.core.llms import ChatMessage

        llm = self._client()
        chat_messages = [ChatMessage(role=m["role"], content=m["content"]) for m in messages]
        max_attempts = self.settings.llm_max_retries + 1
        started = time.perf_counter()  # latency includes retries and their waits
        for attempt in range(1, max_attempts + 1):
            streamed = False
            try:
                if on_token is None:
                    resp = llm.chat(chat_messages)
                    text = resp.message.content or ""
                    usage = _usage(resp.additional_kwargs)
                    model = getattr(resp.raw, "model", None)
                else:
                    parts: list[str] = []
                    usage, model = {}, None
                    for chunk in llm.stream_chat(chat_messages):
                        if chunk.delta:
                            streamed = True
                            parts.append(chunk.delta)
                            on_token(chunk.delta)
                        usage = _usage(chunk.additional_kwargs) or usage
                        model = getattr(chunk.raw, "model", None) or model
                    text = "".join(parts)
            except Exception as err:  # noqa: BLE001 - narrowed by _classify, others re-raised
                failure = _classify(err)
                if failure is None:
                    raise
                if streamed:
                    failure.reason = f"stream interrupted ({failure.reason})"
                    raise self._fail(failure, attempt, err) from err
                if not failure.retryable or attempt == max_attempts:
                    raise self._fail(failure, attempt, err) from err
                if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER:
                    failure.reason += f" (server asked to wait {failure.retry_after:.0f}s)"
                    raise self._fail(failure, attempt, err) from err
                self._sleep(self._delay(attempt, failure.retry_after))
                continue
            latency = (time.perf_counter() - started) * 1000
            return Completion(text=text, model=model, usage=usage, latency_ms=latency, attempts=attempt)
        raise AssertionError("unreachable: the loop returns or raises")


def _usage(counts: dict[str, Any] | None) -> dict[str, int]:
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    if not counts:
        return {}
    return {k: int(counts[k]) for k in keys if isinstance(counts.get(k), int)}

@dataclass
class LLMResult:
    """What the model said, validated: the pieces `answer()` turns into an `Answer`."""

    text: str
    raw_text: str
    cited: list[int]  # 0-based hit indices
    refused: bool
    model: str | None
    warnings: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    repair: dict[str, Any] | None = None  # why a repair call was made, and the first reply


def answer_hash(settings: Settings, prompts: Prompts) -> str:
    """Hash of the retrieval and model settings plus the prompt texts."""
    spec = {"settings": settings.hash(), "prompts": prompts.digest(), "model": settings.llm_model}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _add_usage(total: dict[str, int], more: dict[str, int]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0) + value


def generate(
    question: str,
    hits: list[Hit],
    *,
    client: ChatClient,
    prompts: Prompts,
    on_token: TokenSink | None = None,
) -> LLMResult:
    """Ask the model about `hits`, enforce citations, and make one repair call if they fail.

    Only the first call is streamed to `on_token`; the repair reply replaces it afterwards.
    """
    if not hits:
        return LLMResult(
            text=REFUSAL, raw_text="", cited=[], refused=True, model=client.model,
            warnings=["no sources were retrieved, so the LLM was not asked"],
        )
    k = len(hits)
    messages = build_messages(question, hits, prompts)
    first: Completion = client.chat(messages, on_token=on_token)
    usage: dict[str, int] = {}
    _add_usage(usage, first.usage)
    timings = {"llm": round(first.latency_ms, 2)}
    check: CitationCheck = check_citations(first.text, k)
    final, final_check, repair = first, check, None

    if not check.ok and not check.refused:
        problems = check.problems()
        follow_up = messages + [
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": build_repair(problems, k, prompts)},
        ]
        final = client.chat(follow_up)
        _add_usage(usage, final.usage)
        timings["llm_repair"] = round(final.latency_ms, 2)
        final_check = check_citations(final.text, k)
        repair = {"problems": problems, "raw_text": first.text, "fixed": final_check.ok}

    warnings = [f"citation check: {p}" for p in final_check.problems()]
    return LLMResult(
        text=final_check.text,
        raw_text=final.text,
        cited=[] if final_check.refused else [n - 1 for n in final_check.cited],
        refused=final_check.refused,
        model=final.model or first.model or client.model,
        warnings=warnings,
        usage=usage,
        timings_ms=timings,
        repair=repair,
    )
