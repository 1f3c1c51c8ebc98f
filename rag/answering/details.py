"""Sentences that state the detail a question asks for: raised to the evidence bar, whatever else of the
question they restate.

A stage of the offline answer (`rag.answering.offline`), after every sentence has its evidence score:
with the paper settled by its name, what separates the sentence that answers is that it states what is
asked (a kind named, a count, the number the question quotes), not how many words it shares.
"""
from __future__ import annotations

import re
from typing import Callable

from rag.answering.asked import announces_asked, asks_authors, names_asked_kind, names_part, names_variant
from rag.answering.candidates import Candidate, matches
from rag.answering.framing import EACH_TERMS
from rag.answering.named import labelling, written
from rag.answering.quantity import asks_quantity, counts_asked_thing, numbers_in
from rag.config import OfflineSettings
from rag.types import Hit

# "What does SoLS stand for?", "STR short for?": answered by the sentence spelling the name out, "... (SoLS)".
_ASKS_EXPANSION = re.compile(r"\bstands? for\b|\bshort for\b|\b(?:acronym|abbreviation)s?\b|\bfull name\b"
                             r"|\bspelled out\b|全称|代表什么|缩写", re.I)


def raise_stating_sentences(pool: list[Candidate], question: str, hits: list[Hit], *, focus: list[str],
                            named: dict[str, list[str]], wanted: set[str], many: bool, crosslingual: bool,
                            required: Callable[[str], bool] | None, tested: Callable[[str], bool] | None,
                            about_paper_only: bool, allowed: list[int], t: OfflineSettings) -> None:
    """Raise, in place, the scores of the pool's sentences that state what the question asks.

    `required`: what an answering sentence must state (a number, a name), if anything; `tested`: whether a
    sentence reports the named paper's test; `about_paper_only`: the question asks only what its named
    paper is; `allowed`: the hit indices the answer may quote.
    """
    # With the paper settled by its name, a sentence of it stating every word the question asks with
    # (two or more) states what is asked, however far a question stripped of the name is from it in
    # meaning ("How much larger is RefSpatial than prior datasets?": "20M QA pairs (2x prior)").
    own_words = [x for x in focus if x not in EACH_TERMS]
    if wanted and not crosslingual and not many and len(own_words) >= 2:
        for c in pool:
            if all(matches(x, c.terms) for x in own_words) and (required is None or required(c.text)):
                c.score = max(c.score, t.min_evidence + c.meaning * t.rule_tiebreak)
    if about_paper_only:
        # (ranked among the named papers' hits: where other papers' hits rank says nothing of it)
        # A question asking for a number ("Rebo: how many?") is answered only by the sentences stating one.
        first = min(c.hit_index for c in pool)
        counting = required is not None and (asks_quantity(question) or asks_authors(question))
        for c in pool:
            if not counting or required(c.text):
                c.score = max(c.score, t.min_evidence + c.meaning * t.rule_tiebreak - t.rank_penalty * (c.hit_index - first))
    if wanted and _ASKS_EXPANSION.search(question):
        for c in pool:
            if any(re.search(rf"\(\s*\$?{re.escape(n)}\$?\s*\)", c.text) for n in named):
                c.score = max(c.score, t.min_evidence + t.intro_bonus)
    # A sentence of the paper named that states the asked detail in its own words answers, whatever the
    # question's other words: "Which testbed was SoLS evaluated on?" by its sentence naming a benchmark;
    # "Up to how many reasoning steps do the RefSpatial examples involve?" by one counting the thing asked
    # about ("up to 5 steps"; in the one paper named only: where a name fits several, another may count it).
    # (So is one of the paper a question describes, when its abstract stands out: "the stimulation method
    # that fits ... -- what kind of electrode setup was it tested with?")
    kind_named = names_asked_kind(question, named) if (wanted or allowed == [0]) and not many and not crosslingual else None
    counts_asked = counts_asked_thing(question) if len(wanted) == 1 and not many else None
    variant = names_variant(question) if wanted and not many else None
    part_named = names_part(question) if wanted and not many and not crosslingual else None
    tested = tested if kind_named is None else None
    announced = announces_asked(question) if len(wanted) == 1 and not many and not crosslingual else None
    for states_detail in (kind_named, counts_asked, variant, part_named, tested, announced):
        if states_detail is not None:
            for c in pool:
                # (In the one paper named it reaches the bar even when ranked below another hit; where a
                # name fits several papers, the rank still says which of them is meant.)
                if states_detail(c.text):
                    c.score = max(c.score, t.min_evidence + (max(c.score, 0.0) if len(wanted) == 1 else c.score)
                                  * t.rule_tiebreak)
    # (one paper: where a name or a label's words fit several, another may state the same number)
    quoted = numbers_in(question) if len(wanted) == 1 and not many and not asks_quantity(question) else set()
    if quoted:
        # "What does the 42% figure in X measure?" asks about a number the paper states: the sentence
        # stating it is the one asked about, however few of the question's other words it shares, and
        # comes first.
        top = max((c.score for c in pool), default=0.0)
        for c in pool:
            if quoted & numbers_in(c.text) and (required is None or required(c.text)):
                c.score = max(c.score, t.min_evidence, top) + c.score * t.rule_tiebreak
    if many and wanted and not labelling(named, hits):
        _each_naming_paper(pool, named, t)


def _each_naming_paper(pool: list[Candidate], named: dict[str, list[str]], t: OfflineSettings) -> None:
    """"Which papers use the Unitree G1?": the few abstracts writing a name the question gives are the
    papers it asks for, so each one's best sentence writing the name is kept beside the best answer
    (its score raised to `many_keep` of the best), however little else of the question it restates."""
    best = max((c.score for c in pool), default=0.0)
    patterns = [written(n) for n in named]
    top: dict[int, Candidate] = {}
    for c in pool:
        if any(p.search(c.text) for p in patterns) and (c.hit_index not in top or c.score > top[c.hit_index].score):
            top[c.hit_index] = c
    for c in top.values():
        c.score = max(c.score, t.many_keep * best)
