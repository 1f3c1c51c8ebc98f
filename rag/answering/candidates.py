"""The sentences an offline answer may quote: every sentence of the retrieved abstracts, as `Candidate`s.

A candidate knows its abstract (the hit's rank), its passage (chunk) and its stemmed words; the
offline answerer (`rag.answering.offline`) scores them and `rag.answering.quoting` writes the quotes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rag.index.lexical import tokenize
from rag.text import split_sentences
from rag.types import Hit


@dataclass
class Candidate:
    hit_index: int
    start: int
    end: int
    text: str
    terms: set[str]
    score: float = 0.0
    chunk: int = 0  # which passage of the hit's document the sentence is in
    chunk_id: str = ""
    meaning: float = 0.0  # closeness of meaning to the question, 0-1


# A sentence giving a web address for code or data ("Code is available at https://...") points at
# them; it answers only a question about those.
URL = re.compile(r"https?://|www\.|github\.com", re.I)
AVAILABILITY = re.compile(r"\b(?:available|code|github|project page|website|homepage|released?|found|"
                           r"download\w*|repositor\w+)\b", re.I)
ASKS_WHERE = re.compile(r"\b(?:code|github|links?|url|website|web ?page|homepage|download\w*|available|"
                         r"availability|release[sd]?|repositor\w+|open[- ]source\w*)\b|代码|下载|链接|网址|开源|主页",
                         re.I)


def candidates(hits: list[Hit], passages: dict[int, list[tuple[str, str]]] | None = None, *,
                pointers: bool = True) -> list[Candidate]:
    """Every quotable sentence of the hits; `passages` gives a hit's document as all its chunks.

    `pointers=False` leaves out sentences giving a web address for code or data ("Code is available
    at https://..."): they answer nothing but a question about those.
    """
    out = []
    for i, hit in enumerate(hits):
        seen: set[str] = set()
        for n, (chunk_id, body) in enumerate((passages or {}).get(i) or [(hit.chunk_id, hit.text)]):
            for s, e in split_sentences(body):
                text = body[s:e].strip()
                if len(text) < 20 or text in seen or text.rstrip("\"')").endswith(("?", "？")) or \
                        text.lower().startswith(("project page", "code is available", "code:")):
                    continue  # too short, a question (it states nothing), boilerplate, or repeated in an overlap
                if not pointers and URL.search(text) and AVAILABILITY.search(text):
                    continue
                seen.add(text)
                out.append(Candidate(i, s, e, text, Terms(tokenize(text)), chunk=n, chunk_id=chunk_id))
    return out


class Terms(set):
    """A sentence's stemmed terms; also knows which words its long terms begin with, for `matches`."""

    __slots__ = ("_heads",)

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._heads: set[str] | None = None

    def heads(self) -> set[str]:
        """Every word w (5+ letters) that some term t begins with, t being at most 3 letters longer."""
        if self._heads is None:
            self._heads = {t[:n] for t in self if len(t) > 5 for n in range(max(5, len(t) - 3), len(t))}
        return self._heads

    def add(self, term: str) -> None:
        super().add(term)
        self._heads = None

    def update(self, *others) -> None:
        super().update(*others)
        self._heads = None

    def __ior__(self, other):
        self.update(other)
        return self


def matches(term: str, terms: set[str]) -> bool:
    """True when the stemmed term, or a word sharing its stem prefix (sampl/sampler), occurs."""
    if term in terms:
        return True
    if len(term) >= 3 and (term.endswith("s") and term[:-1] in terms or term + "s" in terms):
        return True  # an acronym's plural in lower case ("gpus", "llms"), which `tokenize` cannot tell from a word
    n = len(term)
    if n < 5:
        return False
    # Close stems only: sampl/sampler, not data/dataset or stand/standardis. Either the term begins
    # with a term of 5+ letters at most 3 shorter, or a term at most 3 longer begins with it.
    if any(term[:m] in terms for m in range(max(5, n - 3), n)):
        return True
    if isinstance(terms, Terms):
        return term in terms.heads()
    return any(n < len(t) <= n + 3 and t.startswith(term) for t in terms)


def idf(term: str, pool: list[Candidate]) -> float:
    df = sum(1 for c in pool if matches(term, c.terms))
    return math.log(1 + (len(pool) + 1) / (df + 0.5))


def in_source_order(candidates: list[Candidate]) -> list[Candidate]:
    """Sentences as a reader meets them: by document rank, then position in the abstract."""
    return sorted(candidates, key=lambda c: (c.hit_index, c.chunk, c.start))
