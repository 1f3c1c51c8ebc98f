"""The lexical half of hybrid retrieval: BM25 (bm25s) over cleaned, stemmed chunk text.

Built from the vector store's own contents at the end of every ingest and saved atomically,
so the lexical and vector indexes always describe the same chunks.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet, Sequence

import numpy as np

from rag.clean import clean
from rag.errors import IndexError_
from rag.index.chunk import doc_of

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # kana, CJK ideographs, Hangul
IDS_FILE = "chunk_ids.json"
FORMAT_FILE = "format.json"
# What `tokenize` makes of a text: an index saved with another format holds other terms than
# the queries ask for, so it is rebuilt (1: before acronym plurals were folded).
FORMAT = 2
# An acronym's plural ("LLMs", "GPUs", "ViTs", "MLLMs"): the stemmer keeps the "s" of a word
# with no vowel before it, so "LLMs" and "LLM" would be two terms, each matching half the papers.
_ACRONYM_PLURAL = re.compile(r"\b([A-Za-z0-9]*[A-Z][A-Za-z0-9]*[A-Z])s\b")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(text: str, *, compounds: bool = True) -> list[str]:
    """Lower-case, split, drop English stopwords, stem; CJK runs become character bigrams.

    With `compounds`, a hyphenated word also yields its joined form ("T2I-R1" -> "t2ir1").
    """
    return list(_cached_terms(text, compounds))


_SURFACE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


@lru_cache(maxsize=16384)
def surface_words(text: str) -> frozenset[str]:
    """The text's English words as written (lower-cased, 3+ letters, not stopwords): what the answerer
    compares a question's words with by meaning (`rag.answering.offline`), and ingest caches vectors of."""
    return frozenset(surface_word_list(text))


def surface_word_list(text: str) -> list[str]:
    """`surface_words` in the order the text first writes them (for choices that must not depend on
    the order of a set, which changes from one process to the next)."""
    return list(dict.fromkeys(w.lower() for w in _SURFACE.findall(text) if len(w) > 2 and _kept(w.lower())))


@lru_cache(maxsize=65536)
def _kept(word: str) -> bool:
    return bool(_terms(word, False))


# The answerer tokenizes the same retrieved sentences several times per question, and again for
# the next question about the same papers: cleaning and stemming were a fifth of its time. (Building
# BM25 reads every chunk once: it calls `_terms` and leaves the cache to the answerer.)
@lru_cache(maxsize=16384)
def _cached_terms(text: str, compounds: bool) -> tuple[str, ...]:
    return _terms(text, compounds)


def _terms(text: str, compounds: bool) -> tuple[str, ...]:
    out: list[str] = []
    stop = _stopwords()
    for tok in _WORD.findall(_ACRONYM_PLURAL.sub(r"\1", clean(text)).lower()):
        if CJK.match(tok):
            out.extend(tok[i : i + 2] for i in range(max(1, len(tok) - 1)))
        elif tok not in stop:
            out.extend(p for p in tok.replace("'", "-").split("-")
                       if p and p not in stop and (len(p) > 1 or p.isdigit()))
            if compounds and "-" in tok:
                out.append(tok.replace("-", ""))  # "T2I-R1" also matches "t2ir1"
    words = [t for t in out if not CJK.match(t)]
    stems = iter(_stemmer().stemWords(words))
    return tuple(t if CJK.match(t) else next(stems) for t in out)


class LexicalIndex:
    """A loaded BM25 index and the chunk ids its rows stand for."""

    def __init__(self, bm25, chunk_ids: list[str]) -> None:
        self._bm25 = bm25
        self.chunk_ids = chunk_ids
        self._mask: tuple[AbstractSet[str], np.ndarray] | None = None
        self._rows: dict[str, np.ndarray] | None = None

    def search(self, query: str, n: int, *, only: AbstractSet[str] | None = None) -> list[tuple[str, float]]:
        """Return up to n (chunk_id, score) pairs with a positive score, best first.

        `only` restricts the ranking to those chunk ids (a metadata filter): the others are
        masked out of the scores, so the n best admitted chunks come back however rare they are.
        """
        if not self.chunk_ids or n < 1:
            return []
        tokens = tokenize(query)
        if not tokens:
            return []
        k = min(n, len(self.chunk_ids))
        mask = self._weights(only) if only is not None else None
        docs, scores = self._bm25.retrieve([tokens], k=k, show_progress=False, n_threads=1, weight_mask=mask)
        # BM25 pads with zero-score rows when no term matches (every Chinese question):
        # those are not evidence and must not take part in fusion.
        return [(self.chunk_ids[int(i)], float(s)) for i, s in zip(docs[0], scores[0]) if s > 0]

    def coverage(self, query: str, doc_ids: Sequence[str]) -> dict[str, float]:
        """Share of the query's terms, weighted by their IDF, that each document's text holds (0-1).

        A document holding every distinctive word of a question is likelier its answer than one
        repeating a single word often (what BM25 rewards). A term no chunk holds still counts in the
        whole, so that a question's rare words weigh as rare.
        """
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self.chunk_ids:
            return {d: 0.0 for d in doc_ids}
        # bm25s 0.3 (pinned in pyproject.toml) keeps the BM25 matrix by term, as CSC arrays: the chunk rows
        # holding term j are scores["indices"][indptr[j]:indptr[j + 1]] (the test of this method reads a real index).
        scores, vocab = self._bm25.scores, self._bm25.vocab_dict
        n = len(self.chunk_ids)
        rows = self._doc_rows()
        empty = np.zeros(0, dtype=np.int64)
        parts = [rows.get(d, empty) for d in doc_ids]
        every = np.concatenate(parts) if parts else empty  # every row of the documents asked about,
        owner = np.repeat(np.arange(len(parts)), [len(r) for r in parts])  # and which of them it belongs to
        held = np.zeros(len(parts))
        total = 0.0
        for term in terms:
            j = vocab.get(term)
            postings = scores["indices"][scores["indptr"][j]:scores["indptr"][j + 1]] if j is not None else empty
            weight = float(np.log((n + 1) / (len(postings) + 0.5)))
            total += weight
            if len(postings) and len(every):
                has = np.bincount(owner[np.isin(every, postings)], minlength=len(parts)) > 0
                held += weight * has
        return {d: float(w) / total if total > 0 else 0.0 for d, w in zip(doc_ids, held)}

    def _doc_rows(self) -> dict[str, np.ndarray]:
        """Each document's chunk rows in the BM25 matrix (built once per loaded index)."""
        if self._rows is None:
            rows: dict[str, list[int]] = {}
            for i, cid in enumerate(self.chunk_ids):
                rows.setdefault(doc_of(cid), []).append(i)
            self._rows = {d: np.asarray(r, dtype=np.int64) for d, r in rows.items()}
        return self._rows

    def _weights(self, only: AbstractSet[str]) -> np.ndarray:
        """1 for the admitted chunks, 0 for the others (kept for the last set asked about)."""
        if self._mask is None or self._mask[0] is not only:
            weights = np.fromiter((cid in only for cid in self.chunk_ids), dtype=np.float32, count=len(self.chunk_ids))
            self._mask = (only, weights)
        return self._mask[1]


def index_texts(chunk_ids: Sequence[str], texts: Sequence[str]) -> LexicalIndex:
    """Build BM25 over texts in memory (a reader of a read-only index uses it unsaved)."""
    if not chunk_ids:
        return LexicalIndex(None, [])
    import bm25s

    bm25 = bm25s.BM25()
    bm25.index([list(_terms(t, True)) or ["\u2205"] for t in texts], show_progress=False)
    return LexicalIndex(bm25, list(chunk_ids))


def build(chunk_ids: Sequence[str], texts: Sequence[str], folder: Path, *,
          extra: dict[str, str | bytes] | None = None) -> None:
    """Build BM25 over texts and replace the index in `folder` atomically.

    `extra` files (name -> text or bytes) are written with it, so they always describe the same chunks.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".lexical-", dir=folder.parent))
    try:
        if chunk_ids:
            index_texts(chunk_ids, texts)._bm25.save(str(tmp))
        for name, content in (extra or {}).items():
            data = content.encode("utf-8") if isinstance(content, str) else content
            (tmp / name).write_bytes(data)
        (tmp / FORMAT_FILE).write_text(json.dumps({"format": FORMAT}), encoding="utf-8")
        (tmp / IDS_FILE).write_text(json.dumps(list(chunk_ids)), encoding="utf-8")
        old = folder.with_name(folder.name + ".old")
        if folder.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stored_ids(folder: Path) -> list[str] | None:
    """Chunk ids of the saved index, or None when there is none."""
    try:
        ids = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return ids if isinstance(ids, list) else None


def current(folder: Path) -> bool:
    """True when the saved index was made by this version's `tokenize` (see FORMAT)."""
    try:
        return json.loads((folder / FORMAT_FILE).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False  # saved before the format was recorded


def version(folder: Path) -> int | None:
    """A number that changes whenever `build` replaces the saved index (None: no index)."""
    try:
        return (folder / IDS_FILE).stat().st_mtime_ns
    except OSError:
        return None


def stored_count(folder: Path) -> int:
    """Number of chunks in the saved index, or -1 when there is none."""
    ids = stored_ids(folder)
    return -1 if ids is None else len(ids)


def load(folder: Path) -> LexicalIndex:
    """Load the index saved by `build`; a missing or broken one is an index error."""
    ids_file = folder / IDS_FILE
    if not ids_file.is_file():
        old = folder.with_name(folder.name + ".old")
        if (old / IDS_FILE).is_file():  # a crash between the two renames of `build`
            folder = old
            ids_file = old / IDS_FILE
        else:
            raise IndexError_(f"the lexical index is missing in {folder}", hint="run `rag ingest`")
    try:
        chunk_ids = json.loads(ids_file.read_text(encoding="utf-8"))
        if not chunk_ids:
            return LexicalIndex(None, [])
        import bm25s

        return LexicalIndex(bm25s.BM25.load(str(folder)), chunk_ids)
    except (OSError, ValueError, KeyError) as e:
        raise IndexError_(f"the lexical index in {folder} is unreadable ({e})") from None
