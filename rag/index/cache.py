"""Cache passage vectors by content hash, so the same chunk text is never embedded twice.

One small SQLite file under the index folder (``IndexPaths.embed_cache``), shared by every
collection in that folder. A row is keyed by (embedding model name, sha256 of the exact text
the model read) and holds the float32 vector. The model name is part of every key and every
lookup, so vectors of two models never mix, even when they have the same dimension. Writes
are single transactions (an interrupted run leaves whole rows or none), and the file is in
WAL mode so a reader never sees half a batch. Only passage vectors are cached: queries carry
a different prefix and are cheap to embed.
"""
from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, sha256)
) WITHOUT ROWID
"""
_LOOKUP_BATCH = 500  # stays under SQLite's bound-parameter limit


def text_key(text: str) -> str:
    """Return the sha256 hex digest of the exact text given to the model."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors of one embedding model, looked up by the hash of the text they embed."""

    def __init__(self, path: Path, model: str) -> None:
        if not model:
            raise ValueError("an embedding cache needs the model name")
        self.path = Path(path)
        self.model = model
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._db:
            self._db.execute(_SCHEMA)

    def get_many(self, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """Return {position in texts: vector} for the texts already cached for this model."""
        keys = [text_key(t) for t in texts]
        positions: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            positions.setdefault(key, []).append(i)
        unique = list(positions)
        found: dict[int, np.ndarray] = {}
        for start in range(0, len(unique), _LOOKUP_BATCH):
            part = unique[start : start + _LOOKUP_BATCH]
            rows = self._db.execute(
                f"SELECT sha256, dim, vector FROM vectors WHERE model = ? AND sha256 IN ({','.join('?' * len(part))})",
                [self.model, *part],
            )
            for key, dim, blob in rows:
                if len(blob) != 4 * dim:  # never trust a damaged row: embed again instead
                    continue
                vec = np.frombuffer(blob, dtype=np.float32)
                for i in positions[key]:
                    found[i] = vec
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors for texts in one transaction (existing rows are kept as they are)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        rows = [
            (self.model, text_key(t), int(v.shape[0]), np.ascontiguousarray(v).tobytes())
            for t, v in zip(texts, vectors)
        ]
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def count(self) -> int:
        """Number of vectors cached for this model."""
        return self._db.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (self.model,)).fetchone()[0]

    def models(self) -> list[str]:
        """Every model name with vectors in this file."""
        return [m for (m,) in self._db.execute("SELECT DISTINCT model FROM vectors ORDER BY model")]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def embed_with_cache(
    texts: Sequence[str], embed: Callable[[list[str]], np.ndarray], cache: EmbeddingCache | None
) -> tuple[np.ndarray, list[int]]:
    """Return vectors for texts, embedding only cache misses; also the positions embedded.

    New vectors are written to the cache before they are returned, so work survives a
    crash in whatever comes next (e.g. the write to the vector store).
    """
    if cache is None:
        return np.asarray(embed(list(texts)), dtype=np.float32), list(range(len(texts)))
    hits = cache.get_many(texts)
    todo = [i for i in range(len(texts)) if i not in hits]
    # Identical texts inside one batch are embedded once.
    first: dict[str, int] = {}
    for i in todo:
        first.setdefault(texts[i], i)
    fresh_idx = list(first.values())
    fresh = np.asarray(embed([texts[i] for i in fresh_idx]), dtype=np.float32) if fresh_idx else None
    if fresh is not None:
        cache.put_many([texts[i] for i in fresh_idx], fresh)
    by_text = {texts[i]: fresh[j] for j, i in enumerate(fresh_idx)} if fresh is not None else {}
    rows: list[np.ndarray] = []
    for i, t in enumerate(texts):
        rows.append(hits[i] if i in hits else by_text[t])
    out = np.stack(rows).astype(np.float32, copy=False) if rows else np.zeros((0, 0), dtype=np.float32)
    return out, fresh_idx


__all__ = ["EmbeddingCache", "embed_with_cache", "text_key"]
