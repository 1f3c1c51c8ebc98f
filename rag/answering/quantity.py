"""Questions asking for a quantity, and whether a sentence states it.

"How many GPUs ...?" is answered by a count of GPUs, "What accuracy ...?" by a rate, "What size ...?"
by an amount in figures; a sentence with no such number does not answer, however close its words.
Used by `rag.answering.asked` (what a question asks) and the offline answerer.
"""
from __future__ import annotations

import re
from typing import Callable

from rag.index.names import extract_names
from rag.index.translate import question_words

# What papers measure and report as numbers.
_MEASURES = (r"(?:speedups?|accuracy|accuracies|error|errors|rates?|scores?|gains?|improvements?|reductions?|"
             r"latency|latencies|throughput|ratios?|margins?|overhead|compression)")
# Questions asking for a quantity: the answer must state a number. (哪几 is "which ones": it asks
# for names, not for a count, as in "分别是哪几个数据集？".)
_ASKS_FOR_QUANTITY = re.compile(r"\bhow (?:many|much|long|large|big|fast|often)\b|\bwhat (?:percentage|fraction|share|"
                                r"number|proportion|size)\b|\bwhat (?:is|are|was|were) the (?:\w+ )?(?:number|size|count|"
                                r"amount|dimension\w*|percentage|fraction|proportion)\b|多少|(?<!哪)几"
                                # "多长时间", "多久", "多快": how long, how fast (not "多大程度", to what extent)
                                r"|多(?:长|久|快|大(?!程度))"
                                # "What is the highest speedup ...?", "What accuracy does X reach?": a measure
                                # a paper reports is a number.
                                rf"|\bwhat (?:is |are |was |were )?(?:the |its |their )?(?:(?!(?:kinds?|types?|sorts?|sources?|causes?)\b)\w+ ){{0,3}}{_MEASURES}\b"
                                # "What initial value of beta ...?": the value of a parameter is a number.
                                r"|\bwhat (?:\w+ )?values? (?:of|for)\b"
                                # "What codebook size ...?": a size is a number. ("What horizon length ...?" is
                                # left to the attribute rule: the sentence must say "horizon".)
                                r"|\bwhat (?:[\w-]+ ){1,2}sizes?\b"
                                r"|\bin numbers\b"
                                # "env action count?", "param count and dataset size?": a noun phrase ending
                                # in a count or size asks for that number.
                                r"|\b[\w-]+\s+(?:count|size)s?\s*(?:\?|$)", re.I)
# "max improvement over X?", "peak accuracy of Y": an extreme of a measure is one of the paper's numbers,
# asked without "what" in a terse question (unless the question gives the number: "X reports peak gains of
# over 20%. Which evaluation ...?" asks about it).
_ASKS_EXTREME = re.compile(rf"\b(?:max|maximum|min|minimum|peak|highest|lowest|largest|best|top)\s+(?:[\w-]+\s+)?"
                           rf"{_MEASURES}\b", re.I)
# List markers ("(II) Based on ...", "(a)", "(3)") name nothing, nor does the word after them.
ENUMERATOR = re.compile(r"\((?:[ivx]{1,4}|[a-h]|\d{1,2})\)\s*", re.I)
NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                    r"hundred|thousand|million|billion|dozen|half|dual|twice|double|triple|orders? of magnitude|"
                    r"\w+fold)\b", re.I)
# A digit inside a name is no quantity: "Qwen-2.5-VL", "Video-R1", "AIME24", "Unitree G1", "H100" name
# a model, benchmark or device. A token that starts with a digit ("1.5B", "32%", "3x") is a number.
_NAME_WITH_DIGITS = re.compile(r"\b[A-Za-z]+(?:[-.]?[A-Za-z]*\d[\w.]*)+(?:-[\w.]+)*")


def states_number(text: str) -> bool:
    """True when the text states a quantity: a number, or a count in words ("two", "ten-fold")."""
    return bool(NUMBER.search(_NAME_WITH_DIGITS.sub(" ", text)))


# "on four public datasets": a count in words of things, the few words before a plural noun (not "four
# million actions", "ten times faster": a figure, a factor).
_WORD_COUNT_OF_THINGS = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
                                   r"((?:(?!hundred|thousand|million|billion)[\w-]+\s+){0,2}?[a-z][\w-]*[a-rt-z]s)\b", re.I)
# ("dual constraints", "the dual problem": "dual" names a kind of thing, never how large a measure is)
_DUAL = re.compile(r"\bdual\b", re.I)
# A question that counts things: "how many", "the number of", 几 ("how many"), 多少 before a classifier.
_ASKS_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|几|多少[个种篇项条位名次类组层步轮维张台块]", re.I)


def states_measure(question: str) -> Callable[[str], bool]:
    """For a question asking how large a measure is ("How large is X's depth error on each dataset?"), a
    check that a text states a number other than a count in words of the things the question names as its
    setting ("experiments on four public datasets" says how many datasets there are, not how large the
    error is on them) or "dual"."""
    from rag.index.lexical import tokenize

    own = set(question_words(question))

    def setting_count(m: re.Match) -> str:
        noun = tokenize(m.group(1).split()[-1], compounds=False)
        return " " if noun and noun[-1] in own else m.group()

    return lambda text: states_number(_DUAL.sub(" ", _WORD_COUNT_OF_THINGS.sub(setting_count, text)))


_COUNTED = re.compile(r"\b(?:how (?:many|much)|number of|amount of)\s+([\w\s-]+?)\s+"
                      r"(?:does|do|did|is|are|was|were|can|could|would|will|has|have)\b", re.I)


# "How many annotators labelled ...?": the plural after "how many" is what is counted, whatever verb follows.
_COUNTED_NOUN = re.compile(r"\bhow many (?!(?:of|more|fewer|times)\b)([a-z][\w-]*s)\b", re.I)


def counted(question: str) -> str:
    """What a quantity question counts ("How much labeled data does X need?" -> "labeled data"), or ""."""
    m = _COUNTED.search(question) or _COUNTED_NOUN.search(question)
    return m.group(1) if m else ""


# "多少个四元数神经元？": what a Chinese question counts follows 多少 and its measure word.
_COUNTED_ZH = re.compile(r"多少(?:个|种|项|名|位|条|次|张|篇|台|层|类|组|倍)?([\u3400-\u9fff]{0,8}?)(?=[？?，,。的在（(]|$)")
# A comparative says how a quantity compares ("How much faster ...?"), not what is counted.
_COMPARATIVE = frozenset("faster slower larger smaller higher lower better worse more less fewer longer shorter "
                         "bigger cheaper greater".split())
_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w%×-]|\.(?=\w))*")  # "85.3%", "5-60x", "H100"; not a sentence's full stop
# Words between a number and the thing it counts: after it ("200 H100 GPU hours", "1B shared
# parameters"), or before it ("a sample complexity of O(eps^-3)").
COUNT_AFTER, COUNT_BEFORE = 4, 5


def counted_terms(question: str) -> set[str]:
    """The stemmed head of what a quantity question counts ("GPU hours" -> {"hour"}), or an empty set.

    A count answers the question only when it counts that thing: "4x4 block" does not say how many
    neurons a model has, nor "five minutes" how many GPUs.
    """
    from rag.index.lexical import tokenize
    from rag.index.translate import glosses

    if counted(question):
        head = counted_head(question)
        if not head:
            return set()
        # "how many kinds of violations": a count of the kinds, in any word for a kind ("four categories of
        # physical and commonsense violations"), answers as a count of the things would
        kinds = any(w.casefold() in KIND_WORDS for w in counted(question).split()[:3])
        return set(tokenize(" ".join([head, *(sorted(KIND_WORDS) if kinds else [])]), compounds=False))
    m = _COUNTED_ZH.search(question)
    if not m or not m.group(1):
        return set()  # "准确率是多少？", "快了多少倍？": a measure, not a count of things
    heads = glosses(m.group(1))
    return set(tokenize(heads[-1], compounds=False)) if heads else set()


_PREPOSITIONS = frozenset("per with in on for from at during across to until than into over under between among via "
                          "by within after before".split())
_COUNT_ADJECTIVES = frozenset("different distinct unique separate individual total main major key new additional "
                              "other such".split())


def _before_preposition(words: list[str]) -> list[str]:
    """The words before the first preposition after the first word: "Baoding-ball rotations per minute" ->
    "Baoding-ball rotations" (what follows says where or how the thing is counted, not what is counted)."""
    cut = next((i for i, w in enumerate(words) if i and w.casefold() in _PREPOSITIONS), len(words))
    return words[:cut]


def counted_head(question: str) -> str:
    """The word naming what an English quantity question counts ("GPU hours" -> "hours"), or "" when
    it counts no thing (a comparison: "how many fewer", "how much faster")."""
    words = counted(question).split()
    if words and words[0].casefold() in _COMPARATIVE:
        return ""
    before = _before_preposition(words)
    of = before.index("of", 1) if "of" in before[1:] else 0
    if of and words[of - 1].casefold() not in KIND_WORDS:
        # "how many levels of chain-of-thought": levels are counted
        words = words[:of]
    elif of:
        # "how many kinds of physics or commonsense violation": violations are counted, by kind
        words = _before_preposition(words[of + 1:])
    else:
        words = before
    if len(words) > 2 and words[1].casefold() in ("and", "or"):
        words = words[2:]  # "physical and commonsense violations": two words describing one thing
    if any(w.casefold() in ("and", "or") for w in words):
        return ""  # "how many spatial relations and QA pairs": two things are counted, not one
    # "how many different video generation tools": "different", "distinct", "main" say nothing of what is counted
    while len(words) > 1 and words[0].casefold() in _COUNT_ADJECTIVES:
        words = words[1:]
    if not words or len(words) > 3 or words[-1].casefold() in _COMPARATIVE:
        return ""
    if len(words) > 1 and words[-1].casefold() in KIND_WORDS:
        words = words[:-1]  # "how many relation types": relations are counted, by kind
    return words[-1]


def counts_asked_thing(question: str) -> Callable[[str], bool] | None:
    """For a question counting things ("How many reasoning steps ...?", "多少个神经元"), a check that a
    text states a count of them ("up to 5 steps"); None for a question counting nothing."""
    terms = counted_terms(question)
    return states_count_of(terms, counted_head(question)) if terms else None


# Words naming a kind of the noun before them ("relation types", "task categories").
KIND_WORDS = frozenset("type types kind kinds sort sorts class classes category categories variety varieties "
                        "species family families".split())


# A rate a paper reports (an accuracy, a success rate, a speedup) is a number without a unit of
# time or size: "less than five minutes on one GPU" does not say how accurate a model is.
_ASKS_RATE = re.compile(r"\b(?:accuracy|accuracies|(?:error|success|win|pass|hit) rates?|percentage|fraction|share|"
                        r"proportion|speedups?|ratios?)\b|准确率|正确率|成功率|胜率|比例|百分比|百分之|加速比|倍", re.I)
_TIME_UNITS = r"ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?"
_UNIT = re.compile(rf"(?:{_TIME_UNITS}|[KMGT]B|bytes?|GPUs?|parameters?|params|tokens?|samples?|steps?|epochs?|layers?)",
                   re.I)


def _joined_unit(tok: str) -> str:
    """The unit written onto a number ("3.2s" -> "s", "7B" -> "B"); "" for a number in words."""
    return re.sub(r"^[\d.,]+", "", tok) if tok[0].isdigit() else ""


def _numbers(text: str) -> tuple[list[str], list[int]]:
    """The text's words (list markers left out) and the positions of those that are numbers, not names."""
    toks = _TOKEN.findall(ENUMERATOR.sub(" ", text))
    return toks, [i for i, tok in enumerate(toks) if NUMBER.match(tok) and not _NAME_WITH_DIGITS.fullmatch(tok)]


def states_rate(text: str) -> bool:
    """True when the text states a number that is not a duration, a size or a count of things."""
    toks, numbers = _numbers(text)
    for i in numbers:
        rest = _joined_unit(toks[i])
        after = toks[i + 1:i + 3]
        if after and after[0].casefold() in ("million", "billion", "thousand", "hundred"):
            after = after[1:]  # "four million actions": the unit follows the magnitude
        unit = rest or (after[0] if after else "")
        if not _UNIT.fullmatch(unit):
            return True
    return False


# Questions asking what size something is ("what size", "what batch size"): a size is an absolute
# amount, so a percentage or a factor ("17% relative increase", "5-60x faster") does not state it.
# ("How large is the reduction ...?" asks how big a change is: a percentage answers it.)
_ASKS_SIZE = re.compile(r"\bwhat (?:[\w-]+ ){0,2}sizes?\b|\bwhat is the (?:[\w-]+ )?size\b", re.I)
_MAGNITUDES = frozenset("hundred thousand million billion trillion".split())
_RELATIVE = re.compile(r"(?:%|x|×|-?fold)$", re.I)


def states_amount(text: str) -> bool:
    """True when the text states an amount in figures ("7B", "512 vectors", "1.5 million"), not a
    percentage or a factor ("17%", "5-60x") nor a count in words ("two main limitations")."""
    toks, numbers = _numbers(text.replace("\\%", "%"))  # abstracts keep LaTeX's "17\%"
    for i in numbers:
        after = toks[i + 1].casefold() if i + 1 < len(toks) else ""
        if _RELATIVE.search(toks[i]) or after in ("percent", "times", "fold", "x"):
            continue
        if any(ch.isdigit() for ch in toks[i]) or after in _MAGNITUDES:
            return True
    return False


def _derivation(word: str) -> str:
    """"agent" for a doer noun (annotators, generators), "action" for a deed noun (annotations,
    generation), else "": the stemmer gives both one stem, but they count different things."""
    w = word.casefold().rstrip("s")
    return "agent" if w.endswith(("or", "er")) else "action" if w.endswith(("ion", "ment")) else ""


_PLURAL_NOUN = re.compile(r"[a-z]{2,}[^s\W]s")
# "a speedup of 1.70-2.10 times" ("\\times" in LaTeX): a factor, not a count of times.
_MULTIPLIERS = frozenset({"times"})


def states_count_of(terms: set[str], word: str = "") -> Callable[[str], bool]:
    """A check that a text states a number next to one of `terms` (the thing counted; `word`, the
    question's own word for it: a count of annotations does not say how many annotators there were)."""
    from rag.index.lexical import tokenize

    kind = _derivation(word)

    def counts(w: str) -> bool:
        return bool(set(tokenize(w, compounds=False)) & terms) and not (kind and _derivation(w) not in ("", kind))

    def check(text: str) -> bool:
        toks, numbers = _numbers(text)
        # "on a single A100 GPU" counts GPUs: one.
        numbers += [i for i, tok in enumerate(toks) if tok.casefold() == "single"]
        for i in numbers:
            _, hyphen, joined = toks[i].partition("-")
            if hyphen and counts(joined):
                return True  # "a one-step bias", "a 5-layer network": the count joined to what it counts
            after = toks[i + 1] if i + 1 < len(toks) else ""
            if _PLURAL_NOUN.fullmatch(after) and after.casefold() not in _MAGNITUDES | _MULTIPLIERS:
                # "pairs spanning four categories": a number right before a plural noun counts that noun
                if counts(after):
                    return True
                continue
            near = toks[max(0, i - COUNT_BEFORE):i] + toks[i + 1:i + 1 + COUNT_AFTER]
            if any(counts(w) for w in near):
                return True
        return False
    return check


# "the reranker that decides both the order and how many passages to keep": "how many" after a verb of
# deciding is what a described method does, not what the question asks.
_DECIDES_HOW = re.compile(r"\b(?:decid|choos|chose|determin|select|pick|learn|predict|adjust|adapt|control|estimat)"
                          r"\w*\s+(?:[\w-]+\s+){0,4}?how (?:many|much|long|often)\b", re.I)


def asks_quantity(question: str) -> bool:
    """True when the question asks for a quantity ("how many", "what is the size of", 多少)."""
    question = _DECIDES_HOW.sub(" ", question)
    return bool(_ASKS_FOR_QUANTITY.search(question) or _ASKS_EXTREME.search(question) and not numbers_in(question))


# A number standing alone ("42%", "1.70-2.10x", "over 20"), not part of a name ("GPT-2", "7B", "AIME24",
# "Qwen2.5"): not after a letter or a letter and a hyphen, not before a letter but a multiplier's "x".
_BARE_NUMBER = re.compile(r"(?<![\w.])(?<![A-Za-z]-)\d+(?:\.\d+)?(?!\.?\d|x[A-Za-z]|[A-WYZa-wyz_])")


def numbers_in(text: str) -> set[float]:
    """The values of the bare numbers a text writes ("42\\% fewer parameters" -> {42.0})."""
    return {float(m.group()) for m in _BARE_NUMBER.finditer(text)}


# "How long does X take?", "多长时间", "多久": a duration, so a number of something else ("dual constraints",
# "four datasets") does not state it. ("How long are the sequences?" asks a length: not matched.)
_ASKS_DURATION = re.compile(r"\bhow long (?:does|did|do|would|will|can)\b[^?]*?\b(?:take|takes|took|last|run|runs|train)\b"
                            r"|\bhow much (?:wall[- ]clock |compute |training |inference )?time\b|多长时间|多久|多少时间|耗时多", re.I)
_TIME_UNIT = re.compile(rf"(?:{_TIME_UNITS}|GPU-?hours?)", re.I)


def states_duration(text: str) -> bool:
    """True when the text states a duration: a number with a unit of time ("five minutes", "200 H100 GPU
    hours", "3.2s")."""
    toks, numbers = _numbers(text)
    for i in numbers:
        # the unit joined to the number ("3.2s"), or among the three words after it ("200 H100 GPU hours")
        if any(_TIME_UNIT.fullmatch(w) for w in [_joined_unit(toks[i]), *toks[i + 1:i + 4]] if w):
            return True
    return bool(re.search(r"\d\s*(?:分钟|小时|秒|天)", text))  # a unit in Chinese script after a digit ("5 分钟")


# Questions asking for a percentage: "What percentage ...?", "百分之多少" (which "two categories" does not
# state), and "By how many percentage points ...?", "多少个百分点", a difference of percentages, which an
# abstract states as percentages ("safety by 34.2%"), seldom with the word "points".
_ASKS_PERCENT = re.compile(r"\bpercentage[- ]points?\b|百分点|\b(?:what|which) percentages?\b|\bhow many percent\b"
                           r"|\bby what percent\b|百分之(?:多少|几)", re.I)
_STATES_PERCENT = re.compile(r"\d\s*(?:\\?%|percent\b|pp\b|points?\b|个百分点)", re.I)


# "..., and which are they?", "name them", "分别是哪些": a count question that also asks for the things.
# (Not "分别是多少", "how much is each": a quantity of each.)
ALSO_NAMES_THEM = re.compile(r"(?:\band|,)\s*(?:what|which)\s+(?:[a-z]+\s+)?(?:are|were)\s+(?:they|them|these|those)\b"
                              r"|\b(?:name|list)\s+them\b|分别是(?!多少|几)|是哪些|有哪些", re.I)
# "A, B, and C" / "A, B or C": three or more items listed.
_LISTED = re.compile(r"[\w.-]+(?:\s+[\w.-]+){0,4},\s+[\w.-]+(?:\s+[\w.-]+){0,4},?\s+(?:and|or)\s+[\w.-]+", re.I)


def _lists_items(text: str) -> bool:
    """True when a text lists things: two or more names, or three or more items in a row."""
    return len(extract_names(text)) >= 2 or bool(_LISTED.search(text))


def states_quantity(question: str) -> Callable[[str], bool]:
    """For a question asking for a quantity (`asks_quantity`), a check that a text states it: a count
    of what is counted, a rate, an amount, or any number."""
    if _ASKS_PERCENT.search(question):
        return lambda text: bool(_STATES_PERCENT.search(text))
    if _ASKS_DURATION.search(question):
        return states_duration
    counting = counts_asked_thing(question)
    count = counting or states_number
    if ALSO_NAMES_THEM.search(question):
        # "How many benchmarks does X use, and which are they?": a sentence listing them ("AMC23,
        # AIME24, and AIME25") answers both, though it writes no number (also when what is counted
        # takes more words than a count's head: "how many different video generation tools").
        return lambda text: count(text) or _lists_items(text)
    if counting is not None:
        return counting
    if _ASKS_RATE.search(question):
        return states_rate
    if _ASKS_SIZE.search(question):
        return states_amount
    return states_number if _ASKS_COUNT.search(question) else states_measure(question)
