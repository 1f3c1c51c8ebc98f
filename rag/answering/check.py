"""Check the citation markers of a model's answer against the sources it was given.

Markers follow `rag.markers`; claims are `rag.markers.split_claims` sentences. The rules:
- a number that names no given source is removed from the visible text and recorded;
- a claim without a citation is flagged (uncited);
- a marker is evidence only after a claim: a sentence whose words, apart from the question's
  own words, the names of the sources and words about sources ("paper", "called"), are none
  at all ("The authors of DynamicRAG are [1].", "DynamicRAG [2] and RoboRefer [3].") states
  nothing; its marker stands in for the answer. It is flagged as marker-only. Naming a paper
  does answer a question that asks which paper or method, so there names count as words;
- a marker is evidence only for what its source says: given the sources' texts, a cited claim
  whose own words (those it adds to the question) its cited sources mostly lack ("The learning
  rate was 0.0001 [1]." when [1] never says 0.0001) is flagged as unsupported. Only words in
  the sources' script are compared: in a Chinese sentence, its Latin names, terms and numbers;
- a sentence saying the sources do not tell ("The abstracts do not mention the authors.")
  needs no citation; an answer made only of such sentences is a refusal;
- the exact refusal sentence means "refused", with no citations; so does a reply holding the
  refusal sentence and no cited claim (the rest is what the model could not support).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from rag.answering.refusal import REFUSAL, is_refusal
from rag.answering.support import content_tokens
from rag.markers import MARKER, Claim, parse_marker, split_claims

# Words about sources and answers, not about the world: they carry no claim.
_META_WORDS = frozenset(
    "paper papers source sources abstract abstracts article articles study studies work works text "
    "answer question mentioned mention mentions according cited cite cites listed given provided "
    "following above below respectively etc named called titled shown described see refer refers "
    "reference references number numbered yes "
    # Verbs and ordinals that report what a source says ("The sources state that ...", "This is
    # stated in the first source."): they point at a source, they say nothing about the world.
    "state states stated say says said report reports reported indicate indicates indicated "
    "first second third fourth fifth last former latter".split()
)
# A question that asks which paper, method or work: naming one answers it.
_ASKS_WHICH = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:papers?|works?|methods?|approach(?:es)?|abstracts?|stud(?:y|ies)|"
    r"models?|frameworks?|benchmarks?|systems?|datasets?|algorithms?|techniques?)\b"
    r"|\b(?:any|some|other)\s+papers?\b|\bis\s+there\s+(?:a|an|any)\b|\bname\s+(?:the|a|one)\b"
    r"|哪篇|哪些|哪个|哪一|有没有",
    re.I,
)
# A sentence saying the sources do not tell: needs no citation (it cites an absence).
_ABSENCE = re.compile(
    r"\b(?:sources?|abstracts?|texts?|context|documents?|passages?|excerpts?|information\s+provided|"
    r"provided\s+information)\b[^.;]*?\b(?:do|does|did)\s*(?:n['\u2019]t|not)\b"
    r"|\bnot\s+(?:explicitly\s+|directly\s+|clearly\s+)?(?:mentioned|stated|specified|provided|given|reported|"
    r"available|disclosed|discussed|described|listed|included|indicated|addressed)\b"
    r"|\bno\s+(?:information|mention|details?|indication)\b"
    r"|\b(?:can(?:no|['\u2019])t|unable\s+to|impossible\s+to)\s+(?:be\s+)?(?:answer|determine|find|tell|say|know|"
    r"provide|identify)"
    r"|没有提到|未提到|未提及|没有提及|没有说明|未说明|没有提供|未提供|无法回答|无法确定|没有相关信息|未给出|没有给出",
    re.I,
)
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """A crude stem, so "takes"/"take" and "introduced"/"introduces"/"introduce" compare equal."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def asks_which(question: str) -> bool:
    """True when the question asks which paper, method or work (a name answers it)."""
    return bool(_ASKS_WHICH.search(question or ""))


def is_absence(sentence: str) -> bool:
    """True when the sentence says the sources do not tell something."""
    return bool(_ABSENCE.search(sentence))


def _cjk(token: str) -> bool:
    return "\u3400" <= token[0] <= "\u9fff"


def held_share(words: Sequence[str], sources: Sequence[str]) -> float:
    """Share of the words (compared by stem) that occur in the source texts."""
    if not words:
        return 1.0
    # A compound also holds its parts: "tree-structured" holds "tree" (and "trees").
    pool = {_stem(p) for text in sources for t in content_tokens(text) for p in {t, *re.split(r"[-/]", t)} if p}
    return sum(1 for t in words if _stem(t) in pool) / len(words)


def added_words(sentence: str, question: str = "", labels: Sequence[str] = ()) -> list[str]:
    """The words a sentence adds that a source must hold: its claim words outside CJK script."""
    return [t for t in claim_words(sentence, question, labels) if not _cjk(t)]


def claim_words(sentence: str, question: str = "", labels: Sequence[str] = ()) -> list[str]:
    """The sentence's content words that are not the question's, a source's name or about sources."""
    asked = {_stem(t) for t in content_tokens(question)}
    names: set[str] = set()
    if not asks_which(question):
        for label in labels:
            if label and len(label.split()) <= 4:
                names.update(_stem(t) for t in content_tokens(label))
    return [t for t in content_tokens(sentence)
            if t not in _META_WORDS and _stem(t) not in asked and _stem(t) not in names]


@dataclass
class CitationCheck:
    """The validated answer and everything wrong with the original."""

    text: str  # user-visible text: invalid markers removed
    cited: list[int]  # 1-based source numbers, in order of first citation
    refused: bool
    # (marker as written, the numbers or ranges in it that name no given source)
    invalid: list[tuple[str, list[str]]] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)  # sentences with no valid citation
    empty: bool = False
    k: int = 0
    marker_only: list[str] = field(default_factory=list)  # sentences whose marker stands for the answer
    unsupported: list[str] = field(default_factory=list)  # cited sentences their sources do not state
    absent: list[str] = field(default_factory=list)  # "the sources do not say" sentences (need no citation)
    claims: list[Claim] = field(default_factory=list)  # every sentence of `text`

    @property
    def ok(self) -> bool:
        return not (self.invalid or self.uncited or self.marker_only or self.unsupported or self.empty)

    @property
    def needs_model(self) -> bool:
        """True when a problem remains that only the model can fix (not a removed marker)."""
        return bool(self.uncited or self.marker_only or self.unsupported or self.empty)

    def marker_problems(self) -> list[str]:
        """One warning per marker naming a source that was not given (removed from the text)."""
        given = f"only sources 1 to {self.k} exist" if self.k else "no sources were given"
        return [f"citation check: citation {marker} names source {', '.join(bad)}, which was not given ({given})"
                for marker, bad in self.invalid]

    def problems(self) -> list[str]:
        """Describe each problem in one line, precisely enough for the model to fix it."""
        out = []
        if self.empty:
            out.append("the answer was empty")
        given = f"only sources 1 to {self.k} exist" if self.k else "no sources were given"
        for marker, bad in self.invalid:
            out.append(f"citation {marker} names source {', '.join(bad)}, which was not given ({given})")
        for sentence in self.uncited:
            out.append(f'this sentence has no [n] citation: "{clip(sentence)}"')
        for sentence in self.marker_only:
            out.append(f'this sentence states nothing the question did not already say; its marker stands in for '
                       f'the answer: "{clip(sentence)}"')
        for sentence in self.unsupported:
            out.append(f'the sources this sentence cites do not state it: "{clip(sentence)}"')
        return out


def clip(text: str, width: int = 160) -> str:
    """One line of at most `width` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _needs_citation(sentence: str) -> bool:
    if not any(ch.isalpha() for ch in sentence):
        return False  # a stray number or bullet, not a claim
    return not is_refusal(sentence)


def check_citations(text: str, k: int, *, question: str = "", labels: Sequence[str] = (),
                    sources: Sequence[str] = (), min_held: float = 0.6) -> CitationCheck:
    """Validate the markers of `text` against sources 1..k and flag uncited, marker-only and unsupported claims.

    `question` and `labels` (the sources' names, in order) decide what a marker-only claim is;
    without them only the words about sources are discounted. With `sources` (their texts, in
    order), a cited claim whose added words its cited sources hold less than `min_held` of is
    unsupported.
    """
    invalid: list[tuple[str, list[str]]] = []

    def rewrite(m: re.Match) -> str:
        valid, bad = parse_marker(m.group(2), k)
        if not bad:
            return m.group(0)
        invalid.append((f"[{m.group(2)}]", bad))
        return f"{m.group(1)}[{', '.join(map(str, valid))}]" if valid else ""

    if is_refusal(text):
        MARKER.sub(rewrite, text)  # record invalid markers, but the answer is the refusal
        return CitationCheck(text=REFUSAL, cited=[], refused=True, invalid=invalid, k=k)

    visible = MARKER.sub(rewrite, text).strip()
    cited: list[int] = []
    for m in MARKER.finditer(visible):
        cited.extend(parse_marker(m.group(2), k)[0])
    claims = split_claims(visible)
    uncited, marker_only, unsupported, absent, stated = [], [], [], [], 0
    said_refusal = False
    for c in claims:
        if is_refusal(c.text):
            said_refusal = True
        if not _needs_citation(c.text):
            continue
        if not c.cites:
            if is_absence(c.text):
                absent.append(c.text)
            else:
                uncited.append(c.text)
        elif not claim_words(c.text, question, labels):
            marker_only.append(c.text)
        elif sources and held_share(added_words(c.text, question, labels),
                                    [sources[n - 1] for n in c.cites if 1 <= n <= len(sources)]) < min_held:
            unsupported.append(c.text)
        else:
            stated += 1
    if visible and ((absent and not (stated or uncited or marker_only or unsupported))
                    or (said_refusal and not stated)):
        # Every sentence says the sources do not tell (a refusal in other words), or the reply
        # holds the refusal and no cited claim: what else it says is unsupported.
        return CitationCheck(text=REFUSAL, cited=[], refused=True, invalid=invalid, k=k, absent=absent)
    return CitationCheck(
        text=visible,
        cited=list(dict.fromkeys(cited)),
        refused=False,
        invalid=invalid,
        uncited=uncited,
        empty=not visible,
        k=k,
        marker_only=marker_only,
        unsupported=unsupported,
        absent=absent,
        claims=claims,
    )
