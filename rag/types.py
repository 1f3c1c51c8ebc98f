"""The nouns of the pipeline: documents, chunks, hits, citations and answers.

These types are a public contract (Python API and `--json`): add fields, never rename or drop.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Document:
    """One unique abstract, with every file it was found in."""

    id: str
    text: str  # original text, for display and citation
    label: str  # short readable name used in citations
    sources: list[str] = field(default_factory=list)
    title: str | None = None
    authors: str | None = None
    url: str | None = None
    year: str | None = None
    venue: str | None = None
    external_id: str | None = None


@dataclass
class Chunk:
    """A piece of a document that is embedded and searched."""

    id: str
    doc_id: str
    n: int  # chunk number within the document, from 0
    text: str  # original text
    start: int  # character offsets into Document.text
    end: int


@dataclass
class Hit:
    """One retrieved chunk (the best chunk of a distinct document)."""

    doc_id: str
    title: str  # the document's title, or its label when it has none
    text: str  # the chunk's original text
    score: float  # fused reciprocal-rank score; higher is better
    chunk_id: str = ""
    chunk: int = 0
    start: int = 0
    end: int = 0
    label: str = ""
    sources: list[str] = field(default_factory=list)
    dense_score: float | None = None  # cosine similarity, when the dense retriever found it
    lexical_score: float | None = None  # BM25 score, when the lexical retriever found it
    url: str | None = None
    n_chunks: int = 1  # chunks of the whole document
    authors: str | None = None  # as given in the record, names separated by commas
    year: str | None = None
    venue: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Citation:
    """A source the answer cites, numbered as in the answer text."""

    n: int
    doc_id: str
    title: str
    text: str  # the cited passage: a chunk, or (offline) the consecutive chunks of one abstract it quotes
    score: float
    chunk_id: str = ""  # the passage's chunk id; ids joined by "+" when it spans several chunks
    label: str = ""
    url: str | None = None
    authors: str | None = None
    year: str | None = None
    venue: str | None = None
    dense_score: float | None = None  # the hit's cosine similarity to the question, when known

    @classmethod
    def from_hit(cls, n: int, hit: Hit, *, chunk_id: str | None = None, text: str | None = None) -> "Citation":
        """Cite `hit` as source n (the chunk quoted may be another chunk of the same document)."""
        return cls(n=n, doc_id=hit.doc_id, title=hit.title, text=hit.text if text is None else text,
                   score=hit.score, chunk_id=hit.chunk_id if chunk_id is None else chunk_id, label=hit.label,
                   url=hit.url, authors=hit.authors, year=hit.year, venue=hit.venue, dense_score=hit.dense_score)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Answer:
    """A grounded answer: text with [n] markers, its citations, and every retrieved source."""

    question: str
    text: str
    citations: list[Citation]
    refused: bool
    mode: str  # "offline" or "llm"
    sources: list[Hit]
    raw_text: str = ""  # the text as produced before validation
    warnings: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    settings_hash: str = ""
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    # LLM mode: why a citation-repair call was made, the first reply, and whether it fixed them.
    repair: dict[str, Any] | None = None
    # LLM mode: every HTTP request made, retries included: {"call": "answer"/"repair",
    # "attempt": n, "outcome": "ok" or why it failed, "ms": its duration}.
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape used by `rag ask --json`: `answer` is the answer text."""
        return {
            "question": self.question,
            "answer": self.text,
            "mode": self.mode,
            "refused": self.refused,
            "citations": [c.to_dict() for c in self.citations],
            "sources": [h.to_dict() for h in self.sources],
            "timings_ms": self.timings_ms,
            "raw_text": self.raw_text,
            "warnings": self.warnings,
            "settings_hash": self.settings_hash,
            "model": self.model,
            "usage": self.usage,
            "repair": self.repair,
            "attempts": self.attempts,
        }


@dataclass
class Problem:
    """Something skipped during ingest, with where and why."""

    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.reason}"


@dataclass
class IngestReport:
    """What one ingest run did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks_embedded: int = 0  # by the embedding engine in this run
    chunks_cached: int = 0  # written with a vector from the embedding cache
    tokens_embedded: int = 0
    documents: int = 0
    skipped: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    kept_sources: list[str] = field(default_factory=list)  # --rebuild: files from earlier ingests, read again
    dropped_sources: list[str] = field(default_factory=list)  # --rebuild: files from earlier ingests, now gone

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = [str(p) for p in self.skipped]
        return d
