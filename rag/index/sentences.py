"""Sentence vectors: a question usually rewords one sentence of an abstract, not all of it.

Every quotable sentence of every chunk is embedded (through the embedding cache, so a sentence
is embedded once per model) when the lexical index is rebuilt, and saved beside it. Retrieval
ranks chunks by their closest sentence as a third ranking in the fusion; the offline answerer
reads the same vectors instead of embedding sentences per question.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from rag.clean import clean
from rag.text import split_sentences

SENTENCES_FILE = "sentences.json"
VECTORS_FILE = "sentences.npy"
MIN_CHARS = 20  # shorter pieces are headings or fragments, not statements


def sentences_of(text: str) -> list[str]:
    """The quotable sentences of a text."""
    return [text[a:b].strip() for a, b in split_sentences(text) if b - a >= MIN_CHARS]


@dataclass
class SentenceIndex:
    """Sentence vectors with the chunk each sentence is in."""

    META_FILE = SENTENCES_FILE
    VECTORS_FILE = VECTORS_FILE
    KEEP_TEXTS = True  # the answerer reads sentence texts; a subclass may only need the ids

    chunk_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    model: str = ""  # the engine that made the vectors ("" when not recorded: built before it was)

    @staticmethod
    def units(text: str) -> list[str]:
        """The pieces of a chunk that get a vector each."""
        return sentences_of(text)

    @classmethod
    def build(cls, chunks: Iterable[tuple[str, str]], embed: Callable[[list[str]], np.ndarray], *,
              model: str = "") -> "SentenceIndex":
        ids, texts = [], []
        for chunk_id, text in chunks:
            for s in cls.units(text):
                ids.append(chunk_id)
                texts.append(s)
        vectors = np.asarray(embed([clean(t) for t in texts]), dtype=np.float32) if texts else \
            np.zeros((0, 0), dtype=np.float32)
        return cls(ids, texts, vectors, model)

    def files(self) -> dict[str, bytes]:
        buf = io.BytesIO()
        np.save(buf, self.vectors)
        meta = json.dumps({"chunk_ids": self.chunk_ids, "texts": self.texts if self.KEEP_TEXTS else [],
                           "model": self.model}, ensure_ascii=False)
        return {self.META_FILE: meta.encode("utf-8"), self.VECTORS_FILE: buf.getvalue()}

    @classmethod
    def load(cls, folder: Path) -> "SentenceIndex":
        """The saved index, or an empty one (built by a version without sentence vectors)."""
        try:
            meta = json.loads((folder / cls.META_FILE).read_text(encoding="utf-8"))
            vectors = np.load(folder / cls.VECTORS_FILE)
            if len(vectors) != len(meta["chunk_ids"]) or (cls.KEEP_TEXTS and len(meta["texts"]) != len(vectors)):
                return cls()
            return cls(list(meta["chunk_ids"]), list(meta["texts"]), vectors.astype(np.float32, copy=False),
                       str(meta.get("model", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return cls()

    @classmethod
    def recorded_model(cls, folder: Path) -> str | None:
        """The engine named in the saved file ("" when it names none), None when there is no file."""
        try:
            return str(json.loads((folder / cls.META_FILE).read_text(encoding="utf-8")).get("model", ""))
        except (OSError, ValueError, AttributeError):
            return None

    def rank(self, query_vector: np.ndarray, n: int, *, only: frozenset[str] | None = None) -> list[tuple[str, float]]:
        """Chunks by their closest sentence to the query: (chunk_id, cosine), best first.

        `only`: the chunk ids a filter admits (others are never ranked).
        """
        if not len(self.vectors):
            return []
        sims = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        if only is not None:
            sims = np.where([cid in only for cid in self.chunk_ids], sims, -np.inf)
        best: dict[str, float] = {}
        for i in np.argsort(-sims)[: 8 * n]:
            if not np.isfinite(sims[i]):
                break
            cid = self.chunk_ids[i]
            if cid not in best:
                best[cid] = float(sims[i])
            if len(best) >= n:
                break
        return sorted(best.items(), key=lambda x: -x[1])

    def vector_of(self) -> dict[str, np.ndarray]:
        """Sentence text -> vector (for the answerer)."""
        return {t: self.vectors[i] for i, t in enumerate(self.texts)}
