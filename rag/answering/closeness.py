"""Which paper a question naming none describes, read from whole abstracts.

`closeness` (per hit, the second English model's cosine between the question and the hit's whole
abstract, or None) says what a reworded question is about where no single sentence restates it: the
offline answerer (`rag.answering.offline`) asks here whether the first abstract is evidence by itself,
stands out from the others, and which quoted papers the question is closest to.
"""
from __future__ import annotations

from typing import Sequence

from rag.answering.candidates import Candidate, in_source_order
from rag.answering.quoting import with_proposal
from rag.config import OfflineSettings


def close_first_abstract(closeness: Sequence[float | None] | None, allowed: list[int],
                         t: OfflineSettings, *, by_margin: bool = False, margin: float | None = None) -> int | None:
    """The best-ranked hit when its whole abstract is close enough in meaning to be evidence alone.

    A reworded question describes what a paper is about, often in words no single sentence
    shares; the second model's cosine between the question and the whole abstract says whether
    the corpus holds such a paper (an off-corpus question is close to no abstract as a whole).
    Only the first hit qualifies: a lower-ranked abstract that sounds closer than the first is a
    disagreement between the retrievers, not evidence (measured on dev: eval/README.md).

    With `by_margin`, a first abstract less close than `abstract_closeness` qualifies too when it
    stands out from every other retrieved abstract by `abstract_margin` (and reaches
    `margin_closeness`): a question describing one paper in other words is much closer to it than
    to any other, while an off-corpus question is about as far from several. `margin`: another margin
    than `abstract_margin` for that.
    """
    if not closeness or t.abstract_closeness is None or not allowed or allowed[0] >= len(closeness):
        return None
    first = allowed[0]
    own = closeness[first]
    if own is None:
        return None
    if own >= t.abstract_closeness or by_margin and stands_out(closeness, first, t, margin=margin):
        return first
    return None


def stands_out(closeness: Sequence[float | None] | None, first: int, t: OfflineSettings, *,
               margin: float | None = None) -> bool:
    """Whether hit `first`'s abstract is closer to the question than every other retrieved abstract by
    `margin` (default `abstract_margin`), and reaches `margin_closeness` (closeness: as for
    `close_first_abstract`)."""
    margin = t.abstract_margin if margin is None else margin
    if margin is None or not closeness or first >= len(closeness) or closeness[first] is None:
        return False
    others = [c for i, c in enumerate(closeness) if i != first and c is not None]
    own = closeness[first]
    return bool(others) and own >= t.margin_closeness and own - max(others) >= margin


def closest_papers(chosen: list[Candidate], closeness: Sequence[float | None] | None,
                   t: OfflineSettings) -> list[Candidate]:
    """Drop the quoted papers whose whole abstract is less close to the question than the closest quoted
    one by more than `quote_margin` (closeness: as for `close_first_abstract`).

    A question naming no paper and asking for no several papers describes one paper; a second paper is
    quoted when one of its sentences scores near the best, often on shared words alone ("reward",
    "video"). Read whole, the paper the question describes stays close to it and the other falls away.
    """
    if t.quote_margin is None or not closeness:
        return chosen
    near = {c.hit_index: closeness[c.hit_index] for c in chosen
            if c.hit_index < len(closeness) and closeness[c.hit_index] is not None}
    if len(near) < 2 or len({c.hit_index for c in chosen}) != len(near):
        return chosen  # a quoted paper without a closeness: nothing to compare it by
    best = max(near.values())
    return [c for c in chosen if near[c.hit_index] >= best - t.quote_margin]


def with_closer_paper(chosen: list[Candidate], pool: list[Candidate], closeness: Sequence[float | None] | None,
                      allowed: list[int], t: OfflineSettings) -> list[Candidate]:
    """Quote also the other of the two best-ranked papers, with its best sentence and what it proposes,
    when the answer quotes one paper whose whole abstract is less close to the question than that
    other's by `closer_paper_margin` (closeness: as for `close_first_abstract`).

    A question naming no paper describes one; among thousands of papers the one whose sentence scores
    best is often a neighbour of the paper described, ranked beside it, while the described paper is
    the closer of the two as a whole. Quoting both keeps the answer the evidence chose and lets the
    reader see the paper that may be meant; the evidence, not closeness, decided to answer.
    """
    if t.closer_paper_margin is None or not closeness:
        return chosen
    quoted = {c.hit_index for c in chosen}
    if len(quoted) != 1:
        return chosen
    (one,) = quoted
    own = closeness[one] if one < len(closeness) else None
    if own is None:
        return chosen
    for other in allowed[:2]:
        near = closeness[other] if other < len(closeness) else None
        if other == one or near is None or near < own + t.closer_paper_margin:
            continue
        sentences = [c for c in pool if c.hit_index == other]
        if sentences:
            chosen = with_proposal(in_source_order([*chosen, max(sentences, key=lambda c: c.score)]), pool,
                                   every_paper=True)
    return chosen


def off_corpus(closeness: Sequence[float | None] | None, t: OfflineSettings) -> bool:
    """Whether no retrieved abstract is close to the question as a whole (`off_corpus_closeness`): a
    question about something the corpus does not hold, however many single words its sentences share."""
    if t.off_corpus_closeness is None or not closeness:
        return False
    known = [c for c in closeness if c is not None]
    return bool(known) and max(known) < t.off_corpus_closeness
