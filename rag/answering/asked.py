"""What a question's form asks for, and whether a sentence states that kind of thing.

"How many ...?" is answered by a number, "Which model does X use?" by a name; a sentence that only
restates the question's words ("X uses large language models") does not answer it. The offline
answerer lowers the evidence of a sentence lacking what is asked (`rag.answering.offline`).
"""
from __future__ import annotations

import re
from typing import Callable

from rag.index.names import extract_names

# What papers measure and report as numbers.
_MEASURES = (r"(?:speedups?|accuracy|accuracies|error|errors|rates?|scores?|gains?|improvements?|reductions?|"
             r"latency|latencies|throughput|ratios?|margins?|overhead|compression)")
# Questions asking for a quantity: the answer must state a number. (哪几 is "which ones": it asks
# for names, not for a count, as in "分别是哪几个数据集？".)
_ASKS_FOR_QUANTITY = re.compile(r"\bhow (?:many|much|long|large|big|fast|often)\b|\bwhat (?:percentage|fraction|share|"
                                r"number|proportion)\b|\bwhat (?:is|are|was|were) the (?:\w+ )?(?:number|size|count|"
                                r"amount|dimension\w*|percentage|fraction|proportion)\b|多少|(?<!哪)几"
                                # "What is the highest speedup ...?", "What accuracy does X reach?": a measure
                                # a paper reports is a number.
                                rf"|\bwhat (?:is |are |was |were )?(?:the |its |their )?(?:(?!(?:kinds?|types?|sorts?|sources?|causes?)\b)\w+ ){{0,3}}{_MEASURES}\b"
                                r"|\bin numbers\b", re.I)
# Questions asking which named thing a paper used: the answer names it (a model, dataset or
# benchmark is referred to by a proper name: "Unitree G1", "Sora", "AIME24").
_NAMED_THING_ZH = "(?:模型|数据集|基准|机器人|模拟器|生成器|骨干网络|硬件|环境|平台)"
_ASKS_FOR_NAMED_THING = re.compile(r"\bwhich (?:\w+ ){0,2}(?:models?|datasets?|benchmarks?|robots?|simulators?|gpus?|"
                                   r"hardware|llms?|backbones?|generators?|environments?|platforms?)\b"
                                   rf"|哪(?!篇|些论文)[^，。？?]{{0,10}}{_NAMED_THING_ZH}|{_NAMED_THING_ZH}[^，。？?]{{0,8}}哪", re.I)
# A two- or three-letter acronym ("RL", "PDE", "CNNs") is usually a field's term, not a name.
TERM_ACRONYM = re.compile(r"[A-Z]{2,3}s?")
# A model named with its version: a capitalised word, a hyphen and a number ("Gemini-2.5-Pro").
_VERSIONED = re.compile(r"(?<![\w-])[A-Z][A-Za-z]*-\d+(?:\.\d+)*(?:-[A-Za-z0-9]+)*")
# List markers ("(II) Based on ...", "(a)", "(3)") name nothing, nor does the word after them.
_ENUMERATOR = re.compile(r"\((?:[ivx]{1,4}|[a-h]|\d{1,2})\)\s*", re.I)
NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                    r"hundred|thousand|million|billion|dozen|half|dual|twice|double|triple|orders? of magnitude|"
                    r"\w+fold)\b", re.I)
# A digit inside a name is no quantity: "Qwen-2.5-VL", "Video-R1", "AIME24", "Unitree G1", "H100" name
# a model, benchmark or device. A token that starts with a digit ("1.5B", "32%", "3x") is a number.
_NAME_WITH_DIGITS = re.compile(r"\b[A-Za-z]+(?:[-.]?[A-Za-z]*\d[\w.]*)+(?:-[\w.]+)*")


def states_number(text: str) -> bool:
    """True when the text states a quantity: a number, or a count in words ("two", "ten-fold")."""
    return bool(NUMBER.search(_NAME_WITH_DIGITS.sub(" ", text)))


_COUNTED = re.compile(r"\b(?:how (?:many|much)|number of|amount of)\s+([\w\s-]+?)\s+"
                      r"(?:does|do|did|is|are|was|were|can|could|would|will|has|have)\b", re.I)


def counted(question: str) -> str:
    """What a quantity question counts ("How much labeled data does X need?" -> "labeled data"), or ""."""
    m = _COUNTED.search(question)
    return m.group(1) if m else ""


def asks_quantity(question: str) -> bool:
    """True when the question asks for a quantity ("how many", "what is the size of", 多少)."""
    return bool(_ASKS_FOR_QUANTITY.search(question))


def _acronyms_of(words: list[str]) -> set[str]:
    """The initials of every run of 2-5 consecutive words, case-folded."""
    return {"".join(w[0] for w in words[i:j]).casefold() for i in range(len(words))
            for j in range(i + 2, min(i + 5, len(words)) + 1)}


def states_what_is_asked(question: str, named: dict[str, list[str]] | None) -> Callable[[str], bool] | None:
    """What a sentence must state to answer the question, when its form says: a number for "how many",
    and, for "which model / dataset / benchmark ..." about a paper the question names, a name the
    question does not already give (a question naming no paper may be answered by several papers'
    sentences, where the rule would favour any sentence with a name in it)."""
    if asks_quantity(question):
        return states_number
    if named and _ASKS_FOR_NAMED_THING.search(question):
        words = re.findall(r"[A-Za-z]+", question)
        given = {n.casefold() for n in extract_names(question)} | {n.casefold() for n in (named or {})}
        given |= _acronyms_of(words)  # "LLMs" for the question's "large language models" names nothing new

        q_words = {w.casefold() for w in words}

        def names_something(text: str) -> bool:
            text = _ENUMERATOR.sub(" ", text)
            spelled = _acronyms_of(re.findall(r"[A-Za-z]+", text))
            # Plain capitalised words inside the sentence are names too ("Franka", "Sora", "Cityscapes").
            proper = {w for w in re.findall(r"(?<=[a-z0-9,;:)] )[A-Z][a-z]+\b", text) if w.casefold() not in q_words}
            versioned = set(_VERSIONED.findall(text))  # "Gemini-2.5-Pro", "Llama-3-8B"
            for name in extract_names(text) | proper | versioned:
                if TERM_ACRONYM.fullmatch(name):
                    continue  # "RL", "ODEs": a field's term, not the name of a thing used
                key = name.casefold()
                if key in given or key.rstrip("s") in given or key.rstrip("s") in spelled:
                    continue  # given by the question, or a term spelled out beside it ("large language models (LLMs)")
                if any(key in g for g in given if len(g) > len(key)):
                    continue  # part of a name the question gives ("RAG" in "DynamicRAG")
                return True
            return False
        return names_something
    return None
