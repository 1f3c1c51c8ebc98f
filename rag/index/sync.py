"""Bring the store in line with a corpus: a pure plan, then its application.

`plan_sync(corpus, stored, roots=...)` compares the documents read from disk with the stored
ones and says what to do: which documents to chunk and embed, whose metadata to change, which
to remove. It reads nothing and writes nothing, so every case is testable on plain values.
`apply_plan` carries it out against a store. Safe to interrupt and re-run: chunk ids are
deterministic (doc hash + chunk number), only chunks missing from the store are embedded, and
a document an interrupted run left half-written is completed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from rag.clean import clean
from rag.index.cache import EmbeddingCache, embed_with_cache
from rag.index.chunk import chunk_document, make_splitter
from rag.index.embedders import Embedder
from rag.index.records import StoredDocument
from rag.index.store import Store
from rag.types import Chunk, Document, IngestReport

# Document fields kept in the store besides label, title and sources.
META_FIELDS = ("authors", "url", "year", "venue", "external_id")
# Progress callback: (stage, done, total).
Progress = Callable[[str, int, int], None]
EMBED_BATCH = 8  # chunks per store write: an interrupted run loses at most this many


@dataclass
class MetadataChange:
    """New stored metadata for a document whose chunks stay as they are."""

    sources: list[str] | None = None
    label: str | None = None
    title: str | None = None
    meta: dict[str, str | None] | None = None  # authors, url, year, venue, external_id that changed


@dataclass
class SyncPlan:
    """What one ingest has to do; see `plan_sync`."""

    # Documents to chunk, with the ids of their chunks already stored (empty for new ones).
    to_chunk: list[tuple[Document, set[str]]] = field(default_factory=list)
    changes: dict[str, MetadataChange] = field(default_factory=dict)
    remove: list[str] = field(default_factory=list)
    unchanged: int = 0
    documents: dict[str, Document] = field(default_factory=dict)  # the corpus, sources merged

    @property
    def touches_store(self) -> bool:
        return bool(self.to_chunk or self.changes or self.remove)


def _under(path: str, roots: Sequence[Path]) -> bool:
    p = Path(path)
    return any(p == r or r in p.parents for r in roots)


def plan_sync(
    corpus: Iterable[Document],
    stored: Mapping[str, StoredDocument],
    *,
    roots: Sequence[Path],
    exists: Callable[[str], bool] = lambda s: Path(s).exists(),
) -> SyncPlan:
    """Compare the corpus read under `roots` with the stored documents.

    Sources: a stored file under the scanned roots that produced nothing now, or any stored
    file that no longer `exists`, is gone; other files outside the roots are kept. A stored
    document left with no source is removed.
    """
    plan = SyncPlan()
    for doc in corpus:
        old = stored[doc.id].sources if doc.id in stored else []
        keep = [s for s in old if not _under(s, roots) and exists(s)]
        plan.documents[doc.id] = dataclasses.replace(doc, sources=sorted(set(keep) | set(doc.sources)))

    for did, doc in plan.documents.items():
        entry = stored.get(did)
        if entry is None or not entry.complete:
            plan.to_chunk.append((doc, set(entry.chunk_ids) if entry else set()))
            continue
        change = MetadataChange()
        if sorted(entry.sources) != doc.sources:
            change.sources = doc.sources
        if entry.label != doc.label or (entry.title or None) != (doc.title or None):
            change.label, change.title = doc.label, doc.title  # a better labeller, or a title added
        meta = {key: getattr(doc, key) for key in META_FIELDS
                if getattr(entry, key) != getattr(doc, key) or not entry.keys_current}
        if meta:  # authors, year or venue added or corrected in the record, or stored before filters
            change.meta = meta
        if change != MetadataChange():
            plan.changes[did] = change
        else:
            plan.unchanged += 1

    for did, entry in stored.items():
        if did in plan.documents:
            continue
        left = [s for s in entry.sources if not _under(s, roots) and exists(s)]
        if not left:
            plan.remove.append(did)
        elif left != entry.sources:
            plan.changes[did] = MetadataChange(sources=left)
    return plan


def apply_plan(
    plan: SyncPlan,
    store: Store,
    report: IngestReport,
    *,
    chunk_size: int,
    chunk_overlap: int,
    embedder: Callable[[], Embedder],
    cache: Callable[[Embedder], EmbeddingCache],
    progress: Progress,
) -> int:
    """Carry out `plan` against `store`, counting what was done in `report`.

    Returns how many of the documents counted as added were already stored, half-written by
    an interrupted run (they are not new documents).

    `embedder()` is called only when something must be chunked or embedded (loading a model
    costs time); `cache(embedder)` opens the embedding cache for its vectors.
    """
    for did, change in plan.changes.items():
        store.update_document(did, sources=change.sources, label=change.label, title=change.title,
                              meta=change.meta)
        report.updated += 1
    report.unchanged += plan.unchanged

    to_embed: list[Chunk] = []
    n_chunks: dict[str, int] = {}
    if plan.to_chunk:
        engine = embedder()
        splitter = make_splitter(chunk_size, chunk_overlap, engine.count_tokens)
        for doc, have in plan.to_chunk:
            chunks = chunk_document(doc, splitter)
            missing = [c for c in chunks if c.id not in have]
            if have and not missing:  # complete, only its chunk count was unknown
                store.update_document(doc.id, n_chunks=len(chunks), sources=doc.sources)
                report.unchanged += 1
                continue
            n_chunks[doc.id] = len(chunks)
            to_embed.extend(missing)
            report.added += 1  # new, or completing what an interrupted run left

    total = len(to_embed)
    progress("embed", 0, total)
    if total:
        engine = embedder()
        batch_size = EMBED_BATCH * max(1, getattr(engine, "workers", 1))
        with cache(engine) as vectors_cache:
            for i in range(0, total, batch_size):
                batch = to_embed[i : i + batch_size]
                texts = [clean(c.text) for c in batch]
                vectors, fresh = embed_with_cache(texts, engine.embed_passages, vectors_cache)
                store.add(plan.documents, batch, vectors, n_chunks)
                report.chunks_embedded += len(fresh)
                report.chunks_cached += len(batch) - len(fresh)
                report.tokens_embedded += sum(engine.count_tokens(texts[j]) for j in fresh)
                progress("embed", min(i + batch_size, total), total)
    store.delete_docs(plan.remove)
    report.removed = len(plan.remove)
    half_written = {doc.id for doc, have in plan.to_chunk if have}
    return sum(1 for did in n_chunks if did in half_written)
