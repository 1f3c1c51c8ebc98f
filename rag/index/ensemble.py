"""A second English model's chunk vectors: the fourth ranking of the hybrid retriever.

One vector per chunk from all-MiniLM-L6-v2 (`rag.index.minilm_onnx`), computed when the lexical
index is rebuilt (through the embedding cache, under the model's own name, so each chunk text
is embedded once) and saved beside it. At question time the question gets a MiniLM vector too
and chunks are ranked by cosine (an exact scan: 5,000 abstracts are 2 MB of vectors).

Why a second model: the bundled multilingual e5-small matches reworded English questions to
abstracts poorly among thousands of papers; MiniLM, trained on other data (English question,
answer and paraphrase pairs), fails on different questions, and fusing both rankings finds more
gold abstracts than either (eval/README.md). MiniLM reads English only: a Chinese question is
ranked through its dictionary translation (`rag.index.translate.english_query`).
"""
from __future__ import annotations

import threading
from functools import cached_property

import numpy as np

from rag.errors import ConfigError
from rag.index.sentences import SentenceIndex

ENSEMBLE_FILE = "minilm.json"
ENSEMBLE_VECTORS_FILE = "minilm.npy"


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


_ENGINE = None
_ENGINE_LOCK = threading.Lock()


def second_model():
    """The shared MiniLM engine (built once per process: ~0.3 s to read 90 MB and build the graph).

    A missing or damaged model package is a `ConfigError` naming the fix."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            from rag.index.minilm_onnx import MiniLMMissing, MiniLMOnnx

            try:
                _ENGINE = MiniLMOnnx()
            except MiniLMMissing as e:
                raise ConfigError(f"the second retrieval model (all-MiniLM-L6-v2) cannot be loaded: {e}",
                                  hint="reinstall rag (`make install`), or set ensemble_weight = 0 to search "
                                       "without it") from e
        return _ENGINE

