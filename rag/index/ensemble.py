"""More English models' chunk vectors: the fourth and fifth rankings of the hybrid retriever.

One vector per chunk from all-MiniLM-L6-v2 (`rag.index.minilm_onnx`), computed when the lexical
index is rebuilt (through the embedding cache, under the model's own name, so each chunk text
is embedded once) and saved beside it. At question time the question gets a MiniLM vector too
and chunks are ranked by cosine (an exact scan: 5,000 abstracts are 2 MB of vectors).

Why a second model: the bundled multilingual e5-small matches reworded English questions to
abstracts poorly among thousands of papers; MiniLM, trained on other data (English question,
answer and paraphrase pairs), fails on different questions, and fusing both rankings finds more
gold abstracts than either (eval/README.md). MiniLM reads English only: a Chinese question is
ranked through its dictionary translation (`rag.index.translate.english_query`).

A third, all-mpnet-base-v2 (`MPNetVectors`, `paraphrase_model`), ranks English questions only: it
finds reworded questions' abstracts best of the three, but through a Chinese question's rough
dictionary translation it found fewer than without it (eval/README.md).
"""
from __future__ import annotations

import threading
from functools import cached_property

import numpy as np

from rag.errors import ConfigError
from rag.index.mpnet_onnx import ENGINE_NAME as PARAPHRASE_ENGINE  # noqa: F401 - the engine ingest uses, re-exported
from rag.index.sentences import SentenceIndex

ENSEMBLE_FILE = "minilm.json"
ENSEMBLE_VECTORS_FILE = "minilm.npy"
MPNET_FILE = "mpnet.json"
MPNET_VECTORS_FILE = "mpnet.npy"


class ChunkVectors(SentenceIndex):
    """One second-model vector per chunk (the ranking is `SentenceIndex.rank` with one unit per chunk)."""

    META_FILE = ENSEMBLE_FILE
    VECTORS_FILE = ENSEMBLE_VECTORS_FILE
    KEEP_TEXTS = False  # the chunk texts are in the store

    @staticmethod
    def units(text: str) -> list[str]:
        return [text] if text.strip() else []

    @cached_property
    def _rows(self) -> dict[str, int]:
        return {cid: i for i, cid in enumerate(self.chunk_ids)}

    def similarities(self, query_vector, chunk_ids: list[str]) -> list[float | None]:
        """Cosine of each chunk's stored vector to a question vector (None for a chunk without one)."""
        q = np.asarray(query_vector, dtype=np.float32)
        return [float(self.vectors[self._rows[c]] @ q) if c in self._rows else None for c in chunk_ids]


class MPNetVectors(ChunkVectors):
    """One all-mpnet-base-v2 vector per chunk: the English paraphrase ranking (`rag.index.mpnet_onnx`)."""

    META_FILE = MPNET_FILE
    VECTORS_FILE = MPNET_VECTORS_FILE


_ENGINES: dict[str, object] = {}
_ENGINE_LOCK = threading.Lock()


def _shared(key: str, build, missing: type[Exception], model: str, weight: str):
    """One engine per process for `key` (reading the weights and building the graph costs ~0.3-1 s).

    A missing or damaged model package is a `ConfigError` naming the fix."""
    with _ENGINE_LOCK:
        if key not in _ENGINES:
            try:
                _ENGINES[key] = build()
            except missing as e:
                raise ConfigError(f"the retrieval model {model} cannot be loaded: {e}",
                                  hint=f"reinstall rag (`make install`), or set {weight} = 0 to search "
                                       "without it") from e
        return _ENGINES[key]


def second_model():
    """The shared all-MiniLM-L6-v2 engine (the fourth ranking; also the answerer's second opinion)."""
    from rag.index.minilm_onnx import MiniLMMissing, MiniLMOnnx

    return _shared("minilm", MiniLMOnnx, MiniLMMissing, "all-MiniLM-L6-v2", "ensemble_weight")


def paraphrase_available() -> bool:
    """True when the paraphrase model's wheels are installed (see `rag.index.mpnet_onnx.installed`)."""
    from rag.index.mpnet_onnx import installed

    return installed()


def paraphrase_model(*, bulk: bool = False):
    """The shared all-mpnet-base-v2 engine (the English paraphrase ranking; unpacked on first use):
    float32 for questions, int8 matrix products for the chunks an ingest embeds (`bulk`)."""
    from rag.index.mpnet_onnx import MPNetMissing, MPNetOnnx

    if bulk:
        return _shared("mpnet-int8", MPNetOnnx, MPNetMissing, "all-mpnet-base-v2", "paraphrase_weight")
    return _shared("mpnet", lambda: MPNetOnnx(int8=False), MPNetMissing, "all-mpnet-base-v2", "paraphrase_weight")
