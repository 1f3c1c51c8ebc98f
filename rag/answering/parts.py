"""The parts of a question: where a question asking two things divides, the alternatives it offers
("A or B"), and the words its question sentence asks with when statements come before it.

Used by the offline answerer (`rag.answering.offline`), which answers a question part by part and
weighs a sentence by what the question sentence asks.
"""
from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from rag.answering.support import NUMBER_WORDS
from rag.text import mostly_cjk


# Where a question asking two things divides: after a question mark followed by more words ("Does X
# still use Y? What replaces it?"), or before ", and" + a question word ("X starts from which model,
# and which model does it beat?"; "..., and in which stage ...?", not "..., and in how many steps?", which
# asks how the first part's claim was reached, as a rule in the same sentence). An adverb may come between
# ("..., and roughly how large were the action spaces?").
# So does ", and in/for <Name>, what ...?" ("In JacobianODE, what is controlled, and in OMiSO, what
# stimulation was used?"): each part asks its own question of the paper it names.
# Typed without the comma, "... and also what ...?" still starts a second question: "also" says so.
_PART_BREAK = re.compile(r"(?<=[?？])\s*(?=\S)|\s+(?=and\s+also\s+(?:which|what|how|where|when|who|why)\b)"
                         r"|,\s*(?=and\s+(?:also\s+|then\s+|[a-z]+ly\s+)?"
                         r"(?:which|what|how|where|when|who|why|does|do|did|is|are|was|"
                         r"were|can|(?:in|on|at|for|from|with|by|to|under|during|into|of)\s+(?:which|what)"
                         r"|(?:in|for)\s+(?:the\s+)?(?-i:[A-Z])[\w.-]*(?:\s+(?:paper|work|abstract))?\s*,\s*"
                         r"(?:which|what|how|where|when|who|why|does|do|did|is|are|was|were|can))\b)", re.I)


# Chinese words that ask ("what", "which", "how many", "how long", "how", "why", ...).
_ZH_ASKING = re.compile(r"什么|哪|多少|几|多长|多久|多快|多大|如何|怎么|怎样|为何|吗")


# A question word or a request ("compare", "list", ...) anywhere: the question says what it asks with it.
_ASKS_IN_WORDS = re.compile(r"\b(?:which|what|how|who|whom|whose|where|when|why|is|are|was|were|does|do|did|can|could|"
                            r"should|would|has|have|any|anything|compare|contrast|list|summari[sz]e|explain|describe|"
                            r"give|tell|name|find|show|outline|vs|versus|between|both|each)\b", re.I)
# Where a query typed as keywords joins the things it asks for ("t2i-r1 base model and the RL algorithm used
# to train it"): at "and", with or without a comma.
_KEYWORDS_JOINED = re.compile(r",?\s+and\s+", re.I)
# Longest keyword query read as a list of asked things; longer, "and" joins the parts of a description.
_KEYWORD_QUERY_WORDS = 16


def question_parts(question: str) -> list[str]:
    """The question's parts when it asks two or more things, each with words of its own; else [question]."""
    from rag.index.lexical import tokenize

    parts = [p.strip() for p in _PART_BREAK.split(question) if p.strip()]
    if len(parts) > 1:
        # "Which suites were used? I want to compare its budget with others.": a statement after a
        # question says why it is asked or which paper is meant; it asks nothing of its own, so it
        # belongs to the question before it.
        merged: list[str] = []
        for i, p in enumerate(parts):
            if i and not _asks(p):
                merged[-1] += " " + p
            else:
                merged.append(p)
        parts = merged
    if len(parts) < 2 and ";" in question:
        clauses = [c.strip() for c in question.split(";") if c.strip()]
        if len(clauses) >= 2 and all(_ASKING_WORD.search(c) for c in clauses):
            parts = clauses
    if (len(parts) < 2 and not mostly_cjk(question) and not _ASKS_IN_WORDS.search(question)
            and len(question.split()) <= _KEYWORD_QUERY_WORDS):
        parts = [p.strip() for p in _KEYWORDS_JOINED.split(question) if p.strip()]
    if len(parts) < 2 and mostly_cjk(question):
        parts = _chinese_parts(question)
    if len(parts) < 2 or any(len(tokenize(p, compounds=False)) < 2 for p in parts):
        return [question]
    return parts


# A sentence asks when it ends with a question mark, writes a question word, or opens with a request
# ("Explain briefly.", "List them."); "I want to compare ..." does none of these.
_REQUEST = re.compile(r"\W*(?:please\s+)?(?:list|name|give|tell|explain|describe|compare|contrast|summari[sz]e|outline|"
                      r"show|state|report|include|mention|cite)\b", re.I)


def _asks(sentence: str) -> bool:
    """Whether a sentence of a question asks something (else it is context: why, for whom)."""
    return (sentence.endswith(("?", "？")) or bool(_ASKING_WORD.search(sentence)) or bool(_REQUEST.match(sentence))
            or bool(_ZH_ASKING.search(sentence)))


def _chinese_parts(question: str) -> list[str]:
    """"X 需要多长时间、用什么硬件？" asks two things, each clause with its own question word: the clauses
    between "、" or "，" grouped so that each part asks something ([question] when fewer than two do)."""
    parts: list[str] = []
    current = ""
    for clause in re.split(r"(?<=[、，,])", question):
        current += clause
        if _ZH_ASKING.search(current):
            parts.append(current.strip(" 、，,"))
            current = ""
    if parts and current.strip(" 、，,？?"):
        parts[-1] += current  # a last clause asking nothing of its own belongs to the part before it
    return parts if len(parts) >= 2 else [question]


# "... How does each one go about it?", "How does it do so?": a verb whose object points back at the
# statement before the question stands for what that statement says the paper does.
_POINTS_BACK = re.compile(r"\b([a-z]+)(?:\s+about)?\s+(?:it|this|that|so|them|these)\s*[?？]", re.I)


# "Which of the two ...?", "which of them", "these": the question sentence asks about things the
# statement before it names, so the statement's words say what is asked too.
_POINTS_TO_THINGS = re.compile(r"\b(?:the two|the three|which of (?:them|these|those)|these|those|either|neither)\b", re.I)


# "The humanoid controller that learns Kungfu from video: which robot was it deployed on?": a
# description set off by a colon or a dash before a question clause says which paper is meant, as a
# statement sentence before the question does. (A dash typed as two or three hyphens is a dash.)
_LEADS_INTO_QUESTION = re.compile(r"(?::|\s(?:[—–]|-{1,3})\s)\s*(?=(?:which|what|how|who|whom|whose|where|when|why|"
                                  r"is|are|was|were|does|do|did|can|could)\b)", re.I)


_OPENS_QUESTION = re.compile(r"(?:which|what|how|who|whom|whose|where|when|why)\b", re.I)
# "JacobianODE applied to what trained model; OMiSO validated with what stimulation technique": a
# semicolon between two clauses that each ask with such a word anywhere divides two questions.
_ASKING_WORD = re.compile(rf"\b{_OPENS_QUESTION.pattern}", re.I)


# "make adaptive or decompose", "offline RL or offline imitation methods": the phrases either side of
# "or", up to three words each, ending at a function word or a punctuation mark.
_OR = re.compile(r"((?:[A-Za-z][\w-]*\s+){0,2}[A-Za-z][\w-]*)\s*,?\s+or\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})",
                 re.I)


def alternatives(question: str) -> list[list[set[str]]]:
    """The phrases the question offers as alternatives, as each side's stemmed words, one list per
    "A or B": a sentence stating either side states what is asked ("what does each make adaptive or
    decompose?" is answered by "adaptively controls" in one paper and "decompose" in the other)."""
    from rag.index.lexical import tokenize

    def side(words: list[str]) -> set[str]:
        kept: list[str] = []
        for w in words:  # nearest "or" first
            stems = tokenize(w, compounds=False)
            if not stems or w.casefold() in _NO_ALTERNATIVE:
                break  # a function word ends the phrase
            kept += stems
        return set(kept)

    groups = []
    for m in _OR.finditer(question):
        before, after = side(m.group(1).split()[::-1]), side(m.group(2).split())
        if before and after and before != after:
            groups.append([before, after])
    return groups


_NO_ALTERNATIVE = frozenset("both not none neither either more less other others so".split())


def own_terms(question: str, framing: AbstractSet[str] = frozenset()) -> set[str] | None:
    """The words the question sentence asks with, when statements come before it; else None.

    "UAT and SnapViT both let a deployed network spend less compute. How does each one go about it?":
    the statement says which papers and what they share; the question asks how each does it, and a
    verb pointing back at the statement ("go about it") asks for nothing of its own. A description
    before a colon or dash that leads into a question clause is such a statement too, when the clause
    asks with a word of its own, not only `framing` words ("Safe RLHF-V's helpfulness gain - what's the
    number?" asks for the gain the lead names).
    """
    from rag.index.lexical import tokenize
    from rag.text import split_sentences

    lead = _LEADS_INTO_QUESTION.search(question)
    if lead and not re.search(r"[?？]", question[:lead.start()]):
        asked = question[lead.end():]
        words = set(tokenize(_POINTS_BACK.sub(lambda m: "?", asked), compounds=False))
        if not _POINTS_TO_THINGS.search(asked) and words - framing:
            return words
    sentences = [question[a:b].strip() for a, b in split_sentences(question)]
    # (A part of a question cut before ", and ..." has lost its question mark: a last sentence opening
    # with a question word asks all the same.)
    if sentences and not sentences[-1].endswith(("?", "？")) and _OPENS_QUESTION.match(sentences[-1]):
        sentences[-1] += "?"
    asking = [x for x in sentences if x.endswith(("?", "？"))]
    if not asking or len(asking) == len(sentences) or not sentences[-1].endswith(("?", "？")):
        return None
    if any(_POINTS_TO_THINGS.search(x) for x in asking):
        return None  # "X gains in safety and helpfulness. Which of the two improved more?": the statement's things are asked about
    text = " ".join(asking)
    text = _POINTS_BACK.sub(lambda m: "?", text)
    words = set(tokenize(text, compounds=False))
    # "X, Y and Z each introduce a benchmark. What are they called?": a question sentence asking with
    # framing words alone asks about what the statement names, as a clause after a colon does.
    return words if words - framing else None


def without_paper_count(question: str, papers: int) -> str:
    """The question without a number that counts what it asks of its papers, one thing of each.

    "ArrowRL, RoboRefer and RoTO each release a benchmark. What are the three benchmarks called?":
    with three papers named, "three" counts their benchmarks together; no one paper's sentence states
    it, so in each paper's part it is no word to look for. (A number other than the papers' count,
    "What two objectives does each balance?", is of each paper and stays.)
    """
    word = next((w for w, n in NUMBER_WORDS.items() if n == str(papers)), None)
    if word is None or papers < 2:
        return question
    return " ".join(re.sub(rf"\b{word}\b", " ", question, flags=re.I).split())
