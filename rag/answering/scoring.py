"""Each quotable sentence's evidence score, and the sentences an offline answer is built from.

A sentence's evidence mixes its closeness in meaning to the question with how much of the question's
focus words it states (`score`; a Chinese question's words through their glosses, `score_glosses`);
`choose` picks the best sentence and those covering what it left out; `together` scores what several
sentences state at once. The thresholds are `settings.offline` (rag.config.OfflineSettings).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence, Set as AbstractSet

import numpy as np

from rag.answering.candidates import Candidate, idf, in_source_order, matches
from rag.answering.quoting import INTRO
from rag.answering.wording import has_phrase
from rag.config import OfflineSettings
from rag.index.lexical import tokenize
from rag.types import Hit


def score_glosses(pool: list[Candidate], meaning: np.ndarray, groups: list[set[str]], t: OfflineSettings, *,
                  required: Callable[[str], bool] | None) -> None:
    """Let a Chinese question's words count as evidence through their dictionary glosses.

    A Chinese question shares no word with an English sentence, so its evidence was meaning alone,
    and cross-lingual cosines are weak. Each Chinese content word is stated by a sentence holding
    any of its glosses ("噪声" -> noise), a name the question asks about (not the paper's own) by its
    words; the share of the question's words stated so can only add to a sentence's score (a gloss
    of the wrong sense simply matches nothing). `groups`: each word's stemmed glosses.
    """
    if not groups:
        return
    for c, m in zip(pool, meaning):
        stated = sum(1 for g in groups if any(matches(x, c.terms) for x in g)) / len(groups)
        score = t.meaning_weight * float(m) + (1 - t.meaning_weight) * stated
        if required is not None and not required(c.text):
            score *= t.no_number_factor
        c.score = max(c.score, score - t.rank_penalty * c.hit_index)


def together(chosen: list[Candidate], focus: list[str], weights: dict[str, float], t: OfflineSettings, *,
             lexical: bool) -> float:
    """Evidence of several sentences at once: their best meaning, and the focus words they cover together."""
    if not lexical or not focus or len(chosen) < 2:
        return 0.0
    terms = set().union(*(c.terms for c in chosen))
    words = sum(w for x, w in weights.items() if matches(x, terms)) / (sum(weights.values()) or 1.0)
    return t.meaning_weight * max(c.meaning for c in chosen) + (1 - t.meaning_weight) * words


def meaning_of(sims: np.ndarray, low: float, high: float) -> np.ndarray:
    """Cosines mapped to 0-1 closeness of meaning: `low` and below is none, `high` and above is full."""
    return np.clip((np.asarray(sims, dtype=np.float32) - low) / max(high - low, 1e-6), 0.0, 1.0)


def score(pool: list[Candidate], meaning: np.ndarray, weights: dict[str, float], t: OfflineSettings, *, lexical: bool,
          asks_for_paper: bool, named: bool, required: Callable[[str], bool] | None = None,
          phrases: list[tuple[str, str]] | None = None, near: dict[tuple[int, str], float] | None = None,
          alternatives: list[list[set[str]]] | None = None) -> None:
    """Set each candidate's evidence score (see `rag.answering.offline.compose`); `weights` are the focus words' IDFs.

    When the question names its paper, the paper is settled and the evidence is whether a
    sentence states what is asked: meaning and focus words together (a sentence close in
    meaning that lacks the asked-for detail is not evidence). When it names none, the words
    may all be reworded (a paraphrase): meaning alone can carry the evidence.

    Two general rules sharpen the words: a phrase of the question ("learning rate") is not
    stated by a sentence where its words stand apart ("reinforcement learning ... at a rate");
    and a question asking for a quantity is answered only by a sentence with a number, one asking
    which model, dataset or benchmark a named paper used only by a sentence naming one
    (`required`, from `rag.answering.asked`; a sentence lacking it keeps `no_number_factor`).
    A focus word a sentence lacks counts as partly stated by a word of it close in meaning
    (`near`, from `rag.answering.wording.near_words`). Words the question offers as alternatives
    ("make adaptive or decompose"; `alternatives`, from `rag.answering.parts.alternatives`) are
    stated by a sentence stating any one of them.
    """
    focus = list(weights)
    total = sum(weights.values()) or 1.0
    by_doc: dict[int, list[Candidate]] = {}
    for c in pool:
        by_doc.setdefault(c.hit_index, []).append(c)
    local_weights = {i: {x: idf(x, own) for x in focus} for i, own in by_doc.items()}
    for n, (c, m) in enumerate(zip(pool, meaning)):
        c.meaning = float(m)
        if lexical:
            # Across the pool, rare words pick the paper; within one abstract, the words of what
            # is asked ("sample complexity") pick the sentence, not those naming its subject.
            local = local_weights[c.hit_index]
            stated = {x: 1.0 if matches(x, c.terms) else (near or {}).get((n, x), 0.0) for x in focus}
            for sides in alternatives or ():
                # each side's share of its focus words; every word of the group counts as the better side
                own = [[x for x in side if x in stated] for side in sides]
                shares = [sum(stated[x] for x in words) / len(words) for words in own if words]
                if shares:
                    stated.update({x: max(shares) for words in own for x in words})
            glob = sum(w * stated[x] for x, w in weights.items()) / total
            loc = sum(w * stated[x] for x, w in local.items()) / (sum(local.values()) or 1.0)
            words = 0.5 * glob + 0.5 * loc
            if phrases:
                seq = tokenize(c.text, compounds=False)
                if any(a in c.terms and b in c.terms and not has_phrase((a, b), seq) for a, b in phrases):
                    words *= 1 - t.phrase_weight  # "learning ... rate" is not "learning rate"
            c.score = t.meaning_weight * float(m) + (1 - t.meaning_weight) * words
            if not named and c.hit_index < t.meaning_alone_hits:
                # A reworded question may share no word with its answer, but a sentence sharing
                # none must be closer in meaning to count (a generic sentence often "sounds like" it).
                c.score = max(c.score, float(m) * (1.0 if words > 0 else t.meaning_alone))
        else:
            c.score = float(m)
        if required is not None and not required(c.text):
            c.score *= t.no_number_factor
        c.score -= t.rank_penalty * c.hit_index
        if asks_for_paper and INTRO.search(c.text):
            c.score += t.intro_bonus  # "which paper proposes X": the sentence naming the proposal


def choose(
    pool: list[Candidate], *, q_terms: list[str], t: OfflineSettings, weights: dict[str, float] | None = None,
    many: bool = False,
) -> list[Candidate]:
    """Pick the best sentence, then greedily the sentences that cover what it left out.

    A further sentence is kept when it covers at least `min_gain` of the question's weight
    not yet covered, or, from another document, scores within `relative_keep` of the best
    (questions whose answer spans several papers).
    """
    ranked = sorted(pool, key=lambda c: (-c.score, c.hit_index, c.chunk, c.start))
    best = ranked[0]
    chosen = [best]
    weights = weights or {t: 1.0 for t in q_terms}
    total = sum(weights.values()) or 1.0
    covered = {t for t in q_terms if matches(t, best.terms)}
    while len(chosen) < (t.max_sentences + 1 if many else t.max_sentences):
        def gain(c: Candidate) -> float:
            return sum(weights[t] for t in q_terms if t not in covered and matches(t, c.terms)) / total

        rest = [c for c in ranked if c not in chosen]
        if not rest:
            break
        docs = {x.hit_index for x in chosen}
        # Filling a gap may use any sentence of a quoted abstract, but a sentence of another
        # abstract must also be relevant on its own ("test" alone is no reason to quote a paper).
        fillers = [c for c in rest if many or c.hit_index in docs or c.score >= t.relative_keep * best.score]
        by_gain = max(fillers, key=lambda c: (gain(c), c.score)) if fillers else rest[0]
        # A question about several papers quotes each paper that is nearly as good as the best.
        keep = t.many_keep if many else t.relative_keep
        other_docs = [c for c in rest if c.hit_index not in docs and c.score >= keep * best.score]
        if q_terms and gain(by_gain) >= t.min_gain:
            pick = by_gain
        elif other_docs:
            pick = other_docs[0]
        else:
            break
        chosen.append(pick)
        covered |= {t for t in q_terms if matches(t, pick.terms)}
    return in_source_order(chosen)


def from_first_papers(chosen: list[Candidate], papers: int, hits: Sequence[Hit], *,
                      first: AbstractSet[str] = frozenset()) -> list[Candidate]:
    """The chosen sentences of at most `papers` papers: those whose doc ids are in `first`, then the best-ranked.

    Retrieval ranks a paper by the whole question; a sentence's score (measured on dev: eval/README.md,
    "Session 46") weighs its words, which a third paper may share as well as the two asked about.
    """
    ranked = sorted({c.hit_index for c in chosen}, key=lambda i: (hits[i].doc_id not in first, i))
    kept = set(ranked[:papers])
    return [c for c in chosen if c.hit_index in kept]
