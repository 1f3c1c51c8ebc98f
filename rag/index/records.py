"""Typed rows of the store: what the index knows about each stored document and chunk.

Chroma keeps metadata as flat strings and numbers; `rag.index.store` alone encodes these
records into that form and decodes them back. Everything above the store sees these types.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rag.types import Hit


@dataclass
class StoredChunk:
    """One chunk as stored: its text, place in the document, and the document's metadata."""

    id: str
    doc_id: str
    n: int
    text: str
    start: int
    end: int
    n_chunks: int  # chunks of the whole document; 0 when a crashed run left it unknown
    label: str = ""
    title: str | None = None
    sources: list[str] = field(default_factory=list)
    authors: str | None = None
    url: str | None = None
    year: str | None = None
    venue: str | None = None
    external_id: str | None = None
    # False when the record predates the stored filter keys (numeric year, venue_key, authors_key).
    keys_current: bool = True

    def to_hit(self, score: float) -> Hit:
        """A retrieval hit for this chunk with the given fused score."""
        return Hit(doc_id=self.doc_id, title=self.title or self.label, text=self.text, score=round(score, 6),
                   chunk_id=self.id, chunk=self.n, start=self.start, end=self.end, label=self.label,
                   sources=list(self.sources), url=self.url, n_chunks=self.n_chunks or 1, authors=self.authors,
                   year=self.year, venue=self.venue)


@dataclass
class StoredDocument:
    """One stored document: its metadata and the ids of the chunks present in the store."""

    id: str
    label: str
    title: str | None
    sources: list[str]
    chunk_ids: list[str]
    n_chunks: int  # chunks it should have (0: unknown)
    authors: str | None = None
    url: str | None = None
    year: str | None = None
    venue: str | None = None
    external_id: str | None = None
    keys_current: bool = True  # see StoredChunk.keys_current

    @property
    def complete(self) -> bool:
        """True when every chunk of the document is stored (no crashed run left it half-written)."""
        return self.n_chunks > 0 and self.n_chunks == len(set(self.chunk_ids))
