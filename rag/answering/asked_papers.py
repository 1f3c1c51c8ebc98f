"""Which papers a question asks about: the papers it names (by a name, by its label's words, by a
description beside a name) and whether it asks for several.

The first stage of the offline answer (`rag.answering.offline`): the later stages quote only the
papers settled here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from rag.answering.framing import COMPARISON_TERMS, QUESTION_WORDS
from rag.answering.named import (Similarity, as_spelled, described_in_chinese, described_other, described_papers,
                                 doc_ids, listed_after_name, named_by_label, named_by_label_zh, one_and_another,
                                 paper_names, papers_named, quoted_labels, texts_of, without_examples)
from rag.config import OfflineSettings
from rag.index.translate import is_chinese
from rag.types import Hit

# Questions naming no paper whose answer may span papers: a word for papers ("which papers ...",
# "Several abstracts ..."), a plural noun after a word that picks or counts them ("which methods", "two
# approaches"), or "Compare ...". Elsewhere a plural noun, "both" or "vs" describes one paper's topic
# ("Reward models ignore the prompt ...", "helps both sampling and fine-tuning", "accuracy-vs-length"),
# and "Which paper studies X?" asks for one. (A word for papers in Chinese: _ASKS_FOR_PAPERS's 论文.)
# With no paper named, "each paper" ("time-reversal ideas in rl: how does each paper use reversed data") is
# one of several.
_ASKS_FOR_SEVERAL = re.compile(r"\b(?:papers|articles|abstracts)\b|\b(?:which|what|these|those|both|two|three|"
                               r"several|other|different|various|any)\s+(?:(?!paper\b|work\b|article\b|study\b)"
                               r"[\w-]+\s+)?(?:works|methods|approaches|studies|models)\b|\bcompare\b|哪些"
                               r"|\beach\s+(?:paper|work|study|article|one|method|approach)\b", re.I)
# "Which paper ...?": the asker does not know which paper it is.
ASKS_WHICH_PAPER = re.compile(r"\bwhich (?:paper|work|article|study)\b|哪篇", re.I)
# "Which approach lets you prune a ViT once ...?", "Which method sets ...?": the method asked for is the
# subject of what the question describes, so the question asks which paper it is (unlike "Which method
# does X use?", where X is the paper).
_ASKS_WHICH_DOES = re.compile(r"\bwhich (?:approach|method|framework|model|system|technique|algorithm)s? "
                              r"(?!(?:does|do|did|is|are|was|were|has|have|can|could|would|will|of|in|for|on|to|"
                              r"from|and|or)\b)[a-z]+", re.I)
# "released by X and by Y": after "and", the preposition before the first of two papers may be repeated.
AND_AGAIN = r"and\s+(?:(?:by|in|for|from|of|on|with)\s+)?"
# "... by the tactile-RL paper and by the video LMM paper": one description of a paper, then "and" and another.
_DESCRIBED_SIDE_BY_SIDE = re.compile(rf"\b(?:paper|work|study)\s*,?\s+{AND_AGAIN}"
                                     r"the\s+(?:[\w/'-]+\s+){0,6}?(?:paper|work|study)\b", re.I)
# "What does each one target?", "... both ...", "respectively": with two or more papers named, the
# question asks the same of each of them; these words say so, not what a sentence must state.
ASKS_OF_EACH = re.compile(r"\b(?:each|both|respectively)\b|分别|各自", re.I)
# With a paper named, its plural nouns are its own ("SnapViT's pruned models", "the methods RoboRefer
# compares"; "RoboRefer 用了哪些数据集"): only a word for papers asks for other papers beside it
# ("Which papers study X, such as LTI systems?"). Chinese nouns have no plural: 论文 is one paper after
# "this / that / which / one (article)" (这篇论文, 该论文, 哪篇论文, 一篇论文: _ONE_PAPER_ZH below) and
# after a name ("VideoHallu 论文指出", "the VideoHallu paper points out"), papers otherwise. "Works" and
# "studies" are papers after a word that counts or picks them ("which works", "both studies");
# elsewhere they may be verbs ("X works on").
_ASKS_FOR_PAPERS = re.compile(r"\b(?:papers|articles)\b|\b(?:which|these|those|both|two|three|several|other)\s+"
                              r"(?:works|studies)\b|(?<!这)(?<!那)(?<!该)(?<!此)(?<!本)(?<![A-Za-z0-9)\]])"
                              r"(?<![A-Za-z0-9)\]] )论文", re.I)
# "这篇论文" ("this paper"), "哪篇论文" ("which paper"), "有篇论文" ("there is a paper"), "某篇论文"
# ("some paper"): one paper (篇 counts one unless a number or 几 precedes it). In a question naming no paper, so is
# "那篇让人形机器人模仿功夫的论文" ("that paper making a humanoid imitate kung fu"), however long the
# description between the counted 篇 and 论文 (within one clause); with a paper named, such a paper is
# another one ("ε-DPO 和那篇把奖励拆开的论文", "ε-DPO and that paper splitting the reward").
_ONE_PAPER_ZH = re.compile(r"[这那该此本哪一有某]篇论文")
_ONE_DESCRIBED_PAPER_ZH = re.compile(r"[这那该此本哪一有某]篇[^，。？！；,.?!;]*?论文")
_POINTS_AT_PAPERS = re.compile(r"\b(?:two|three|both|these|those)\s+(?:[\w-]+\s+){0,2}?(?:papers|articles|works|studies)\b"
                               r"|[这那]?[两三二]篇(?:[^，。？！；,.?!;]*?(?:论文|工作|文章|研究))?", re.I)

# "Two papers here ...", "Which two works ...?", "a couple of the abstracts", "哪两篇论文": the asker says how
# many papers answer.
_COUNTS_PAPERS = re.compile(r"\b(two|three|four|a\s+couple\s+of|a\s+pair\s+of)\s+(?:of\s+(?:the|these|those)\s+)?"
                            r"(?:[\w-]+\s+){0,3}?(?:papers|works|studies|abstracts|articles)\b|([两二三四])篇", re.I)
_COUNT = {"two": 2, "three": 3, "four": 4, "a couple of": 2, "a pair of": 2, "两": 2, "二": 2, "三": 3, "四": 4}


def papers_counted(question: str) -> int | None:
    """How many papers the question says answer it ("Two papers ...", "哪两篇 ...") or None: it says no
    number, or two different ones."""
    counts = {_COUNT[" ".join((m.group(1) or m.group(2)).lower().split())] for m in _COUNTS_PAPERS.finditer(question)}
    return counts.pop() if len(counts) == 1 else None


@dataclass(frozen=True)
class AskedPapers:
    """The papers a question asks about, as `asked_papers` settles them."""

    named: dict[str, list[str]]  # a name (or label, or description) -> the doc ids it names
    wanted: set[str]  # the doc ids an answer quotes (empty: it names none, any retrieved paper may answer)
    described: bool  # named by the words of a label or title, not by a name
    from_descriptions: bool  # guessed from descriptions of two or more papers
    many: bool  # asks for several papers (`asks_for_several`)


def asks_for_several(question: str, *, names_paper: bool) -> bool:
    """Whether the question asks for several papers ("Which papers ...?", "哪些 ...?", "Compare ..."),
    so that its answer may quote each paper nearly as good as the best, not one paper."""
    text = (_ONE_PAPER_ZH if names_paper else _ONE_DESCRIBED_PAPER_ZH).sub(" ", question)
    # A question describing one paper ("有篇论文……，它在哪些基准上做实验？") asks for that paper's things, as
    # one naming it does: only a word for papers asks for others.
    one = names_paper or text != question
    return bool(_ASKS_FOR_PAPERS.search(text) or not one and _ASKS_FOR_SEVERAL.search(text))


def asked_papers(question: str, hits: list[Hit], terms: list[str], *, named: dict[str, list[str]],
                 quoted: Mapping[str, list[str]] | None, passages: dict[int, list[tuple[str, str]]] | None,
                 similarity: Similarity | None, one_of: bool, by_paper: bool, t: OfflineSettings) -> AskedPapers:
    """Settle which papers the question asks about, from the names retrieval found in it (`named`: name ->
    doc ids), the labels or titles it quotes whole (`quoted`) and its content `terms`.

    `one_of`: the question is one paper's part of a question asked of each paper it names; `by_paper`:
    the question may still be divided so. `similarity` (sentence texts, question -> cosines) finds the
    paper a description fits.
    """
    crosslingual = is_chinese(question)
    # In an English question a second name may be the detail asked about (its words are then focus
    # words); a Chinese question's Latin-script words are not scored as words, only by meaning.
    named = without_examples(named or {}, question)
    if any(len(docs) > 1 for docs in named.values()):
        named = as_spelled(named, texts_of(hits, passages))
    if not crosslingual:
        named = paper_names(named, hits)
    else:  # a paper no name names may be named by its label quoted whole (in English: `named_by_label` below)
        known = doc_ids(named)
        named = {**{k: v for k, v in quoted_labels(question, hits, quoted or {}).items() if known.isdisjoint(v)}, **named}
        # or by its label's words, some in Latin script and the rest in Chinese ("proxy target 框架")
        named = named or named_by_label_zh(question, hits, framing=QUESTION_WORDS)
    # "the proxy target framework", "the global convergence proof for single-timescale actor-critic":
    # a paper named by the words of its label or title is named as surely as by a name, and is
    # answered from alone; those words stay focus words (they also say what the question asks about).
    # (Not "Which paper ...?": its description is what the asker knows of a paper they cannot name,
    # so a title sharing its words is a candidate among the hits, not the paper named.)
    described = (not named and not crosslingual and t.label_share <= 1 and not ASKS_WHICH_PAPER.search(question)
                 and not _ASKS_WHICH_DOES.search(question))
    named = named or (named_by_label(terms, hits, t.label_share, framing=QUESTION_WORDS) if described else {})
    described = described and bool(named)
    from_descriptions = False
    # A comparison, or a question asked of each paper (not in one paper's part of one).
    of_each = not crosslingual and t.label_share <= 1 and not one_of \
        and bool(any(x in COMPARISON_TERMS for x in terms) or ASKS_OF_EACH.search(question))
    by_name = len(papers_named(named))  # (papers named by their names, not by their labels' words)
    if named and not described and of_each:
        # "Compare BraVE and the value-based framework for continuous control", "LTS-P and the paper on
        # the value of stochastic predictions ... What does each consider?": one paper by its name, the
        # other by its label's words; both are the papers compared, or asked about each.
        # (Not in one paper's part of such a question: the part is that paper's alone, though the
        # other's label words remain in its text.)
        named = {**named_by_label(terms, hits, min(t.label_share, t.compare_label_share), framing=QUESTION_WORDS), **named}
        # A paper described beside the one named, when no label's words already name a further paper.
        if len(papers_named(named)) == 1 and by_paper and similarity is not None:
            named = {**named, **described_other(question, hits, named, similarity)}
    if named and not described and not crosslingual and not one_of and by_paper and similarity is not None \
            and len(papers_named(named)) == by_name >= 2:
        # A paper described in a list of two or more named ("ArrowRL, RoboRefer and the tactile manipulation
        # work each ...", "name the benchmarks of X, Y and the tactile sensing paper") is one more paper asked
        # about, whether or not the question says "each".
        named = {**named, **{d: docs for d, docs in described_other(question, hits, named, similarity).items()
                             if listed_after_name(question, d, named)}}
    # (a Chinese question asks of each paper it describes by 分别 / 各自, "respectively" / "each")
    of_each_zh = crosslingual and not one_of and t.label_share <= 1 and bool(ASKS_OF_EACH.search(question))
    if of_each_zh and by_paper and similarity is not None and len(papers_named(named)) == 1:
        # "ε-DPO 和那篇把奖励拆成两部分的论文，分别改进了什么？": one paper named, another described beside it;
        # both are asked about, as in an English comparison naming one paper.
        named = {**named, **described_other(question, hits, named, similarity)}
    if not named and (of_each or of_each_zh) and by_paper and similarity is not None:
        # "For the tactile-sensing RL paper and the time-reversal symmetry paper, which benchmark does each
        # use?": two papers described, none named; each is the retrieved abstract closest to its description.
        named = described_papers(question, hits, similarity)
        from_descriptions = bool(named)
    elif described and of_each and by_paper and similarity is not None:
        # So too when one description uses a paper's label words ("the spiking-network proxy target paper and
        # the actor-free value-based continuous control paper ... what does each introduce?"): the paper
        # the label names must be among those the descriptions pick, or the label alone is kept.
        guessed = described_papers(question, hits, similarity)
        if len(papers_named(guessed)) >= 2 and doc_ids(named) <= doc_ids(guessed):
            named, described, from_descriptions = guessed, False, True
    elif by_paper and not crosslingual and not one_of and similarity is not None \
            and (_DESCRIBED_SIDE_BY_SIDE.search(question) or one_and_another(question)):
        # "What benchmarks were released by the tactile-RL paper and by the arrow-of-time video LMM paper?",
        # "One paper makes X ..., another does Y. What ...?": papers described side by side are each asked the
        # question, as papers named side by side are (a name inside a description, "LMM", is a word of it, not
        # the paper asked about).
        guessed = described_papers(question, hits, similarity)
        if len(papers_named(guessed)) >= 2 and doc_ids(named) <= doc_ids(guessed):
            named, described, from_descriptions = guessed, False, True
    # (A Chinese question keeps its detail names in `named`, they are words its answer must state; the
    # papers it is answered from are those its paper's own name picks: "SPOT 用的是哪个 MILP 求解器？"
    # is not answered from another abstract mentioning MILP.)
    # (A paper a Chinese question describes, not names, is asked about as surely; it labels no abstract, so
    # `paper_names` would take it for a detail.)
    described_zh = described_in_chinese(named) if crosslingual else {}
    wanted = doc_ids(paper_names(named, hits) if crosslingual else named) | doc_ids(described_zh)
    # "Two value-based papers avoid ...: X and Y. How does each ...?": with two papers named, a word
    # counting or pointing at papers refers to them (also in one paper's part of it); it asks for no others.
    pointed = _POINTS_AT_PAPERS.sub(" ", question) if len(papers_named(named)) >= 2 or one_of else question
    for description in described_zh:  # (a paper described is one of them, not a request for papers)
        pointed = re.sub(re.escape(description) + "(?:论文|工作|文章|研究)?", " ", pointed)
    # (In one paper's part of a Chinese question, 论文 left where the other paper was described is that paper.)
    # (Nor does a question that describes each of its papers: "Among the alignment papers, one modifies X and
    # another argues Y. What does each change?" asks about those two.)
    many = (asks_for_several(pointed, names_paper=bool(wanted)) and not (one_of and crosslingual)
            and not from_descriptions)
    return AskedPapers(named, wanted, described, from_descriptions, many)
