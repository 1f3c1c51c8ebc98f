"""What an offline answer quotes besides its evidence, and how the quotes are written.

Once the evidence has decided to answer, sentences are added for the reader (they never decide
whether to answer): the next best sentences of the quoted passage, the paper's own answer after a
background sentence, its "we propose" sentence, a sentence denying the question's premise. Every
quote comes from the passage its citation shows, and is followed by its source's `[n]` marker.
"""
from __future__ import annotations

import re
from functools import lru_cache

from rag.answering.candidates import Candidate, in_source_order
from rag.clean import clean
from rag.config import OfflineSettings
from rag.markers import strip_markers
from rag.text import split_sentences
from rag.types import Hit

# A sentence about prior work or the problem ("Existing methods ...", "However, most ...") is the
# abstract's context: what the paper itself does is stated after it.
BACKGROUND = re.compile(r"^(?:existing|prior|previous|current|conventional|traditional|standard|typical|most|many|"
                         r"however|despite|although|while|yet|unfortunately|recent|recently)\b", re.I)
# A sentence saying what is done in place of what the sentence before it rules out.
_IN_PLACE = re.compile(r"^(?:instead|rather|in contrast|by contrast)\b", re.I)
OWN_WORK = re.compile(r"\b(?:we|our|this (?:paper|work))\b", re.I)
# "We propose ...", "This paper introduces ...": the sentence stating the paper's own proposal.
INTRO = re.compile(r"\b(?:we|this paper|this work)\s+(?:\w+\s+)?(?:propose|introduce|present|develop|release)s?\b", re.I)


def with_next_best(chosen: list[Candidate], pool: list[Candidate], t: OfflineSettings) -> list[Candidate]:
    """Add the best further sentences of the quoted passages scoring `context_keep` of the best, up to
    `context_sentences` in all: which sentence answers is least certain when the words of the question are not
    the abstract's, and the next best sentence of the same paper often holds what the best one leaves out."""
    best = max(c.score for c in chosen)
    passages = {(c.hit_index, c.chunk) for c in chosen}  # the passage a citation shows must hold the sentence
    more = sorted((c for c in pool if (c.hit_index, c.chunk) in passages and c not in chosen
                   and c.score >= t.context_keep * best),
                  key=lambda c: (-c.score, c.hit_index, c.chunk, c.start))[:max(0, t.context_sentences - len(chosen))]
    return in_source_order([*chosen, *more]) if more else chosen


def with_each_paper(chosen: list[Candidate], pool: list[Candidate], papers: list[set[int]]) -> list[Candidate]:
    """Add, for each named paper none of whose abstracts is quoted yet, its best-scoring sentence.

    For a comparison of the papers a question names: an answer about one of them leaves the other
    half of the question unanswered. `papers` holds, per name, the hits it may mean (among thousands
    of abstracts a name may label two papers: "DISCO" guidance and "DISCO" convolutions); the one
    whose sentence scores best is the paper meant.
    """
    quoted = {c.hit_index for c in chosen}
    more = []
    for hits in papers:
        own = [c for c in pool if c.hit_index in hits]
        if own and not hits & quoted:
            more.append(max(own, key=lambda c: (c.score, -c.hit_index, -c.start)))
    return in_source_order([*chosen, *more]) if more else chosen


def with_writing(chosen: list[Candidate], pool: list[Candidate], names: list[re.Pattern[str]]) -> list[Candidate]:
    """Add, for each quoted paper whose quotes write none of `names`, its best sentence writing one.

    An answer listing the papers that share a named thing ("Which papers deploy on the G1 humanoid?")
    quotes, for each paper, where it writes the name: that sentence is why the paper is listed.
    """
    out = list(chosen)
    for paper in dict.fromkeys(c.hit_index for c in chosen):
        if any(n.search(c.text) for c in out if c.hit_index == paper for n in names):
            continue
        writing = [c for c in pool if c.hit_index == paper and any(n.search(c.text) for n in names)]
        if writing:
            out.append(max(writing, key=lambda c: c.score))
    return in_source_order(out) if len(out) > len(chosen) else chosen


def with_followers(chosen: list[Candidate], pool: list[Candidate]) -> list[Candidate]:
    """Add, after each quoted background sentence, the paper's own answer to it.

    A sentence about prior work or the problem ("Existing methods evaluate every action") reads as
    the paper's claim when quoted alone; the paper's own answer comes later in the abstract, in a
    sentence about its own work ("we ...", "our approach ..."): the one of those scoring best for
    the question, else the next sentence. Only a background sentence that does not itself speak of
    the paper's work gets a follower.

    Any quoted sentence followed by one beginning "Instead" or "Rather" ("IOSTOM excludes actions from
    its objective. Instead, we learn an implicit policy ...") gets that one too: it says what is done
    in place of what the quoted sentence rules out.
    """
    out = list(chosen)
    for c in chosen:
        after = [x for x in pool if x.hit_index == c.hit_index and x.chunk == c.chunk and x.start > c.start]
        following = min(after, key=lambda x: x.start, default=None)
        if following is not None and _IN_PLACE.match(following.text) and following not in out:
            out.append(following)
        if not BACKGROUND.match(c.text) or OWN_WORK.search(c.text):
            continue
        own = [x for x in after if OWN_WORK.search(x.text)]
        nxt = max(own, key=lambda x: (x.score, -x.start)) if own else min(after, key=lambda x: x.start, default=None)
        if nxt is not None and nxt not in out:
            out.append(nxt)
    return in_source_order(out)


def with_proposal(chosen: list[Candidate], pool: list[Candidate], *, every_paper: bool = False) -> list[Candidate]:
    """For a question about what a paper proposes, quote the sentence where it says so ("we propose
    ...") when the quotes of its abstract lack one: the proposal is the answer, its context is not.

    `every_paper`: the question asks which papers propose something, so each quoted paper gets it.
    """
    out = list(chosen)
    papers = list(dict.fromkeys(c.hit_index for c in chosen))
    for paper in papers if every_paper else papers[:1]:
        if any(c.hit_index == paper and INTRO.search(c.text) for c in out):
            continue
        intro = [c for c in pool if c.hit_index == paper and INTRO.search(c.text)]
        if intro:
            out.append(max(intro, key=lambda c: (c.score, -c.start)))
    return in_source_order(out)


def denies(text: str, term: str, question: str) -> bool:
    """True when the text denies the (stemmed) term: "no extra models", "without labels", "label-free".

    "X-free" is a denial only when the question does not itself say "X-free" ("prompt-free reward"
    and "model-free RL" are names of things, not denials, when the question uses them).
    """
    negated, free = _denial_patterns(term)
    if negated.search(text):
        return True
    return bool(free.search(text)) and not free.search(question)


@lru_cache(maxsize=4096)
def _denial_patterns(term: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """"no/without ... term" and "term-free", compiled once per term (re's own cache holds 512)."""
    t = re.escape(term)
    return (re.compile(rf"\b(?:no|not|without|never|free of)[\s-]+(?:\w+[\s-]+)?{t}\w*", re.I),
            re.compile(rf"\b{t}\w*-free\b", re.I))


def denial(chosen: list[Candidate], pool: list[Candidate], focus: list[str], question: str) -> Candidate | None:
    """The best sentence of a quoted abstract, not yet chosen, that denies one of the focus words, or None."""
    docs = {c.hit_index for c in chosen}
    for c in sorted(pool, key=lambda c: -c.score):
        if c.hit_index in docs and c not in chosen and any(denies(c.text, x, question) for x in focus):
            return c
    return None


def with_denial(chosen: list[Candidate], pool: list[Candidate], focus: list[str], question: str) -> list[Candidate]:
    """Add the quoted abstract's sentence that denies what the question assumes, if one does.

    "Which extra model does X train?" about a paper whose abstract says it "requires no extra
    models": the denial is the answer to the question's premise, whatever else scored best.
    """
    c = denial(chosen, pool, focus, question)
    return chosen if c is None else in_source_order([*chosen, c])


def render(chosen: list[Candidate], hits: list[Hit]) -> str:
    """Join the quoted sentences with their markers, naming each paper the quotes do not name."""
    parts: list[str] = []
    for i, c in enumerate(chosen):
        first_of_doc = i == 0 or chosen[i - 1].hit_index != c.hit_index
        label = hits[c.hit_index].label
        group = " ".join(x.text for x in chosen if x.hit_index == c.hit_index)
        named = label.endswith("…") or clean(label).lower() in clean(group).lower()
        prefix = f"{one_sentence(label)}: " if first_of_doc and not named else ""
        # An abstract's own reference numbers ("MetaWorld [1] and RoboSuite [2,3]") would read as this
        # answer's citations of other sources: they point into a bibliography the abstract lacks.
        parts.append(f"{prefix}{strip_markers(c.text)} [{c.hit_index + 1}]")
    return " ".join(parts)


def one_sentence(label: str) -> str:
    """A label cut to its first sentence: a title such as "Revenge of the Fallen? Recurrent Models
    Match Transformers" would otherwise read as an uncited sentence of its own before the quote."""
    pieces = split_sentences(label)
    return label[pieces[0][0]:pieces[0][1]].strip() if len(pieces) > 1 else label


def passages_shown(chosen: list[Candidate], passages: dict[int, list[tuple[str, str]]] | None
                   ) -> dict[int, tuple[str, str]]:
    """The passage (chunk id, text) each quoted abstract's citation shows, holding every sentence quoted
    from it; the text is "" when it is the hit's own chunk (no `passages` for it).

    A citation shows a passage of a long abstract; a sentence quoted from another chunk would stand
    under a citation that does not contain it. When the sentences of one abstract come from several
    chunks ("the 1.5B and 7B results" in one, "fine-tuned from DeepSeek-R1-Distill-Qwen" in another),
    the citation shows the run of chunks from the first to the last, joined where they overlap, its id
    their ids joined by "+"; an abstract of one chunk shows that chunk.
    """
    by_doc: dict[int, list[Candidate]] = {}
    for c in chosen:
        by_doc.setdefault(c.hit_index, []).append(c)
    shown: dict[int, tuple[str, str]] = {}
    for i, quoted in by_doc.items():
        found = (passages or {}).get(i)
        if not found:
            shown[i] = (quoted[0].chunk_id, "")
            continue
        # a candidate's `chunk` is its position in the abstract's passages (`candidates`)
        run = found[min(c.chunk for c in quoted):max(c.chunk for c in quoted) + 1]
        text = run[0][1]
        for _, more in run[1:]:
            text = _joined(text, more)
        shown[i] = ("+".join(cid for cid, _ in run), text)
    return shown


def _joined(first: str, second: str) -> str:
    """Two consecutive chunks as one text: the second's opening that repeats the first's end (their
    overlap) written once."""
    for k in range(min(len(first), len(second)), _MIN_OVERLAP - 1, -1):
        if first.endswith(second[:k]) and (k == len(second) or not second[k - 1].isalnum() or
                                           not second[k].isalnum()):
            return first + second[k:]
    return f"{first} {second}"


_MIN_OVERLAP = 20  # characters: a shorter repeat ("the", ".") is chance, not the chunks' overlap


def cited(chosen: list[Candidate]) -> list[int]:
    return list(dict.fromkeys(c.hit_index for c in chosen))
