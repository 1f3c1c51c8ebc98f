"""Pure scoring functions: retrieval, facts, citation markers, groundedness, latency percentiles.

Each takes plain values (ids, strings, numbers) so it can be tested on hand-made cases.
`None` means "not applicable" and is left out of every average.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from rag.answering.support import (  # noqa: F401 - content_tokens and support are part of this module's API
    Similarity,
    content_tokens,
    crosses_languages,
    held_across_languages,
    support,
)
from rag.evals.dataset import has_spelling
from rag.markers import split_claims


# A sentence counts as grounded when at least this share of its content tokens occur in the
# text of the chunks it cites (deterministic, no model involved).
GROUNDED_MIN_OVERLAP = 0.6
# ... or, for a sentence in another script than its sources (a Chinese answer about English
# abstracts, where words cannot match), when the embedder's cosine between the sentence and
# the closest sentence of a cited chunk reaches this.
GROUNDED_MIN_SIMILARITY = 0.83


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


@dataclass
class Groundedness:
    """How many answer sentences their cited chunks support, and which do not."""

    score: float | None
    sentences: int = 0
    unsupported: list[str] = field(default_factory=list)


def groundedness(text: str, sources: Mapping[int, str], *, threshold: float = GROUNDED_MIN_OVERLAP,
                 similarity: Similarity | None = None, min_similarity: float = GROUNDED_MIN_SIMILARITY,
                 others: Sequence[str] = (), labels: Mapping[int, str] | None = None) -> Groundedness:
    """Share of sentences whose cited chunks (number -> text) contain >= threshold of their tokens.

    `labels` (number -> the cited paper's label or title) count as cited text for the token check:
    an answer may name the paper it quotes ("Title: sentence [2]").

    A sentence in another script than its chunks is judged by `similarity` when given: the
    embedder's cosine with the closest sentence of a cited chunk must reach min_similarity and
    beat `others` (the retrieved texts it does not cite) by `CROSS_LANGUAGE_MARGIN`. An uncited
    sentence, or one citing only unknown numbers, is unsupported. None for no sentences.
    """
    claims = [c for c in split_claims(text) if content_tokens(c.text)]
    if not claims:
        return Groundedness(None)
    bad: list[str] = []
    for c in claims:
        evidence = [sources[n] for n in dict.fromkeys(c.cites) if n in sources]
        if not evidence:
            ok = False
        elif similarity is not None and crosses_languages(c.text, " ".join(evidence)):
            rivals = [o for o in others if o not in evidence]
            ok = held_across_languages(c.text, evidence, rivals, similarity, min_similarity)
        else:
            named = [labels[n] for n in dict.fromkeys(c.cites) if labels and n in labels]
            ok = support(c.text, evidence + named) >= threshold
        if not ok:
            bad.append(c.body)
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
