"""Hybrid retrieval: dense (Chroma) and lexical (BM25) candidates fused by reciprocal rank.

Deterministic: no generated queries; ties broken by chunk id. One hit per document.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from rag.config import Settings, get_settings
from rag.errors import UsageError
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


def _hit(cid: str, text: str, meta: dict, score: float) -> Hit:
    label = meta.get("label", "")
    return Hit(
        doc_id=meta.get("doc_id", cid.split(":")[0]),
        title=meta.get("title") or label,
        text=text,
        score=round(score, 6),
        chunk_id=cid,
        chunk=int(meta.get("chunk", 0)),
        start=int(meta.get("start", 0)),
        end=int(meta.get("end", 0)),
        label=label,
        sources=json.loads(meta.get("sources", "[]")),
        url=meta.get("url"),
        n_chunks=int(meta.get("n_chunks") or 1),
    )


class Retriever:
    """Holds the opened store, lexical index and embedder for repeated questions."""

    def __init__(self, settings: Settings) -> None:
        from rag import lexical
        from rag.embed import get_embedder
        from rag.store import Store, lexical_dir

        self.settings = settings
        self.store = Store(settings)
        self.lexical = self._load_lexical(lexical, lexical_dir(settings))
        self.embedder = get_embedder(settings)

    def _load_lexical(self, lexical, folder):
        """Load the local BM25 index, rebuilding it from the store when missing or stale.

        The check is one `count()` call: cheap enough for every start, and it catches a
        collection another client of a Chroma server has changed (ingest compares ids).
        """
        from rag.errors import BusyError, IndexError_

        index = None
        try:
            index = lexical.load(folder)
            if len(index.chunk_ids) == self.store.count():
                return index
        except IndexError_:
            pass
        from rag.ingest import refresh_lexical

        try:
            refresh_lexical(self.store, self.settings, wait=False)
        except BusyError:
            # An ingest is running and will rebuild BM25 when it ends; until then answer from
            # what is there (hits are resolved against Chroma, so none can be stale).
            return index if index is not None else lexical.LexicalIndex(None, [])
        return lexical.load(folder)

    def retrieve(self, query: str, *, k: int | None = None) -> Retrieval:
        k = self.settings.k if k is None else k
        if k < 1:
            raise UsageError(f"k must be at least 1, got {k}")
        query = check_query(query)
        n = max(self.settings.candidates, 3 * k)
        t0 = time.perf_counter()
        qvec = self.embedder.embed_query(query)
        t1 = time.perf_counter()
        dense = self.store.query(qvec, n)
        t2 = time.perf_counter()
        lexical = self.lexical.search(query, n)
        if lexical:  # weak BM25 matches (a shared common word) are noise, not evidence
            floor = self.settings.lexical_min_ratio * lexical[0][1]
            lexical = [(cid, s) for cid, s in lexical if s >= floor]
        t3 = time.perf_counter()

        found = {cid: (text, meta) for cid, text, meta, _ in dense}
        missing = [cid for cid, _ in lexical if cid not in found]
        found.update(self.store.get(missing))  # chunks deleted since the BM25 build drop out here
        cosine = {cid: sim for cid, _, _, sim in dense}
        bm25 = {cid: s for cid, s in lexical if cid in found}
        fused = fuse(
            [[c for c, *_ in dense], [c for c, _ in lexical if c in found]],
            self.settings.rrf_k,
            [1.0, self.settings.lexical_weight],
        )

        hits: list[Hit] = []
        seen: set[str] = set()
        for cid in sorted(fused, key=lambda c: (-fused[c], c)):
            text, meta = found[cid]
            hit = _hit(cid, text, meta, fused[cid])
            if hit.doc_id in seen:
                continue
            seen.add(hit.doc_id)
            hit.dense_score = round(cosine[cid], 6) if cid in cosine else None
            hit.lexical_score = round(bm25[cid], 6) if cid in bm25 else None
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


_RETRIEVERS: dict[tuple, Retriever] = {}


def forget_retrievers() -> None:
    """Drop cached retrievers (after an ingest changed the index under them)."""
    _RETRIEVERS.clear()


def get_retriever(settings: Settings) -> Retriever:
    """Return a cached retriever for these settings, building the index first if it is empty."""
    key = (settings.collection_name(), settings.index_dir, settings.chroma_url)
    if key not in _RETRIEVERS:
        from rag.errors import IndexError_

        try:
            _RETRIEVERS[key] = Retriever(settings)
        except IndexError_:
            from rag.store import index_root

            # First use: build the index from the data folder, as documented.
            if settings.chroma_url or not (index_root(settings) / "chroma").exists():
                from rag.ingest import ingest

                ingest(settings=settings)
                _RETRIEVERS[key] = Retriever(settings)
            else:
                raise
    return _RETRIEVERS[key]


def retrieve(query: str, *, k: int = 5, settings: Settings | None = None) -> list[Hit]:
    """Return the k best chunks for the query, one per document, best first."""
    settings = settings or get_settings()
    return get_retriever(settings).retrieve(query, k=k).hits
