"""Hybrid retrieval: dense (Chroma) and lexical (BM25) candidates fused by reciprocal rank.

Deterministic: no generated queries; ties broken by chunk id. One hit per document.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from rag.config import Settings
from rag.errors import UsageError
from rag.index.embedders import Embedder
from rag.index.filters import Where
from rag.index.lexical import LexicalIndex
from rag.index.records import StoredChunk
from rag.index.store import Store
from rag.types import Hit

MAX_QUESTION_CHARS = 4000


@dataclass
class Retrieval:
    """Hits plus what it took to find them."""

    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)


def check_query(query: str) -> str:
    """Return the query stripped; reject empty ones. Very long ones are cut, not refused."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError("the question is empty")
    return query.strip()[:MAX_QUESTION_CHARS]


def fuse(rankings: list[list[str]], rrf_k: int, weights: list[float] | None = None) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: sum of w / (rrf_k + rank) over the rankings a chunk is in."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        for rank, cid in enumerate(ranking, start=1):
            scores[cid] = scores.get(cid, 0.0) + w / (rrf_k + rank)
    return scores


def hybrid_search(query: str, k: int, *, settings: Settings, store: Store, lexical: LexicalIndex,
                  embedder: Embedder, where: Where | None = None, allowed: frozenset[str] | None = None) -> Retrieval:
    """Return the k best chunks for the query, one per document, best first.

    With a filter, `allowed` holds the ids of the chunks it admits: both retrievers rank only
    those (Chroma filters by metadata, or by id for an author filter; BM25 masks the others'
    scores), so k hits come back whenever k documents match.
    """
    query = check_query(query)
    n = max(settings.candidates, 3 * k)
    t0 = time.perf_counter()
    qvec = embedder.embed_query(query)
    t1 = time.perf_counter()
    by_id = sorted(allowed) if allowed is not None and where is not None and where.author is not None else None
    dense = store.query(qvec, n, where=where, ids=by_id)
    t2 = time.perf_counter()
    bm25 = lexical.search(query, n, only=allowed)
    if bm25:  # weak BM25 matches (a shared common word) are noise, not evidence
        floor = settings.lexical_min_ratio * bm25[0][1]
        bm25 = [(cid, s) for cid, s in bm25 if s >= floor]
    t3 = time.perf_counter()

    found: dict[str, StoredChunk] = {c.id: c for c, _ in dense}
    missing = [cid for cid, _ in bm25 if cid not in found]
    found.update(store.get(missing))  # chunks deleted since the BM25 build drop out here
    cosine = {c.id: sim for c, sim in dense}
    lexical_scores = {cid: s for cid, s in bm25 if cid in found}
    fused = fuse(
        [[c.id for c, _ in dense], [cid for cid, _ in bm25 if cid in found]],
        settings.rrf_k,
        [1.0, settings.lexical_weight],
    )

    hits: list[Hit] = []
    seen: set[str] = set()
    for cid in sorted(fused, key=lambda c: (-fused[c], c)):
        chunk = found[cid]
        if chunk.doc_id in seen:
            continue
        seen.add(chunk.doc_id)
        hit = chunk.to_hit(fused[cid])
        hit.dense_score = round(cosine[cid], 6) if cid in cosine else None
        hit.lexical_score = round(lexical_scores[cid], 6) if cid in lexical_scores else None
        hits.append(hit)
        if len(hits) == k:
            break
    t4 = time.perf_counter()
    timings = {
        "embed_query": (t1 - t0) * 1000,
        "dense": (t2 - t1) * 1000,
        "lexical": (t3 - t2) * 1000,
        "fuse": (t4 - t3) * 1000,
    }
    return Retrieval(hits=hits, timings_ms={key: round(v, 2) for key, v in timings.items()})
