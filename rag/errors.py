"""Domain errors: every failure a user can cause or meet, each with its exit code.

The CLI turns these into one-line messages; anything else escaping is a bug.
"""
from __future__ import annotations

class RagError(Exception):
    """Base class for errors the user can act on."""

    exit_code = 1
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class UsageError(RagError):
    """Bad input from the user: an empty question, k < 1, a missing path."""

    exit_code = 2


class ProviderError(RagError):
    """The LLM or embedding provider failed after its retries."""

    exit_code = 3


class ProviderTimeoutError(ProviderError):
    """The LLM provider did not answer within the timeout, on every try."""


class ProviderRateLimitError(ProviderError):
    """The LLM provider kept answering 429 (rate limited or out of quota)."""


class ProviderAuthError(ProviderError):
    """The LLM provider rejected the API key (401/403)."""

    hint = "check OPENAI_API_KEY"


class ProviderConnectionError(ProviderError):
    """The LLM provider could not be reached: its host name does not resolve, or it refused the connection."""

    hint = "check OPENAI_BASE_URL"


class ProviderResponseError(ProviderError):
    """The LLM provider answered with something that is not a chat completion (bad JSON, wrong shape)."""

    hint = "is OPENAI_BASE_URL an OpenAI-compatible /v1 endpoint?"


class ProviderStreamError(ProviderError):
    """The LLM provider's stream broke off before the answer was complete."""


class IndexError_(RagError):
    """The index is missing, corrupt, or built with other settings."""

    exit_code = 4
    hint = "run `rag ingest --rebuild`"


class ConfigError(RagError):
    """The configuration file or an environment variable is invalid."""

    exit_code = 5


class PromptError(ConfigError):
    """A prompt template in prompts/ is missing, unreadable or uses wrong placeholders."""


class BusyError(RagError):
    """Another ingest holds the index lock."""

    exit_code = 6


# Public, readable alias; the trailing underscore avoids shadowing the builtin inside this module.
RagIndexError = IndexError_
