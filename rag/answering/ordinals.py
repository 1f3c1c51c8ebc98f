"""Which paper a part of a question points at: by its place ("the first", "the latter", 前者) among the
papers the question introduced in order, or by a definite description beside another part's.

"Two papers: the model-free HJB one and the trust-region one. What does the first propose, and what
applications does the second demonstrate?" asks one thing of each paper, in the order the question
gave them; "What speedup does the early-exit one report, and which models did the pruning one test?"
asks one thing of each paper it describes. Such a part is answered from its paper alone, as if it named
it: the words "first" or "early-exit one" say which paper is meant, not what a sentence must state.
"""
from __future__ import annotations

import re

from rag.answering.named import Similarity, closest_described, descriptions, doc_ids, without_field_acronyms, written
from rag.types import Hit
from rag.text import mostly_cjk

# "the first (one / paper)", "the former", "the latter" (`_reference`); 前者 / 后者, 第一篇 / 第二篇.
_ORDINAL_EN = re.compile(r"\bthe\s+(?P<word>first|second|third|former|latter)"
                         r"(?P<paper>\s+(?:one|paper|work|study|method|approach|model|framework)\b)?", re.I)
# (do and the modals take a verb after their subject, "does the first propose"; "is the first stage" is a noun)
_AFTER_AUXILIARY = re.compile(r"\b(?:does|did|do|can|could|would|will|should)\s+$", re.I)
_ENDS_PHRASE = re.compile(r"\s*(?:'s\b|[,;:?.!)]|$)")
_NOUN_AFTER_FORMER = re.compile(r"\s+(?:half|part|parts|case|cases|term|terms|one's)\b", re.I)
_ORDINAL_ZH = re.compile(r"(?P<word>前者|后者|第一篇|第二篇|第三篇)")
_POSITION = {"first": 0, "former": 0, "second": 1, "third": 2, "latter": -1,
             "前者": 0, "后者": -1, "第一篇": 0, "第二篇": 1, "第三篇": 2}
# Where one paper's mention ends and the next begins: "X and the trust-region one", "X、Y", "X: ..., and ...".
_BETWEEN_MENTIONS = re.compile(r"\s*(?:[,;:.?!，。；：？！、]|\s-{1,3}\s|[—–])\s*|\s+(?:and|vs\.?|versus)\s+|\s*(?:和|与|以及|及)\s*",
                               re.I)
# A paper described by what it does, after a count of papers: "the model-free HJB one", "one measuring how
# much noisy forecasts help an online controller" (not "the first one", "the other one").
ONE_DESCRIBED = re.compile(r"\bthe\s+(?!(?:first|second|third|other|same|former|latter|last|only)\b)"
                           r"(?:(?!(?:from|of|in|on|to|for|with|by|at|as|this|that|each|every|any|no|and|or)\b)"
                           r"[\w/'-]+\s+){1,5}?one\b|\bone\s+(?:that\s+|which\s+)?"
                           r"(?:\w+ing|on|about|for|with|where|in)\b[^,;:.?!]*", re.I)
_SEVERAL = re.compile(r"\b(?:papers|works|studies|articles|methods|approaches)\b", re.I)
_INDEFINITE = re.compile(r"\s*(?:a|an|one)\b", re.I)
# The clause the reference stands in begins after the last sentence or clause break before it.
_CLAUSE_START = re.compile(r".*[.?!:;。？！：；]\s*", re.S)


def _reference(text: str) -> re.Match | None:
    """The first reference to a paper by its place. "The first" before a noun other than a word for a
    paper ("the first stage", "the first to prune") is none: it is one when a word for a paper follows,
    or punctuation, or when it is the subject after an auxiliary ("what does the first propose?")."""
    if mostly_cjk(text):
        return _ORDINAL_ZH.search(text)
    for m in _ORDINAL_EN.finditer(text):
        after = text[m.end():]
        if re.match(r"\s+to\b", after, re.I):
            continue
        if (m.group("paper") or _ENDS_PHRASE.match(after) or _AFTER_AUXILIARY.search(text[:m.start()])
                or m.group("word").casefold() in ("former", "latter") and not _NOUN_AFTER_FORMER.match(after)):
            return m
    return None


def _mentions(text: str, hits: list[Hit], named: dict[str, list[str]],
              similarity: Similarity) -> list[tuple[str, list[str]]]:
    """The papers the text mentions, in order: each stretch between conjunctions or punctuation that
    writes a paper's name, or describes one, is one mention (a name written there decides which paper)."""
    out: list[tuple[str, list[str]]] = []
    for stretch in _BETWEEN_MENTIONS.split(text):
        names = [n for n in named if written(n).search(stretch)]
        if names:
            first = min(names, key=lambda n: written(n).search(stretch).start())
            out.append((first, named[first]))
            continue
        # ("two of the papers approach ...", "both works" speak of several papers, not of one)
        described = next((m for m in descriptions(stretch, named) if not _SEVERAL.search(m.group())), None) \
            or ONE_DESCRIBED.search(stretch)
        if described is not None:
            best = closest_described(described.group(), hits, similarity, taken=doc_ids(dict(out)))
            if best is not None:
                out.append((described.group().strip(), [best]))
    return out


def pointed_papers(question: str, parts: list[str], hits: list[Hit], named: dict[str, list[str]] | None,
                   similarity: Similarity | None) -> list[tuple[str, dict[str, list[str]]] | None]:
    """For each part of the question, (its clause with the reference read as "it", {mention: doc ids}) when
    it refers to one of the papers the question gave, else None.

    A part refers to a paper by its place ("the first", 前者) among the two or more papers the question
    mentioned before its first such reference; or, in a question naming no paper, by a description
    ("What speedup does the early-exit one report, and which models did the pruning one test?") when two
    or more parts describe papers so and their descriptions pick different retrieved abstracts."""
    none: list[tuple[str, dict[str, list[str]]] | None] = [None] * len(parts)
    if similarity is None or not hits:
        return none
    # (each part's reference is found first: the papers are resolved, by the sentence model, only when a
    # question has a part to point at them, and once for all its parts)
    first = _reference(question)
    if first is not None:
        refs = [_reference(part) for part in parts]
        if not any(refs):
            return none
        mentions = _mentions(question[:first.start()], hits, without_field_acronyms(named or {}, hits), similarity)
        if len(mentions) < 2 or len({frozenset(docs) for _, docs in mentions}) < len(mentions):
            return none  # fewer than two papers before the first reference, or two mentions of one paper
        return [_by_place(part, ref, mentions) if ref is not None else None for part, ref in zip(parts, refs)]
    if named:
        return none  # (a part describing a paper beside named ones: `described_apart`)
    described = [_description(part) for part in parts]
    if sum(found is not None for found in described) < 2:
        return none
    pointed = [_by_description(*found, hits, similarity) if found is not None else None for found in described]
    papers = {frozenset(docs) for found in pointed if found for docs in found[1].values()}
    return pointed if len(papers) >= 2 else none


def _clause_with_it(part: str, ref: re.Match) -> str:
    """The clause of the part holding the reference, the reference read as "it" (它)."""
    start = m.end() if (m := _CLAUSE_START.match(part[:ref.start()])) else 0
    clause = part[start:ref.start()] + ("它" if mostly_cjk(part) else "it") + part[ref.end():]
    return " ".join(clause.split())


def _description(part: str) -> tuple[str, re.Match] | None:
    """(the last clause of the part, the definite description of a paper in it), or None."""
    body = part.rstrip(" ?？.!。！")
    clause = part[m.end():] if (m := _CLAUSE_START.match(body)) else part
    # (a definite description refers to a paper given before; "a method that does this" asks for one)
    ref = next((m for m in [*descriptions(clause, {}), *ONE_DESCRIBED.finditer(clause)]
                if not _SEVERAL.search(m.group()) and not _INDEFINITE.match(m.group())), None)
    return (clause, ref) if ref is not None else None


def _by_description(clause: str, ref: re.Match, hits: list[Hit],
                    similarity: Similarity) -> tuple[str, dict[str, list[str]]] | None:
    """The paper the description in the clause picks: the retrieved abstract closest to it."""
    best = closest_described(ref.group(), hits, similarity, taken=frozenset())
    return (_clause_with_it(clause, ref), {ref.group().strip(): [best]}) if best is not None else None


def _by_place(part: str, ref: re.Match, mentions: list[tuple[str, list[str]]]) -> tuple[str, dict[str, list[str]]] | None:
    """The mention the part's reference points at by its place, or None when there are fewer."""
    at = _POSITION[ref.group("word").casefold()]
    if at >= len(mentions):
        return None
    mention, docs = mentions[at]
    return _clause_with_it(part, ref), {mention: docs}
