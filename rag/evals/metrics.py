"""Pure scoring functions: retrieval, facts, citation markers, groundedness, latency percentiles.

Each takes plain values (ids, strings, numbers) so it can be tested on hand-made cases.
`None` means "not applicable" and is left out of every average.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from rag.clean import clean
from rag.evals.dataset import has_spelling

# A marker: [1], [1, 2], [1;3], [1-3] (also en/em dashes). Adjacent markers ([1][3]) are separate.
MARKER = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;\-\u2013\u2014]\s*\d{1,4})*)\s*\]")
_MARKER_PART = re.compile(r"(\d+)(?:\s*[\-\u2013\u2014]\s*(\d+))?")
_MARKER_RUN = re.compile(r"(?:\s*" + MARKER.pattern + r")+[.,;:!?。！？]*")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=[\"'(\[]?[A-Z0-9\u3400-\u9fff])|(?<=[。！？])")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+(?:[.\-/^][a-z0-9]+)*")
_STOP = frozenset(
    "a an the and or of to in on for by with as at from into is are was were be been being it its this "
    "that these those which who whom whose what when where how than then so such via both also their "
    "they them we our us can may might will would should could not no do does did has have had".split()
)

# A sentence counts as grounded when at least this share of its content tokens occur in the
# text of the chunks it cites (deterministic, no model involved).
GROUNDED_MIN_OVERLAP = 0.6


def marker_numbers(body: str) -> list[int]:
    """Expand the inside of one marker ("1, 3-4") into source numbers."""
    out: list[int] = []
    for m in _MARKER_PART.finditer(body):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        lo, hi = min(lo, hi), max(lo, hi)
        out.extend(range(lo, min(hi, lo + 50) + 1))
    return out


def find_markers(text: str) -> list[int]:
    """Every source number named by a marker in text, in order, duplicates kept."""
    return [n for m in MARKER.finditer(text) for n in marker_numbers(m.group(1))]


def citation_validity(markers: Sequence[int], valid: Iterable[int]) -> float | None:
    """Share of marker occurrences that name a real source; None when there are no markers."""
    if not markers:
        return None
    ok = set(valid)
    return sum(1 for n in markers if n in ok) / len(markers)


def retrieval_recall(retrieved: Sequence[str], gold: Iterable[str], k: int | None = None) -> float | None:
    """Share of gold documents among the first k retrieved (all when k is None); None without gold."""
    gold = set(gold)
    if not gold:
        return None
    top = set(retrieved[:k] if k is not None else retrieved)
    return len(gold & top) / len(gold)


def reciprocal_rank(retrieved: Sequence[str], gold: Iterable[str]) -> float | None:
    """1/rank of the first gold document retrieved, 0 if none; None without gold."""
    gold = set(gold)
    if not gold:
        return None
    for rank, doc in enumerate(retrieved, start=1):
        if doc in gold:
            return 1.0 / rank
    return 0.0


def facts_found(text: str, facts: Sequence[Sequence[str]]) -> list[bool]:
    """For each fact, whether any of its spellings occurs in text (after cleaning, case folded)."""
    return [has_spelling(text, spellings) for spellings in facts]


def fact_recall(text: str, facts: Sequence[Sequence[str]]) -> float | None:
    """Share of facts found in text; None when there are no facts."""
    if not facts:
        return None
    found = facts_found(text, facts)
    return sum(found) / len(found)


def citation_precision(cited: Iterable[str], gold: Iterable[str]) -> float | None:
    """Share of distinct cited documents that are gold; None when nothing is cited or there is no gold."""
    cited, gold = set(cited), set(gold)
    if not cited or not gold:
        return None
    return len(cited & gold) / len(cited)


def citation_recall(cited: Iterable[str], gold: Iterable[str]) -> float | None:
    """Share of gold documents that are cited; None when there is no gold."""
    cited, gold = set(cited), set(gold)
    if not gold:
        return None
    return len(cited & gold) / len(gold)


def content_tokens(text: str) -> list[str]:
    """Lower-cased word tokens without markers and stopwords; each CJK character is a token."""
    text = clean(MARKER.sub(" ", text)).casefold()
    return [t for t in _TOKEN.findall(text) if t not in _STOP]


@dataclass
class Claim:
    """One answer sentence and the source numbers it cites."""

    text: str
    cites: list[int] = field(default_factory=list)


def split_claims(text: str) -> list[Claim]:
    """Split an answer into sentences, each owning the markers that end it.

    A sentence runs up to and including a run of markers (and trailing punctuation); text
    after the last marker run is split at sentence ends into uncited sentences. Pieces with
    no content tokens (a lone "." or a marker) are dropped.
    """
    claims: list[Claim] = []
    start = 0
    for run in _MARKER_RUN.finditer(text):
        body = text[start : run.start()]
        claims.append(Claim(body, find_markers(run.group(0))))
        start = run.end()
    for piece in _SENTENCE_END.split(text[start:]):
        claims.append(Claim(piece, []))
    return [c for c in claims if content_tokens(c.text)]


def support(claim: str, evidence: Sequence[str]) -> float:
    """Share of the claim's content tokens that occur in the evidence texts."""
    tokens = content_tokens(claim)
    if not tokens:
        return 1.0
    pool = set(t for e in evidence for t in content_tokens(e))
    return sum(1 for t in tokens if t in pool) / len(tokens)


@dataclass
class Groundedness:
    """How many answer sentences their cited chunks support, and which do not."""

    score: float | None
    sentences: int = 0
    unsupported: list[str] = field(default_factory=list)


def groundedness(text: str, sources: Mapping[int, str], *, threshold: float = GROUNDED_MIN_OVERLAP) -> Groundedness:
    """Share of sentences whose cited chunks (number -> text) contain >= threshold of their tokens.

    An uncited sentence, or one citing only unknown numbers, is unsupported. None for no sentences.
    """
    claims = split_claims(text)
    if not claims:
        return Groundedness(None)
    bad: list[str] = []
    for c in claims:
        evidence = [sources[n] for n in dict.fromkeys(c.cites) if n in sources]
        if not evidence or support(c.text, evidence) < threshold:
            bad.append(" ".join(c.text.split()))
    return Groundedness((len(claims) - len(bad)) / len(claims), len(claims), bad)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) by linear interpolation; None for no values."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None
