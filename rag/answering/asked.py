"""What a question's form asks for, and whether a sentence states that kind of thing.

"How many ...?" is answered by a number, "Which model does X use?" by a name; a sentence that only
restates the question's words ("X uses large language models") does not answer it. The offline
answerer lowers the evidence of a sentence lacking what is asked (`rag.answering.offline`).
"""
from __future__ import annotations

import re
from typing import Callable

from rag.answering.quantity import (ALSO_NAMES_THEM, ENUMERATOR, KIND_WORDS, asks_quantity, counted,
                                    states_quantity)
from rag.index.names import extract_names
from rag.index.translate import english_query
from rag.text import mostly_cjk

# Questions asking which named thing a paper used: the answer names it (a model, dataset or
# benchmark is referred to by a proper name: "Unitree G1", "Sora", "AIME24").
_NAMED_THING_ZH = ("(?:模型|数据集|基准|机器人|模拟器|仿真器|生成器|骨干网络|硬件|环境|平台|套件|工具|软件"
                   # what a method records or stimulates with, as in English
                   "|阵列|电极|植入物|探针|传感器)")
# After 哪, also the field's Latin acronyms for such things, which a Chinese question writes as they are
# ("基于哪个LLM"; before 哪 such a word is more often the subject: "LLM 在哪些任务上 ...").
_ASKED_THING_ZH = f"(?:{_NAMED_THING_ZH}|(?:M?LLM|VLM|GPU)s?(?![A-Za-z]))"
# "哪两类数据" asks which kinds (类) of data, answered by a description, as "what class of X" is.
_ZH_KINDS = "[一两几三四五]?类"
# ("Which papers build datasets ...?" asks for papers, not for a dataset's name.)
_NAMED_THING_EN = (r"(?:models?|datasets?|benchmarks?|robots?|humanoids?|machines?|simulators?|gpus?|hardware|llms?|vlms?|mllms?|"
                   r"backbones?|generators?|environments?|platforms?|suites?|testbeds?|tools?|software|"
                   r"arrays?|electrodes?|implants?|probes?|sensors?)")
# Capitalised plain words ("Baoding", "Conditional Sequence Modeling"): a name only in context.
_PLAIN_WORDS = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
# The words framing a request for names ("which", "name the", "what are its"), not the kind asked for.
_ASK_FRAME = frozenset("which what are were the its their name names list all please by of".split())
# "What clip generators were used?" asks which ones as "Which generators ...?" does; not "what kind of
# model" (a description), nor "what is / does / the ..." (the noun after is no longer the thing asked for).
_WHAT_AS_WHICH = (r"what(?!\s+(?:kinds?|types?|sorts?|class|classes|forms?|famil(?:y|ies)|is|are|was|were|does|do|"
                  r"did|has|have|had|can|could|would|will|should|the|a|an|its|their|this|that|these|those)\b)")
# The thing asked for, up to two words before its kind word ("which pretrained model"; "what stimulation /
# electrode setup": a slash offers alternatives, as "or" does; "what stimulation and electrode hardware": so
# does "and"). A setup, configuration, family or version of a named thing is that thing ("what GPU setup",
# "which model families": the answer names GPUs, models).
# It ends its noun phrase: "which robot tasks" asks for tasks; so does a verb in the past tense after it
# ("which generators produced the clips?").
_NAMED_THING_PHRASE = (rf"(?:[\w-]+(?: / | |/| and | or )){{0,2}}{_NAMED_THING_EN}"
                       r"(?: (?:setups?|configurations?|famil(?:y|ies)|versions?))?"
                       r"(?=\s+(?:is|are|was|were|does|do|did|has|have|had|can|could|would|will|should|"
                       # ("which llm backbone + size": a terse question joins what it asks with "+" or "&")
                       r"used|in|on|for|from|of|to|with|by|at|that|the|a|an|or|and|[a-z]{3,}ed)\b|\s*[?,.;:+&]|$)")
_ASKS_FOR_NAMED_THING = re.compile(rf"\b(?:which|{_WHAT_AS_WHICH}) (?!(?:papers?|works?|studies|study|articles?)\b)"
                                   rf"{_NAMED_THING_PHRASE}"
                                   # "Name the four datasets X uses.", "List the benchmarks ...": a request for names
                                   r"|^\W*(?:please\W+)?(?:name|list)\s+(?:all\s+)?(?:the\s+|its\s+|their\s+)?(?:\w+\s+){0,3}?"
                                   rf"{_NAMED_THING_EN}\b"
                                   # "What are the four public datasets X is evaluated on?": which ones, by name
                                   rf"|\bwhat (?:are|were) (?:the|its|their) (?:[\w-]+ ){{0,2}}{_NAMED_THING_EN}"
                                   r"(?=\s+(?:that|which|used|in|on|for|from|of|to|with|by|at|(?-i:[A-Z][\w-]*))\b|\s*[?,.;:]|$)"
                                   # "TR-DRL eval suites?", "T2I-R1 base model?": a name and the kind asked for, tersely
                                   rf"|^\W*[^\s?]+\s+(?:[\w-]+\s+){{0,2}}{_NAMED_THING_EN}\s*\?*\s*$"
                                   # "Which baselines / existing methods did X compare against?": the rivals, by name
                                   r"|\bwhich (?:[\w-]+ ){0,3}(?:baselines?|competitors?|rivals?|(?:methods?|approaches|models?|"
                                   r"algorithms?)(?= [^?,;]{0,40}\b(?:compared?|compares|comparing|benchmark(?:ed)?|tested|evaluated) "
                                   r"(?:it |them )?(?:against|with|to)\b))"
                                   # "..., by name?", "What are the names of the datasets ...?": names asked for
                                   r"|\bby name\b|\bnames? of (?:the|its|their|these|those|all)\b"
                                   rf"|哪(?!篇|些论文|{_ZH_KINDS})[^，。？?]{{0,16}}{_ASKED_THING_ZH}|{_NAMED_THING_ZH}[^，。？?]{{0,8}}哪(?!{_ZH_KINDS})"
                                   # "用的 LLM 具体是哪个？": an acronym followed by "is which one" is the thing asked for
                                   # ("底座 LLM 又是哪一个？": "and which is the base LLM?")
                                   rf"|{_ASKED_THING_ZH}\s*(?:又|具体|到底|究竟|分别)*是哪(?:个|一个|种|款|些)"
                                   # "四个公开数据集具体叫什么名字？": what the datasets are called
                                   rf"|{_ASKED_THING_ZH}[^，。？?]{{0,8}}(?:叫什么|(?:的|是)?什么名字|的?名称是什么|的?名字是什么)", re.I)
# A two- or three-letter acronym ("RL", "PDE", "CNNs") is usually a field's term, not a name.
TERM_ACRONYM = re.compile(r"[A-Z]{2,3}s?")
# A model named with its version: a capitalised word, a hyphen and a number ("Gemini-2.5-Pro").
_VERSIONED = re.compile(r"(?<![\w-])[A-Z][A-Za-z]*-\d+(?:\.\d+)*(?:-[A-Za-z0-9]+)*")
def _acronyms_of(words: list[str]) -> set[str]:
    """The initials of every run of 2-5 consecutive words, case-folded."""
    return {"".join(w[0] for w in words[i:j]).casefold() for i in range(len(words))
            for j in range(i + 2, min(i + 5, len(words)) + 1)}


# "Who proposed X?", "Who wrote the X paper?", "谁提出了 X?": asks for the people behind a paper. (Not
# "Who labelled the pairs?" nor "Who learns ...?" naming no paper: a description or a paper answers.)
_ASKS_AUTHORS = re.compile(r"\bwho\s+(?:\w+\s+)?(?:proposed|proposes|introduced|introduces|wrote|writes|authored|"
                           r"developed|develops|created|invented|designed|published)\b|谁\S{0,3}(?:提出|发明|开发|设计|写|发表)"
                           r"|(?:提出|发明|开发|写|发表)\S{0,4}的?(?:人|团队)是谁", re.I)
# A sentence naming its authors: abstracts almost never do ("Smith et al. propose", "the authors of").
_NAMES_AUTHORS = re.compile(r"\bet al\b|\b(?:authors?|researchers|team) (?:from|at|of)\b", re.I)


def asks_authors(question: str) -> bool:
    """True when a question asks who proposed, wrote or developed something."""
    return bool(_ASKS_AUTHORS.search(question))


# Training settings a question may ask for ("What learning rate and batch size did X use?", "种群规模多大？"),
# each by its English words and its Chinese ones. An abstract seldom reports them: a sentence states one only
# by naming it, and a number elsewhere in it ("a 17% relative increase") is another quantity.
_SETTINGS = {r"learning[- ]rates?": "学习率", r"batch[- ]sizes?": "批大小|批量大小|批次大小", r"weight[- ]decay": "权重衰减",
             r"dropout": "dropout", r"warm-?up": "预热|warm-?up", r"population[- ]sizes?": "种群规模|种群大小"}
_ASKS_SETTING = [(re.compile(en, re.I), re.compile(
    rf"\b(?:what|which|how (?:many|large|big|long))\s+(?:[\w-]+\s+){{0,2}}?(?:{en})"
    rf"|(?:多少|多大|什么|哪个|几)[^，。？?,]{{0,6}}?(?:{zh})|(?:{zh})[^，。？?,]{{0,6}}?(?:多少|多大|是什么|是多少|几)", re.I))
    for en, zh in _SETTINGS.items()]


def _names_settings(question: str) -> Callable[[str], bool] | None:
    """For a question asking for training settings, a check that a text names each one; None otherwise."""
    asked = [words for words, asks in _ASKS_SETTING if asks.search(question)]
    return (lambda text: all(words.search(text) for words in asked)) if asked else None


def states_what_is_asked(question: str, named: dict[str, list[str]] | None) -> Callable[[str], bool] | None:
    """What a sentence must state to answer the question, when its form says: a number for "how many",
    and, for "which model / dataset / benchmark ..." about a paper the question names, a name the
    question does not already give (a question naming no paper may be answered by several papers'
    sentences, where the rule would favour any sentence with a name in it); a training setting asked
    for, by its name."""
    setting = _names_settings(question)
    if setting is not None:
        stated = _states_what_is_asked(question, named)
        return setting if stated is None else (lambda text: setting(text) and stated(text))
    return _states_what_is_asked(question, named)


def _states_what_is_asked(question: str, named: dict[str, list[str]] | None) -> Callable[[str], bool] | None:
    if asks_quantity(question):
        return states_quantity(question)
    if not named:
        return None
    if asks_authors(question):
        # An abstract describes the work, not who did it: a sentence about the paper is no answer.
        return lambda text: bool(_NAMES_AUTHORS.search(text))
    return asks_for_name(question, named) or names_an_instance(question, named) or states_attribute(question, named)


def asks_for_name(question: str, named: dict[str, list[str]] | None = None) -> Callable[[str], bool] | None:
    """For "which model / dataset / benchmark ...?", a check that a text names something the question
    (and the papers it names, `named`) does not already give; None for a question of another form."""
    asked = _ASKS_FOR_NAMED_THING.search(question)
    return _names_new_thing(question, named, asked.group()) if asked else None


# "Which RL algorithm, e.g. PPO or GRPO, does X use?", "What kind of model (for example a linear model or
# a neural network) is X's ...?": the kind asked for, then examples of an answer.
_ASKS_WITH_EXAMPLES = re.compile(r"\b(?:which|what)\s+(?P<kind>(?:[\w-]+\s+){0,4}?[\w-]+),?\s*\(?\s*"
                                 r"(?:e\.g\.|for example|for instance|such as)\s*,?\s*(?P<examples>[^()?;]+?)"
                                 r"\s*(?:\)|,|\?|$)", re.I)


# "哪种具体的物理系统，比如倒立摆？", "哪款求解器，例如 Gurobi 还是 CPLEX？": the same in Chinese.
_ASKS_WITH_EXAMPLES_ZH = re.compile(r"哪[种个款一](?P<kind>[^，,。？?（(]{1,12}?)[，,（(]?\s*(?:比如|例如|譬如)\s*"
                                    r"(?P<examples>[^，,。？?）)]+)")


def names_an_instance(question: str, named: dict[str, list[str]] | None = None) -> Callable[[str], bool] | None:
    """For "which <kind>, e.g. A or B, ...?", a check that a text names an instance of the kind: one of
    the examples, or a thing the question does not give (by name); None for a question of another form.

    Giving examples says an instance is asked for: a sentence restating the kind ("build on Parameter
    Efficient Fine-Tuning" for "which parameter-efficient fine-tuning technique, such as LoRA ...")
    names none.
    """
    from rag.index.lexical import tokenize

    m = _ASKS_WITH_EXAMPLES.search(question) or _ASKS_WITH_EXAMPLES_ZH.search(question)
    if not m:
        return None
    examples = [set(tokenize(e, compounds=False))
                for e in re.split(r",|\bor\b|\band\b|还是|或者|或|和|与|、", m.group("examples"))]
    examples = [e for e in examples if e]
    names = _names_new_thing(question, named, m.group("kind"))

    def names_one(text: str) -> bool:
        words = set(tokenize(text, compounds=False))
        return any(e <= words for e in examples) or names(text)
    return names_one


def _names_new_thing(question: str, named: dict[str, list[str]] | None, asked: str) -> Callable[[str], bool]:
    """A check that a text names something the question and `named` do not give, of the kind in `asked`."""
    words = re.findall(r"[A-Za-z]+", question)
    # The kind of thing asked for, in the question's words ("robot hand model", "neuron model"),
    # besides the generic ones; an acronym among them ("RL benchmarks") is a field, not a kind.
    kinds = {w.casefold().removesuffix("s") for w in re.findall(r"[A-Za-z]+", asked)
             if w.casefold() not in _ASK_FRAME and not TERM_ACRONYM.fullmatch(w)}
    kind_word = re.compile(rf"\b(?:{_NAMED_THING_EN}|"
                           + "|".join(re.escape(k) + "s?" for k in sorted(kinds) or ["(?!)"]) + r")\b", re.I)
    given = {n.casefold() for n in extract_names(question)} | {n.casefold() for n in (named or {})}
    given |= _acronyms_of(words)  # "LLMs" for the question's "large language models" names nothing new

    q_words = {w.casefold() for w in words}
    q_words |= {w + "s" for w in q_words} | {w[:-1] for w in q_words if w.endswith("s")}  # "Transformers" for "Transformer"

    def names_something(text: str) -> bool:
        text = ENUMERATOR.sub(" ", text)
        # Capitalised plain words are a thing's name only where the sentence says what kind of thing
        # ("the Shadow Hand platform", "models such as Sora"): a task ("Baoding ball rotation") or a
        # paradigm spelled out ("Conditional Sequence Modeling (CSM)") is no model, dataset or benchmark.
        # A name by its form ("ImageNet", "Veo2", "Janus-Pro", "Unitree G1") needs no such word.
        typed = bool(kind_word.search(text))
        spelled = _acronyms_of(re.findall(r"[A-Za-z]+", text))
        # The words spelling out a name the question gives are that name: "Robot Tactile Olympiad (RoTO)".
        spelling_given = _spelled_out(text, given)
        # Plain capitalised words inside the sentence are names too ("Franka", "Sora", "Cityscapes").
        proper = {w for w in re.findall(r"(?<=[a-z0-9,;:)] )[A-Z][a-z]+\b", text) if w.casefold() not in q_words}
        versioned = set(_VERSIONED.findall(text))  # "Gemini-2.5-Pro", "Llama-3-8B"
        # A word set in quotes is a name: 'a ``Utah'' array'.
        quoted = {w for w in _QUOTED_NAME.findall(text) if w.casefold() not in q_words}
        for name in extract_names(text) | proper | versioned | quoted:
            if TERM_ACRONYM.fullmatch(name):
                continue  # "RL", "ODEs": a field's term, not the name of a thing used
            if not typed and _PLAIN_WORDS.fullmatch(name):
                continue
            if spelling_given and all(w.casefold() in spelling_given for w in re.findall(r"[A-Za-z]+", name)):
                continue
            key = name.casefold()
            if key in given or key.rstrip("s") in given or key.rstrip("s") in spelled:
                continue  # given by the question, or a term spelled out beside it ("large language models (LLMs)")
            if any(key in g for g in given if len(g) > len(key)):
                continue  # part of a name the question gives ("RAG" in "DynamicRAG")
            return True
        return False
    return names_something


_QUOTED_NAME = re.compile(r"(?:``|\"|“|‘)([A-Z][\w-]*)(?:''|\"|”|’)")


# Kinds of named things an ML abstract says it used, by family: a question asking for one kind is
# answered by a sentence naming a thing of a kind in the same family ("eval suites?" -> "the Robosuite
# and MetaWorld benchmarks", "which testbed?" -> "the AndroidWorld benchmark", "base model?" -> "the
# baseline model, Janus-Pro"), since abstracts and askers use different words for the same role.
_KIND_FAMILIES = (
    frozenset("benchmark suite testbed environment simulator".split()),  # what a method is evaluated in
    frozenset("model backbone generator llm vlm mllm lrm tool software".split()),  # the models or tools it uses or beats
    frozenset("robot humanoid machine hand arm platform hardware".split()),  # the machine it runs on
    frozenset("gpu accelerator hardware".split()),  # what it is computed on ("on what hardware?": "a single A100 GPU")
    # what it records or stimulates with (recording or stimulation hardware is such a device, whatever a
    # robot's hardware is)
    frozenset("array electrode implant probe sensor hardware".split()),
)


# "What kind of electrode setup was X tested with?": asking for a kind of a thing that has names is answered
# by a sentence naming one ("a ``Utah'' array") as well as by one describing it, so a sentence naming one
# is evidence. (Only here: a question naming no paper is not doubted for an answer that names nothing,
# `asks_for_name` does not read "what kind of".)
_ASKS_KIND_OF_NAMED_THING = re.compile(rf"\bwhat (?:kinds?|types?|sorts?) of {_NAMED_THING_PHRASE}", re.I)
_COUNTS_NAMED_THING = re.compile(rf"\bhow many (?:[\w-]+ ){{0,4}}?{_NAMED_THING_EN}\b", re.I)


def names_asked_kind(question: str, named: dict[str, list[str]] | None) -> Callable[[str], bool] | None:
    """For "which / what <kind> ...?" (or "how many <kind> ..., and what are they?") about a named paper,
    a check that a sentence names a new thing as one of the asked kind's family (`_KIND_FAMILIES`);
    None for other questions or kinds in no family.

    The name must stand beside the kind word ("the AndroidWorld benchmark", "the baseline model,
    Janus-Pro"): "model" is in most ML sentences, and "a generalizable reward model ... (RLHF)" names
    no model."""
    asked = _ASKS_FOR_NAMED_THING.search(question) or _ASKS_KIND_OF_NAMED_THING.search(question)
    if asked is None and asks_quantity(question) and ALSO_NAMES_THEM.search(question):
        # "How many video generation tools does X list, and what are they?" asks for them by name too
        asked = _COUNTS_NAMED_THING.search(question)
    if asked is None:
        return None
    # "部署到哪个机器人上了" (deployed on which robot?): a Chinese kind is read through its dictionary glosses
    kind_text = english_query(asked.group()) if mostly_cjk(asked.group()) else asked.group()
    names_something = _names_new_thing(question, named, kind_text)
    words = {w.casefold().removesuffix("s") for w in re.findall(r"[A-Za-z]+", kind_text)}
    family = frozenset().union(*(f for f in _KIND_FAMILIES if f & words))
    if not family:
        return None
    kind = r"\b(?:" + "|".join(sorted(family)) + r")s?\b"
    # up to five words just before the kind word ("DINO, SigLIPv2, DeIT, and AugReg models"), or the
    # words a comma or "such as" puts right after it ("models such as Sora")
    before = re.compile(rf"(?:[^\s.;:]+\s+){{1,5}}{kind}", re.I)
    after = re.compile(rf"{kind}\s*(?:,|:|\(|\bsuch as\b|\bincluding\b|\blike\b|\bcalled\b|\bnamed\b|\be\.g\.,?)"
                       r"\s*(?:[^\s.;]+\s*){1,3}", re.I)
    # Only a name by its form counts here ("AndroidWorld", "Janus-Pro", "SigLIPv2", "DINO"): a plain
    # capitalised word beside "models" is as often a title's or a topic's word ("the problem of Bias in
    # Language Models").
    plain = re.compile(r"(?<![\w`\"“‘-])[A-Z][a-z]+(?![\w'\"”’-])")

    # A model a paper beats is named right after the verb, with no kind word ("even surpassing
    # Gemini-2.5-Pro", "outperforms GPT-4o"): for a question about the models beaten ("which model
    # does X outdo?"), a name there is one (not for "which VLM is X built on?": a model beaten is no base).
    beaten = "model" in family and (_BEATEN.search(question) or _BETTER_THAN.search(question))
    patterns = (before, after, _BEATEN) if beaten else (before, after)

    # "Which model does X outdo?" asks for a model X beats: a sentence naming its base model ("fine-tuning a
    # base LRM (DeepSeek-R1-Distill-Qwen-1.5B)") does not answer it; one saying what X beats does.
    beating = "model" in family and bool(_BEATEN.search(question))

    def named_beside_kind(text: str) -> bool:
        if beating and not (_BEATEN.search(text) or _BETTER_THAN.search(text)):
            return False
        return any(names_something(plain.sub(lambda w: w.group().lower(), m.group()))
                   for pattern in patterns for m in pattern.finditer(text))
    return named_beside_kind


# "What's their GRPO variant called?", "what is the name of ...", "what do they call ...": a request for a name.
_ASKS_NAME = re.compile(r"\b(?:called|named)\s*[?？]?\s*$|\bwhat(?:'s|\s+is|\s+are)?\s+(?:the\s+|its\s+|their\s+)?names?\b"
                        r"|\bwhat\s+do(?:es)?\s+(?:they|it|the\s+authors)\s+call\b", re.I)


def names_variant(question: str) -> Callable[[str], bool] | None:
    """For a question asking what something is called, a check that a text gives a new name built on a
    name the question writes ("their GRPO variant" -> "BiCoT-GRPO"); None for other questions. A name
    compounded from another names a variant of it; what else the sentence says does not matter."""
    if not _ASKS_NAME.search(question):
        return None
    bases = {n.casefold() for n in extract_names(question)}
    if not bases:
        return None

    def gives_variant(text: str) -> bool:
        for name in extract_names(text):
            key = name.casefold()
            if key not in bases and bases & set(re.split(r"[-_/+]", key)):
                return True
        return False
    return gives_variant


# "What is the extra replay mechanism X adds?", "what's its memory module?": a part of a method asked for by
# the word naming what it does ("replay") and a word for a part ("mechanism", "module").
_ASKS_PART = re.compile(r"\bwhat(?:'s|\s+is|\s+are)?\s+(?:the|its|their)\s+((?:[\w-]+\s+){1,3}?)"
                        r"(?:mechanism|module|component|technique|trick|scheme|add-on|addon|extension|block|unit)s?\b",
                        re.I)


def names_part(question: str) -> Callable[[str], bool] | None:
    """For a question asking for a part of a method by what it does ("what is the extra replay mechanism
    they add?"), a check that a text coins a name for it: a capitalised name holding one of the words
    before the part's word, with its acronym in parentheses ("Successful Transition Replay (STR)");
    None for other questions. Abstracts name the parts they add that way, and the name says what it does."""
    asked = _ASKS_PART.search(question)
    if asked is None:
        return None
    words = re.findall(r"[A-Za-z]{4,}", asked.group(1))
    if not words:
        return None
    word = "|".join(re.escape(w.capitalize()) for w in words)
    coined = re.compile(rf"(?:[A-Z][\w-]*\s+){{0,4}}(?:{word})\w*(?:\s+[A-Z][\w-]*){{0,3}}"
                        r"\s*\(\s*[^\s()]*[A-Z][^\s()]*\s*\)")
    return lambda text: bool(coined.search(text))


# "How was X tested?", "What stimulation setup was X tested with?", "what stimulation technique / hardware was
# used to test X?", "What kind of stimulation was X tested with?": asks how the paper's method was put to the
# test, which its abstract reports in the sentence saying so ("We tested X using ...", "Experiments on ...").
# (Not "Which benchmark / what learning rate was X tested with?": a kind or a value is asked for, which such
# a sentence need not state.)
_ASKS_HOW_TESTED = re.compile(r"\bhow\s+(?:was|were|is|are|did|do|does)\s+(?:\S+\s+){1,4}?(?:tested|evaluated|validated|"
                              r"assessed|test|evaluate|validate)\b|\bwhat\s+(?:[\w/-]+\s+){0,3}?(?:setup|set-up|settings?|"
                              r"conditions?|techniques?|hardware|equipment|devices?|apparatus|(?:kinds?|types?|sorts?)\s+of\s+[\w/-]+)\s+"
                              # (or a pronoun, as a question typed tersely has it: "what hardware they used to test it?")
                              r"(?:was|were|is|are|did|do|does|they|it)\b.*\b(?:tested|evaluated|validated|assessed|"
                              r"test|evaluate)\b", re.I)
# A terse question names the setup and where it served, with no verb of testing: "omiso stimulation setup
# used in experiments", "the experimental setup of X".
_ASKS_SETUP_TESTED = re.compile(r"\b(?:setup|set-up|hardware|equipment|devices?|apparatus)\s+(?:(?:was|were)\s+)?"
                                r"(?:used\s+)?(?:in|for|during)\s+(?:the\s+|its\s+|their\s+)?(?:experiments?|"
                                r"evaluations?|tests?|testing)\b|\bexperimental\s+(?:setup|set-up)\b", re.I)
_REPORTS_TEST = re.compile(r"\bwe\s+(?:test|tested|evaluate|evaluated|validate|validated|assess|assessed)\b|"
                           r"\b(?:experiments?|evaluations?|tests?)\s+(?:on|with|in|using|across)\b|"
                           r"\b(?:tested|evaluated|validated)\s+(?:\w+\s+)?(?:on|with|in|using)\b", re.I)


def reports_test(question: str) -> Callable[[str], bool] | None:
    """For a question asking how a paper was tested, a check that a sentence reports its test; else None."""
    if not (_ASKS_HOW_TESTED.search(question) or _ASKS_SETUP_TESTED.search(question)):
        return None
    return lambda text: bool(_REPORTS_TEST.search(text))


# What an abstract announces by its word ("we formulate a key insight: ...", "DPO has the limitation that ...",
# "Our key contributions include ...", "Motivated by this, we propose ..."), by family: a question asking for
# one ("What key insight underlies X?", "What shortcoming of DPO motivates X?") is answered by the sentence
# writing a word of the family, however differently the rest of it is worded.
_ANNOUNCED_FAMILIES = (
    frozenset("insight insights intuition intuitions observation observations".split()),
    frozenset("limitation limitations shortcoming shortcomings drawback drawbacks weakness weaknesses".split()),
    frozenset("contribution contributions".split()),
    frozenset("motivation motivations motivated".split()),
    frozenset("hypothesis hypotheses hypothesize hypothesise".split()),
)
_ANNOUNCED_WORDS = sorted(set().union(*_ANNOUNCED_FAMILIES), key=len, reverse=True)
_ASKS_ANNOUNCED = re.compile(r"\b(?:what|which)\s+(?:(?:is|are|was|were)\s+)?(?:(?:the|its|their)\s+)?(?:[\w-]+\s+){0,2}?("
                             + "|".join(_ANNOUNCED_WORDS) + r")\b", re.I)


def announces_asked(question: str) -> Callable[[str], bool] | None:
    """For "what <insight / limitation / contribution / motivation / hypothesis> ...?", a check that a
    sentence writes a word of that family (`_ANNOUNCED_FAMILIES`); None for other questions."""
    asked = _ASKS_ANNOUNCED.search(question)
    if asked is None:
        return None
    family = next(f for f in _ANNOUNCED_FAMILIES if asked.group(1).casefold() in f)
    pattern = re.compile(r"\b(?:" + "|".join(sorted(family)) + r")\b", re.I)
    return lambda text: bool(pattern.search(text))


# (the verbs of beating with their endings; "outdoe" + "s" is "outdoes")
_BEATEN = re.compile(r"\b(?:surpass|outperform|outdo|outdoe|beat|exceed|rival)(?:s|es|ed|ing)?\s+(?:the\s+)?"
                     r"(?:[^\s.;]+\s*){1,3}", re.I)
_BETTER_THAN = re.compile(r"\b(?:better than|ahead of|compared? (?:with|to|against)|baselines?)\b", re.I)


def _spelled_out(text: str, names: set[str]) -> set[str]:
    """The words (case-folded) that spell out one of `names` just before it is given in parentheses:
    "Robot Tactile Olympiad ($\\texttt{RoTO}$)" -> {robot, tactile, olympiad} when "roto" is in `names`.
    (A field's acronym is not skipped: "Leaky Integrate and Fire (LIF)" names the neuron model asked for.)
    The words' initials, in order, are letters of the name starting with its first."""
    out: set[str] = set()
    singular = {n.rstrip("s") for n in names}
    for m in re.finditer(r"\(([^()]{1,40})\)", text):
        inner = re.sub(r"\\[A-Za-z]+|[${}]", " ", m.group(1)).split()
        if not inner or inner[0].casefold().rstrip("s") not in singular:
            continue
        name = inner[0].casefold()
        before = re.findall(r"[A-Za-z][\w-]*", text[: m.start()])[-len(name) - 3:]
        for j in range(len(before)):
            # "Leaky Integrate and Fire (LIF)": small joining words give no letter
            initials = "".join(w[0] for w in before[j:] if w.casefold() not in _JOINING).casefold()
            if initials and initials[0] == name[0] and before[j].casefold() not in _JOINING \
                    and _is_subsequence(initials, name):
                out |= {p for w in before[j:] for p in [w.casefold(), *w.casefold().split("-")]}  # "Integrate-and-Fire"
                break
    return out


_JOINING = frozenset("and of the for with to in on a an".split())


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


# "What kernel function does ...?", "Under what licence is ...?", "In what year was ...?": the words
# between what/which and the verb name the attribute asked for.
_ASKS_ATTRIBUTE = re.compile(r"\b(?:what|which)\s+((?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*)(?=\s+(?:is|are|was|were|"
                             r"does|do|did|has|have|had|can|could|would|will|should)\b)", re.I)
# Words of such a phrase that an answer need not repeat: a method or a dataset is answered by its name
# or a description ("Which technique does X use?" -> "contrastive learning"), a kind by an instance.
_ANSWERED_BY_INSTANCE = frozenset("""
    method methods approach approaches technique techniques model models framework frameworks algorithm
    algorithms architecture architectures network networks dataset datasets data benchmark benchmarks task
    tasks tool tools system systems function functions job jobs purpose purposes mechanism mechanisms strategy
    strategies metric metrics measure measures component components module modules idea ideas problem problems
    challenge challenges issue issues kind kinds type types sort sorts way ways part parts step steps role
    roles form forms aspect aspects property properties feature features main key new novel specific
    particular exact other different two three four several baseline baselines setting settings experiment
    experiments result results finding findings goal goals contribution contributions limitation limitations
    advantage advantages class classes category categories family families variant variants name names
    characteristic characteristics trait traits thing things quantity quantities"""
    # A difficulty is stated in its own words ("existing methods assume the dynamics are known"), as a
    # problem or a limitation is.
    """ difficulty difficulties obstacle obstacles drawback drawbacks shortcoming shortcomings weakness
    weaknesses bottleneck bottlenecks"""
    # What a condition or a test is asked for by ("under what circumstances", "which evaluation"): a
    # clause ("if an LLM fine-tuned on siloed data serves ...") or a name ("AoTBench") answers.
    """ circumstance circumstances condition conditions situation situations case cases scenario scenarios
    evaluation evaluations test tests"""
    # A distribution is stated by its family's name ("sampled from a Gaussian prior").
    """ distribution distributions"""
    # The asker's judgement of the thing asked for ("what kind of hard system", "which strong model"):
    # an abstract says it in its own words ("challenging systems", "state-of-the-art models") or not at all.
    """ hard harder hardest difficult challenging easy easier simple simpler complex strong stronger strongest
    weak weaker good better best""".split())
# Words saying that a quantity is asked for: a number answers, and need not repeat them.
_MEASURE_WORDS = frozenset("""
    size sizes scale scales version versions number numbers factor factors amount amounts count counts value
    values percentage percentages fraction fractions ratio ratios dimension dimensions degree degrees level
    levels""".split())


# Words that cannot be part of the noun phrase naming an attribute: what follows "what"/"which" is then a
# clause ("What does the X paper do ...?", "in which one does it ...", "what a population was doing").
_NOT_IN_ATTRIBUTE = frozenset("""
    does do did is are was were has have had can could would will should may might must shall
    the a an this that these those it its they them their one ones he she we you i"""
    # "Compare what each is trying to do": a determiner standing alone is the clause's subject.
    """ each both either neither all"""
    # "What exactly does the 64.2% figure describe?": an adverb after "what" starts a clause too.
    """ exactly precisely specifically actually really else""".split())
# "How many fewer parameters ...?", "how many times faster ...?": a comparison, not a count of things.
_NOT_COUNTED = frozenset("fewer more less times".split())


def _attribute_phrase(question: str, named: dict[str, list[str]] | None = None) -> str:
    """The noun phrase a "what/which <attribute> ...?" question asks for ("kernel function"), or ""
    when the words after "what"/"which" are a clause or only the name of the paper asked about
    ("the systems on which JacobianODE is evaluated")."""
    m = _ASKS_ATTRIBUTE.search(question)
    if not m:
        return ""
    words = m.group(1).split()
    if any(w.casefold() in _NOT_IN_ATTRIBUTE for w in words):
        return ""
    papers = {n.casefold() for n in named or {}}
    return "" if all(w.casefold() in papers for w in words) else m.group(1)


def attribute_terms(question: str, named: dict[str, list[str]] | None = None) -> set[str]:
    """The stemmed words of the attribute a "what/which <attribute> ...?" question asks for, or an empty set.

    "What kernel function does the GP in REBMBO use?" -> {"kernel"}; "Under what licence is X
    released?" -> {"licenc"}. Words an answer need not repeat (method, dataset, kind, ...) and the
    names the question gives are left out.
    """
    from rag.index.lexical import tokenize

    phrase = _attribute_phrase(question, named)
    if not phrase:
        return set()
    words = [w.casefold() for w in re.findall(r"[\w-]+", phrase)]
    if any(w in _MEASURE_WORDS for w in words):
        return set()  # "what size", "which version", "what factor": a number answers, checked elsewhere
    names = {n.casefold() for n in named or {}} | {n.casefold() for n in extract_names(question)}
    kept = [w for w in words if w not in _ANSWERED_BY_INSTANCE and w not in names]
    if len(kept) > 1 and kept[-1] == words[-1] and words[-1] not in KIND_WORDS:
        # "robot hand": a hand is asked for; "robot-object motions" mentions no hand. ("animal species"
        # names a kind of animal: either word says the sentence is about it.)
        kept = kept[-1:]
    return {x for w in kept for x in tokenize(w, compounds=False)}


# A Chinese "什么 / 哪种 / 哪个 <attribute>" question: the noun phrase after the interrogative, up to the
# first word that ends it (a particle, a locative, a preposition or punctuation); a leading "具体的" /
# "主要的" ("specific", "main") qualifies the question, not the attribute. Not "为什么" (why).
_ASKS_ATTRIBUTE_ZH = re.compile(r"(?<!为)(?:什么样的?|什么|哪一?[种个类项些]|何种)(?:具体|主要)?的?"
                                r"([\u3400-\u9fff]{1,8}?)(?=的|来|上|中|里|身上|做|是|用|在|对|随|被|[，,。？?、（(\s]|$)")


def _attribute_terms_zh(question: str) -> set[str]:
    """The stemmed English glosses of the attribute a Chinese "什么/哪种 <attribute>" question asks for.

    The same policy as English (`attribute_terms`) through the dictionary's glosses: "哪种动物" ->
    {"anim"}, "什么网络结构" -> {"structur", ...}. The noun phrase ends at its first verb (a word the
    dictionary glosses first as "to ...": "什么方法优化的" asks for a method, not an optimisation); a
    word glossed as one an answer need not repeat (网络 "network", 数据集 "dataset", 问题 "problem") is
    left out, and a measure word (版本 "version") means a number answers, checked elsewhere.
    """
    from rag.index.lexical import tokenize
    from rag.index.translate import GLOSSES_PER_WORD, STOPWORDS, dictionary, segment

    m = _ASKS_ATTRIBUTE_ZH.search(question)
    if not m:
        return set()
    words = dictionary()
    phrase: list[set[str]] = []  # per noun of the phrase, its glosses' words
    for word in segment(m.group(1), words):
        if word in STOPWORDS:
            continue
        meanings = [g for g in words.get(word, [])[:GLOSSES_PER_WORD] if not g.startswith("to ")]
        if not meanings or words[word][0].startswith("to "):
            break  # a verb: the noun phrase asked about has ended
        phrase.append({w.casefold() for g in meanings for w in re.findall(r"[A-Za-z]+", re.sub(r"\([^)]*\)", " ", g))})
    # The phrase's last noun is its head: "哪种强化学习算法" asks for an algorithm, answered by its name
    # (PPO) whether or not the sentence repeats "reinforcement learning".
    if not phrase or any(g & _MEASURE_WORDS for g in phrase) or phrase[-1] & _ANSWERED_BY_INSTANCE:
        return set()
    return {x for g in phrase if not g & _ANSWERED_BY_INSTANCE for w in g - {"sth", "sb", "one"}
            for x in tokenize(w, compounds=False)}


# "What RL algorithm drives ...?", "which model gives ...", "what property of ...": what/which, the kind
# asked for, then the verb or preposition going on with the question.
_WHAT_KIND = re.compile(r"\b(?:what|which)\s+((?:[\w-]+\s+){0,2}?[\w-]+)\s+(is|are|was|were|does|do|did|has|have|had|"
                        r"can|could|would|will|of|for|in|on|to|from|by|with|that|\w+(?<!ss)(?<!us)(?<!is)s|\w+ed)\b", re.I)


# Words of `_ANSWERED_BY_INSTANCE` that qualify a kind rather than name one: "which two overheads" is
# no kind "two" followed by a verb.
_QUALIFIERS = frozenset("""main key new novel specific particular exact other different two three four several hard
    harder hardest difficult challenging easy easier simple simpler complex strong stronger strongest weak weaker
    good better best""".split())


def asked_kind_terms(question: str) -> set[str]:
    """The stemmed words of a "what/which <kind> <verb> ...?" phrase that an answer names an instance of
    rather than repeats: "algorithm" in "what RL algorithm drives the lookahead?" is answered by "PPO",
    so a sentence stating the lookahead need not say "algorithm" (`_ANSWERED_BY_INSTANCE`). Only a kind
    qualified by nothing but a field's acronym ("RL"): "which spiking neuron models", "what auxiliary
    model", "what task success rate" say which instance, or ask for something else."""
    from rag.index.lexical import tokenize

    out: set[str] = set()
    for m in _WHAT_KIND.finditer(question):
        words = m.group(1).split()
        if words[-1].casefold() in _ANSWERED_BY_INSTANCE and words[-1].casefold() not in _QUALIFIERS \
                and all(w.casefold() in _ANSWERED_BY_INSTANCE or TERM_ACRONYM.fullmatch(w) for w in words):
            out.update(x for w in words for x in tokenize(w, compounds=False))
    return out


def asked_detail(question: str, named: dict[str, list[str]] | None = None) -> str:
    """What an English question asks for, as a refusal can name it: "the kernel function" for "What
    kernel function does X use?", "the number of GPU hours" for "How many GPU hours ...?"; else "it"."""
    if asks_authors(question):
        return "its authors"
    phrase = _attribute_phrase(question, named)
    if phrase:
        first, _, rest = phrase.partition(" ")
        if rest and first.casefold() in _MEASURE_WORDS:
            return f"the {first} of the {rest}"  # "What size model ...?" -> "the size of the model"
        return "the " + phrase
    what = counted(question) if re.search(r"\bhow many\b", question, re.I) else ""
    words = what.casefold().split()
    if not words or words[0] in _NOT_COUNTED or any(w in _NOT_IN_ATTRIBUTE for w in words):
        return "it"  # "how many fewer ...", "how many peaks should the ...": no clean noun phrase to name
    return f"the number of {what}"


def states_attribute(question: str, named: dict[str, list[str]] | None = None) -> Callable[[str], bool] | None:
    """For "what/which <attribute> ...?" about a paper the question names, a check that a text mentions
    the attribute ("kernel" for "What kernel function ...?"); None when the question has no such phrase.

    An abstract that never mentions a paper's licence, its kernel or a year does not state which one
    it is, however close its other sentences are to the rest of the question.
    """
    from rag.index.lexical import tokenize

    terms = _attribute_terms_zh(question) if mostly_cjk(question) else attribute_terms(question, named)
    if not terms:
        return None

    def mentions(text: str) -> bool:
        # The attribute's own word, not one sharing its stem's first letters: "species" (speci) is
        # not mentioned by "specified" (specifi), as `matches` would allow for a topic word.
        words = set(tokenize(text, compounds=False))
        return any(x in words or x + "s" in words or (x.endswith("s") and x[:-1] in words) for x in terms)
    return mentions
