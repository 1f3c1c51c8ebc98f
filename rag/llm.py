"""The LLM transport: OpenAI or any OpenAI-compatible chat server.

`OpenAIChatClient` does the talking (prompting and citation checks live in rag.answering):
llama-index's `OpenAILike` does the HTTP; its own retries (and the OpenAI SDK's) are switched
off so that backoff is ours: 408/409/429/5xx, timeouts and dropped connections are retried
with exponential backoff, honouring `Retry-After`; after the last try a `ProviderError`
naming the provider is raised. llama-index is imported only when a request is made.

Faults get their own `ProviderError` subclass: an unknown host or a refused connection is a
`ProviderConnectionError`, a body that is not a chat completion a `ProviderResponseError`, and
a stream that breaks off (an error after the first token, or an end without a finish reason) a
`ProviderStreamError` - a partial reply is never returned as if it were complete. Error
messages, their causes and the SDK's log records never hold the API key or URL credentials.
"""
from __future__ import annotations

import errno
import json
import logging
import random
import socket
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Callable, NoReturn, Protocol
from urllib.parse import urlsplit

from rag.config import Settings
from rag.errors import (
    ConfigError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from rag.offline_env import offline_llama_index
from rag.text import one_line, redact

OPENAI_API_BASE = "https://api.openai.com/v1"
BACKOFF_BASE = 0.5  # seconds before the first retry; doubles each time
BACKOFF_MAX = 8.0
MAX_RETRY_AFTER = 60.0  # a server asking us to wait longer than this ends the retries
RETRY_STATUSES = frozenset({408, 409, 429})
# Finish reasons that mean the provider stopped the reply before the model finished it.
CUT_SHORT = frozenset({"length", "content_filter"})

Message = dict[str, str]
TokenSink = Callable[[str], None]


@dataclass
class Completion:
    """One chat completion: the text and what it cost."""

    text: str
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0  # every attempt and the waits between them
    attempts: int = 1
    finish_reason: str | None = None
    # One entry per HTTP request made for this completion, failed ones first:
    # {"attempt": n, "outcome": "ok" or why it failed, "ms": its duration}.
    tries: list[dict[str, Any]] = field(default_factory=list)


def _timeouts(settings: Settings) -> Any:
    """The httpx timeouts of one request: connect, and the wait for each next byte."""
    import httpx

    return httpx.Timeout(settings.llm_timeout, connect=settings.llm_connect_timeout)


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
    hint: str | None = None
    counted: bool = True  # end the message with "after N attempts"


class ProviderCause(Exception):
    """The transport error behind a `ProviderError`, described with secrets removed."""

    def __repr__(self) -> str:
        return str(self)


class _SinkFailed(Exception):
    """Wraps an exception raised by the caller's `on_token`, so it is never taken for a provider fault."""


class _RedactLogs(logging.Filter):
    """Remove API keys and URL credentials from the OpenAI SDK's and httpx's log records."""

    secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message, *self.secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info:  # httpx puts the full URL in its exception messages
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info), *self.secrets)
            record.exc_info = None
        return True


_LOG_FILTER = _RedactLogs()


def _guard_logs(secrets: tuple[str, ...]) -> None:
    _RedactLogs.secrets.update(secrets)
    for name in ("openai._base_client", "openai._response", "httpx"):
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)


def _chain(err: BaseException) -> list[BaseException]:
    """The exception and its causes/contexts, outermost first."""
    out: list[BaseException] = []
    while err is not None and len(out) < 12 and err not in out:
        out.append(err)
        err = err.__cause__ or err.__context__
    return out


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


def _classify(err: BaseException, host: str | None = None) -> _Failure | None:
    """Map a transport exception to a failure, or None when it is not a transport error."""
    import httpx
    import openai

    if isinstance(err, (openai.APITimeoutError, httpx.TimeoutException)):
        return _Failure(ProviderTimeoutError, "timed out", True)
    if isinstance(err, (openai.APIConnectionError, httpx.TransportError)):
        causes = _chain(err)
        dns = next((e for e in causes if isinstance(e, socket.gaierror)), None)
        if dns is not None:
            # EAI_AGAIN is a resolver hiccup; any other failure means the name does not exist.
            again = dns.errno == getattr(socket, "EAI_AGAIN", -3)
            return _Failure(ProviderConnectionError, f"cannot resolve host {host or '(unknown)'!r}", again,
                            hint="check the host name in OPENAI_BASE_URL")
        if any(isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED
               for e in causes):
            return _Failure(ProviderConnectionError, "connection failed", True,
                            hint="the connection was refused: is the server running? check OPENAI_BASE_URL")
        if any(isinstance(e, httpx.RemoteProtocolError) for e in causes):
            return _Failure(ProviderError, "connection closed before the response was complete", True)
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
    if isinstance(err, json.JSONDecodeError):
        return _Failure(ProviderResponseError, f"malformed response: the body is not valid JSON ({err.msg})", False)
    if isinstance(err, (IndexError, KeyError, AttributeError, TypeError)):
        # The SDK hands back what it could not parse (a string, a dict without `choices`) and
        # llama-index then trips over it.
        return _Failure(ProviderResponseError, "malformed response: the body is not a chat completion", False)
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
        if not settings.llm_configured:
            raise ConfigError(
                "LLM answers need OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a compatible server)",
                hint="or use --mode offline",
            )
        self.settings = settings
        self.model = settings.llm_model
        self.provider = provider_name(settings)
        url = urlsplit(settings.openai_base_url or OPENAI_API_BASE)
        self.host = url.hostname
        # What no message may show: the key, and a password given in the URL (servers echo both).
        # (A password under 4 characters is left alone: masking it would garble every message.)
        password = url.password if url.password and len(url.password) >= 4 else None
        self.secrets = tuple(s for s in (settings.openai_api_key, password) if s)
        self._sleep = sleep
        self._jitter = jitter
        self._llm: Any = None

    def _client(self) -> Any:
        if self._llm is None:
            offline_llama_index()
            _guard_logs(self.secrets)
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
                max_tokens=s.llm_max_tokens,
                timeout=s.llm_timeout,
                max_retries=0,  # retries are ours (see chat)
                # `timeout` is a request option of the SDK, never part of the body. httpx applies
                # the read timeout to each read, so while streaming it counts from the last byte.
                additional_kwargs={"stream_options": {"include_usage": True}, "timeout": _timeouts(s)},
            )
        return self._llm

    def _redact(self, text: str) -> str:
        return one_line(redact(text, *self.secrets), 300)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        backoff = min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (attempt - 1))
        return backoff * (0.5 + 0.5 * self._jitter())

    def _fail(self, failure: _Failure, attempts: int, cause: BaseException | None) -> ProviderError:
        """Build the error; its `__cause__` is a redacted description of `cause` (see `raise_`)."""
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if failure.counted else ""
        msg = f"{self.provider} (model {self.model}): {self._redact(failure.reason)}{tries}"
        error = failure.error(msg, hint=failure.hint)
        if cause is not None:
            described = " <- ".join(f"{type(e).__name__}: {e}" for e in _chain(cause))
            error.__cause__ = ProviderCause(self._redact(described))
        return error

    def _raise(self, failure: _Failure, attempts: int, cause: BaseException) -> NoReturn:
        error = self._fail(failure, attempts, cause)
        raise error from error.__cause__  # the redacted description, never the SDK's exception

    def chat(self, messages: list[Message], *, on_token: TokenSink | None = None) -> Completion:
        """Send `messages`, retrying transient failures; stream to `on_token` when given."""
        from llama_index.core.llms import ChatMessage

        llm = self._client()
        chat_messages = [ChatMessage(role=m["role"], content=m["content"]) for m in messages]
        max_attempts = self.settings.llm_max_retries + 1
        started = time.perf_counter()  # latency includes retries and their waits
        tries: list[dict[str, Any]] = []
        for attempt in range(1, max_attempts + 1):
            streamed = 0
            t_attempt = time.perf_counter()
            try:
                if on_token is None:
                    resp = llm.chat(chat_messages)
                    text = resp.message.content or ""
                    usage = _usage(resp.additional_kwargs)
                    model = getattr(resp.raw, "model", None)
                    finish = _finish_reason(resp.raw)
                else:
                    parts: list[str] = []
                    usage, model, finish = {}, None, None
                    for chunk in llm.stream_chat(chat_messages):
                        if chunk.delta:
                            streamed += 1
                            parts.append(chunk.delta)
                            try:
                                on_token(chunk.delta)
                            except Exception as sink_err:  # noqa: BLE001 - re-raised below, untouched
                                raise _SinkFailed() from sink_err
                        usage = _usage(chunk.additional_kwargs) or usage
                        model = getattr(chunk.raw, "model", None) or model
                        finish = _finish_reason(chunk.raw) or finish
                    text = "".join(parts)
                    if finish is None:
                        # The SDK ends quietly when the connection closes without `data: [DONE]`;
                        # every complete stream names a finish reason in its last choice.
                        raise _Truncated("the stream closed without a finish reason")
            except _SinkFailed as err:
                raise err.__cause__ from None  # the caller's own error, not the provider's
            except Exception as err:  # noqa: BLE001 - narrowed by _classify, others re-raised
                if isinstance(err, _Truncated):
                    failure = _Failure(ProviderStreamError, "the stream ended before the answer was complete", True)
                else:
                    failure = _classify(err, self.host)
                if failure is None:
                    raise
                if streamed:
                    # Tokens were shown: never retry (the caller would see them twice), never
                    # return the partial text as an answer.
                    why = "it ended without finishing the answer" if isinstance(err, _Truncated) else failure.reason
                    tokens = f"{streamed} token{'s' if streamed != 1 else ''}"
                    failure = _Failure(ProviderStreamError, f"stream interrupted after {tokens}: {why}", False,
                                       counted=False)
                    self._raise(failure, attempt, err)
                tries.append({"attempt": attempt, "outcome": self._redact(failure.reason),
                              "ms": round((time.perf_counter() - t_attempt) * 1000, 2)})
                if not failure.retryable or attempt == max_attempts:
                    self._raise(failure, attempt, err)
                if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER:
                    failure.reason += f" (server asked to wait {failure.retry_after:.0f}s)"
                    self._raise(failure, attempt, err)
                self._sleep(self._delay(attempt, failure.retry_after))
                continue
            now = time.perf_counter()
            tries.append({"attempt": attempt, "outcome": "ok", "ms": round((now - t_attempt) * 1000, 2)})
            return Completion(text=text, model=model, usage=usage, latency_ms=(now - started) * 1000,
                              attempts=attempt, finish_reason=finish, tries=tries)
        raise AssertionError("unreachable: the loop returns or raises")


class _Truncated(Exception):
    """A stream that ended without a finish reason."""


def _finish_reason(raw: Any) -> str | None:
    """The finish reason of the first choice of a completion or chunk, if it has one."""
    choices = getattr(raw, "choices", None) or []
    reason = getattr(choices[0], "finish_reason", None) if choices else None
    return str(reason) if reason else None


def _usage(counts: dict[str, Any] | None) -> dict[str, int]:
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    if not counts:
        return {}
    return {k: int(counts[k]) for k in keys if isinstance(counts.get(k), int)}
