"""The offline answerer: extract the sentences that answer the question, each cited.

No model writes text here: every sentence of the answer is a sentence of a retrieved
abstract, followed by the `[n]` marker of the source it came from. When the evidence does
not cover the question, the answer is the fixed refusal sentence with no citations.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from rag.answering.refusal import REFUSAL, asks_unstated_detail
from rag.clean import clean
from rag.config import OfflineSettings
from rag.index.lexical import CJK, tokenize
from rag.text import split_sentences
from rag.types import Hit

# Words that frame a question but say nothing about its topic.
_QUESTION_WORDS = set(tokenize(
    "which what who whom whose when where why how does do did is are was were can could "
    "paper papers abstract abstracts study studies work works propose proposes proposed introduce "
    "introduces present presents describe describes method methods approach approaches "
    "tell me about explain mention mentions report reports any there according corpus "
    "main key idea contribution contributions many much need needs kind type types called name named "
    "give list show find use uses used using achieve achieves achieved obtain obtains reach reaches"
))
_ASKS_FOR_PAPER = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:paper|papers|work|method|model|framework|system|benchmark|approach)\b|\bpropos|\bintroduc", re.I)
# Questions whose answer may span papers ("which papers ...", "compare ...").
_ASKS_FOR_SEVERAL = re.compile(r"\b(?:papers|works|methods|approaches|studies|models|both|compare[sd]?|"
                               r"comparison|versus|vs\.?)\b|哪些|比较", re.I)
_INTRO = re.compile(r"\b(?:we|this paper|this work)\s+(?:\w+\s+)?(?:propose|introduce|present|develop|release)\b", re.I)

# The thresholds (coverage, gains, bonuses) are the `offline` settings group: see
# rag.config.OfflineSettings for what each one decides.


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


def is_crosslingual(question: str) -> bool:
    """True when the question is mostly CJK, so word overlap with English text means little."""
    cjk = len(CJK.findall(question))
    latin = len(re.findall(r"[A-Za-z]", question))
    return cjk > 0 and cjk >= latin / 3


def _candidates(hits: list[Hit], passages: dict[int, list[tuple[str, str]]] | None = None) -> list[Candidate]:
    """Every quotable sentence of the hits; `passages` gives a hit's document as all its chunks."""
    out = []
    for i, hit in enumerate(hits):
        seen: set[str] = set()
        for n, (chunk_id, body) in enumerate((passages or {}).get(i) or [(hit.chunk_id, hit.text)]):
            for s, e in split_sentences(body):
                text = body[s:e].strip()
                if len(text) < 20 or text in seen or text.lower().startswith(
                        ("project page", "code is available", "code:")):
                    continue  # too short, boilerplate, or repeated in the overlap of two chunks
                seen.add(text)
                out.append(Candidate(i, s, e, text, set(tokenize(text)), chunk=n, chunk_id=chunk_id))
    return out


def _matches(term: str, terms: set[str]) -> bool:
    """True when the stemmed term, or a word sharing its stem prefix (sampl/sampler), occurs."""
    if term in terms:
        return True
    if len(term) < 5:
        return False
    # Close stems only: sampl/sampler, not data/dataset or stand/standardis.
    return any(len(t) >= 5 and abs(len(t) - len(term)) <= 3 and (t.startswith(term) or term.startswith(t))
               for t in terms)


def _idf(term: str, pool: list[Candidate]) -> float:
    df = sum(1 for c in pool if _matches(term, c.terms))
    return math.log(1 + (len(pool) + 1) / (df + 0.5))


@dataclass
class OfflineResult:
    text: str
    cited: list[int]  # hit indices, in order of first citation
    refused: bool
    coverage: float
    quoted_chunks: dict[int, str] = field(default_factory=dict)  # hit index -> chunk quoted first


def compose(
    question: str,
    hits: list[Hit],
    *,
    embed=None,
    passages: dict[int, list[tuple[str, str]]] | None = None,
    thresholds: OfflineSettings | None = None,
) -> OfflineResult:
    """Answer from hits by sentence extraction.

    `embed(texts, question) -> similarities` enables the cross-lingual path; `passages` maps a
    hit index to all (chunk_id, text) chunks of its document, so a long abstract is quoted
    from whichever chunk holds the answer, not only from the chunk that was retrieved.
    """
    t = thresholds or OfflineSettings()
    if not hits:
        return OfflineResult(REFUSAL, [], True, 0.0)
    pool = _candidates(hits, passages)
    if not pool:
        return OfflineResult(REFUSAL, [], True, 0.0)

    # Hyphenated words count by their parts ("actor-critic": actor, critic), not a third time.
    q_terms = [t for t in dict.fromkeys(tokenize(question, compounds=False)) if t not in _QUESTION_WORDS]
    q_terms = [t for t in q_terms if not CJK.match(t)]
    evidence = " ".join(clean(h.text) for h in hits[:2])
    if asks_unstated_detail(question, evidence):
        return OfflineResult(REFUSAL, [], True, 0.0)
    crosslingual = is_crosslingual(question) or not q_terms

    if crosslingual:
        if embed is None or (hits[0].dense_score or 0.0) < t.min_dense_crosslingual:
            return OfflineResult(REFUSAL, [], True, 0.0)
        # Sentence similarity across languages is noisy: quote the best abstract, and the
        # second only when retrieval could hardly tell them apart.
        near = [i for i, h in enumerate(hits[:2]) if (h.dense_score or 0) >= (hits[0].dense_score or 0) - 0.01]
        top = [c for c in pool if c.hit_index in near]
        vectors = embed([c.text for c in top], question)
        for c, sim in zip(top, vectors):
            c.score = float(sim) + (0.02 if c.hit_index == 0 else 0.0)
        chosen = _choose(top, q_terms=[], t=t)
        return OfflineResult(_render(chosen, hits), _cited(chosen), False, float(hits[0].dense_score or 0.0),
                             _quoted_chunks(chosen))

    asks_for_paper = bool(_ASKS_FOR_PAPER.search(question))
    weights = {t: _idf(t, pool) for t in q_terms}
    total = sum(weights.values())
    for i in range(len(hits)):
        own = [c for c in pool if c.hit_index == i]
        # Within one abstract, the words naming its subject recur in many sentences; the
        # words of what is asked ("sample complexity") pick out the sentence that answers.
        local = {t: _idf(t, own) for t in q_terms}
        local_total = sum(local.values())
        for c in own:
            glob = sum(w for t, w in weights.items() if _matches(t, c.terms)) / total
            loc = sum(w for t, w in local.items() if _matches(t, c.terms)) / local_total
            c.score = 0.5 * glob + 0.5 * loc - 0.03 * c.hit_index
            if asks_for_paper and _INTRO.search(c.text):
                c.score += t.intro_bonus  # "which paper proposes X": the sentence naming the proposal
    # The evidence must cover the question's terms within one document, or, for questions
    # that span papers, within two documents that each cover a fair share.
    doc_terms = [{t for t in q_terms if any(_matches(t, c.terms) for c in pool if c.hit_index == i)}
                 for i in range(len(hits))]
    doc_cov = sorted(((sum(weights[t] for t in ts) / total, ts) for ts in doc_terms), key=lambda x: -x[0])
    best_doc_cov = doc_cov[0][0]
    pair_cov = 0.0
    if len(doc_cov) > 1 and doc_cov[1][0] >= t.min_share_each:
        pair_cov = sum(weights[t] for t in doc_cov[0][1] | doc_cov[1][1]) / total
    if best_doc_cov < t.min_coverage and pair_cov < t.min_pair_coverage:
        return OfflineResult(REFUSAL, [], True, best_doc_cov)
    chosen = _choose(pool, q_terms=q_terms, weights=weights, many=bool(_ASKS_FOR_SEVERAL.search(question)), t=t)
    if not chosen or chosen[0].score <= 0:
        return OfflineResult(REFUSAL, [], True, best_doc_cov)
    return OfflineResult(_render(chosen, hits), _cited(chosen), False, best_doc_cov, _quoted_chunks(chosen))


def _choose(
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
    covered = {t for t in q_terms if _matches(t, best.terms)}
    while len(chosen) < t.max_sentences:
        def gain(c: Candidate) -> float:
            return sum(weights[t] for t in q_terms if t not in covered and _matches(t, c.terms)) / total

        rest = [c for c in ranked if c not in chosen]
        if not rest:
            break
        docs = {x.hit_index for x in chosen}
        # Filling a gap may use any sentence of a quoted abstract, but a sentence of another
        # abstract must also be relevant on its own ("test" alone is no reason to quote a paper).
        fillers = [c for c in rest if many or c.hit_index in docs or c.score >= t.relative_keep * best.score]
        by_gain = max(fillers, key=lambda c: (gain(c), c.score)) if fillers else rest[0]
        other_docs = [c for c in rest if c.hit_index not in docs and c.score >= t.relative_keep * best.score]
        if q_terms and gain(by_gain) >= t.min_gain:
            pick = by_gain
        elif other_docs:
            pick = other_docs[0]
        else:
            break
        chosen.append(pick)
        covered |= {t for t in q_terms if _matches(t, pick.terms)}
    # Read in source order: by document rank, then position in the abstract.
    return sorted(chosen, key=lambda c: (c.hit_index, c.chunk, c.start))


def _render(chosen: list[Candidate], hits: list[Hit]) -> str:
    """Join the quoted sentences with their markers, naming each paper the quotes do not name."""
    parts: list[str] = []
    for i, c in enumerate(chosen):
        first_of_doc = i == 0 or chosen[i - 1].hit_index != c.hit_index
        label = hits[c.hit_index].label
        group = " ".join(x.text for x in chosen if x.hit_index == c.hit_index)
        named = label.endswith("…") or clean(label).lower() in clean(group).lower()
        prefix = f"{label}: " if first_of_doc and not named else ""
        parts.append(f"{prefix}{c.text} [{c.hit_index + 1}]")
    return " ".join(parts)


def _quoted_chunks(chosen: list[Candidate]) -> dict[int, str]:
    out: dict[int, str] = {}
    for c in chosen:
        out.setdefault(c.hit_index, c.chunk_id)
    return out


def _cited(chosen: list[Candidate]) -> list[int]:
    return list(dict.fromkeys(c.hit_index for c in chosen))


def cosine_scorer(embedder):
    """Adapt an embedder into the `embed(texts, question)` callable `compose` uses."""

    def embed(texts: list[str], question: str) -> list[float]:
        q = embedder.embed_query(question)
        vecs = embedder.embed_passages([clean(t) for t in texts])
        return list(np.asarray(vecs) @ np.asarray(q))

    return embed
