"""The words a question frames itself with: what it asks and how, not what it is about.

The offline answerer (`rag.answering.offline`) weighs a question by its content words
(`content_terms`); the words here say how to answer (which, compare, each, the number of ...), and a
sentence need not state them.
"""
from __future__ import annotations

import re

from rag.index.lexical import tokenize

# Words that frame a question but say nothing about its topic.
QUESTION_WORDS = set(tokenize(
    "which what who whom whose when where why how does do did is are was were can could "
    "paper papers abstract abstracts study studies work works propose proposes proposed introduce "
    "introduces present presents describe describes method methods approach approaches "
    # Like "method": what is asked is answered by the technique itself, not by the word.
    "technique techniques mechanism mechanisms strategy strategies procedure procedures scheme schemes trick tricks "
    "tell me about explain mention mentions report reports any there according corpus "
    # "in the collection", "in this set", "which works here": the corpus itself, as "corpus" is.
    "collection here "
    # "What is its core idea?": "core" asks for the main one, as "main" and "key" do.
    "main key core idea contribution contributions many much need needs kind type types called name named "
    # "What two things does X do?", "which papers run their stuff on X?": an abstract says what it does,
    # never "thing" or "stuff".
    "thing things stuff "
    # "What quantity does each make adaptive?": a light verb, and a word answered by the quantity's name.
    "make makes made making quantity quantities "
    # "What does each get around?", "which examples get priority": a light verb, as "make" is.
    "get gets got getting "
    # "What is each trying to improve?": what a paper tries to do is what it does; abstracts say
    # "we propose", "aims to", not "try".
    "try tries tried trying attempt attempts attempted attempting "
    # "I remember a paper that ...": the asker's memory of a paper, not its topic.
    "remember remembered "
    # "Could you tell me ...?", "What do we gain from X?", "which of them ...?": a pronoun addresses the
    # reader, speaks for the asker or points back; it is never what a sentence must state (BM25's short
    # stop list keeps these words, and "we" would match every "we propose").
    "you your yours i my we our us them its he she his her him "
    # "Do you know which ...?", "I wonder whether ...": the asker's request, as "tell me" is.
    "know wonder wondering "
    # "What does X say it avoids?", "What property does X claim?": what the abstract says is what it
    # states, in any words; abstracts seldom write "say" or "claim" themselves.
    "say says said claim claims claimed "
    # "What does each one adjust / change / modify?": asks what a paper does, as "make" or "do" would.
    "adjust adjusts adjusted change changes changed modify modifies modified alter alters altered tweak tweaks tweaked "
    "give list show find use uses used using achieve achieves achieved obtain obtains reach reaches "
    "has have had anyone someone somebody ever please "
    # How results were obtained: abstracts say it with any verb ("experiments on X show"), so the
    # question's verb says nothing about which sentence answers it. Nouns ("the experiments") stay:
    # abstracts name their experiments with them.
    "evaluate evaluated evaluates tested assess assessed measure measures measured "
    # ("eval", "evals": the abbreviation a terse question writes for them)
    "eval evals "
    # ("validated with what technique?": validating a method is testing it, "we tested X using ...")
    "validate validates validated "
    # ("which papers run their method on a G1?": running it is testing or deploying it, "deployed on the G1")
    "run runs ran running "
    # "What are the key results of X?": an abstract states its results without the word ("X outperforms ...").
    "result results finding findings outcome outcomes "
    # "How many X does Y contain?": abstracts state what a thing holds as "Y of 20M X", so the verb of
    # inclusion says nothing about which sentence answers.
    "contain contains contained include includes consist consists comprise comprises "
    # "What problem does X solve?", "How is X computed?", "What does X stand for?": the framing of a
    # question about what a paper does or how a quantity is defined; abstracts say it in other words
    # ("we address ...", "derived from ...", "Succeed or Learn Slowly (SoLS)").
    "problem problems solve solves solved address addresses addressed tackle tackles tackled consider considers considered "
    "computed calculated defined derived stand stands "
    # "What is the key insight of X?", "How does X handle Y?", "What does X combine?": framing too.
    "insight insights handle handles handled combine combines combined "
    # "What difficulty is each responding to?": framing like "problem" and "address"; an abstract
    # states its difficulty in its own words ("the existing methods typically assume ...").
    "difficulty difficulties obstacle obstacles respond responds responding "
    # "What exactly does X make adaptive?", "How was it actually tested?", "What concretely does each change?":
    # an intensifier asks for precision, not about a topic (abstracts write "specifically" to lead into a
    # detail, whatever the detail).
    "actually exactly really precisely specifically concretely "
    # "And separately, how much ...?", "... respectively?": how the question is laid out, not its topic.
    "separately respectively "
    # Function words Lucene's short stopword list keeps; rare in abstracts, they would weigh most.
    "its itself themselves either whether neither also than"
))

# In a question asking for a quantity, the word naming it ("the size of", "the number of") is the
# number the answer states, not a word the sentence must repeat.
QUANTITY_WORDS = set(tokenize("size sizes number numbers count counts amount amounts total "
                               # "the highest speedup", "the average error": which of the paper's numbers
                               "highest lowest largest smallest maximum minimum best worst average mean peak "
                               "larger smaller bigger higher lower max min "
                               # "how large", "how big", "roughly how many": the number's size and precision
                               "large big roughly approximately "
                               # "How long does X take?", "How many steps does it take?": the number's
                               # size word and its light verb (abstracts write "requiring five minutes")
                               "long take takes took"))

# Words of a question asking how papers it names compare ("Compare X and Y", "How do X and Y differ?",
# "X vs Y"): they say how to answer, not what a sentence must state (abstracts never compare each other).
COMPARISON_TERMS = frozenset(tokenize("compare comparison compared differ difference differences different "
                                      "contrast similar similarity similarities versus vs relate related "
                                      "relationship common between", compounds=False))
# "What does each one target?", "... both ...", "respectively": the same is asked of each paper named.
EACH_TERMS = frozenset(tokenize("each one both respectively", compounds=False))

# A Chinese word with any of these among its glosses frames the request instead of naming a topic:
# the question words above, comparison words, and what asks for an account of a paper (总结 "sum up",
# 概述 "overview", 介绍 "introduce; give a presentation", 主要 "main; principal", 贡献 "contribute",
# 一下 "give it a go", 请 "ask; invite"). Glosses are the dictionary's, so a word is framing when any
# of its senses is (结果 "bear fruit; outcome").
FRAMING_GLOSSES = QUESTION_WORDS | COMPARISON_TERMS | set(tokenize(
    "sum summarize summary conclude overview outline introduce presentation main principal contribute "
    "outcome give go do ask invite brief briefly", compounds=False))

# A request for an account of a paper ("Summarize X.", "Give me an overview of X"): its opening words
# frame the request. Only at the start: "summarization" or "overview" later in a question is its topic.
ACCOUNT_REQUEST = re.compile(r"^\W*(?:please\W+)?(?:(?:summari[sz]e|outline)\b|(?:(?:give|provide|write)\s+"
                             r"(?:me\s+|us\s+)?)?(?:an?\s+)?(?:(?:short|brief|quick)\s+)?(?:summary|overview|"
                             r"tl;?\s?dr)\s+of\b)", re.I)


# Phrases that frame wherever they stand:
# - "Which two tasks ...?", "What three parts ...?": the number counts the answers asked for; a sentence
#   listing them ("in ball bouncing and Baoding ball rotation") rarely writes it.
# - "Did its agents end up beating ...?": "end up" only says the outcome is asked for, as "did" does.
# - "What's STR short for?": asks for the name spelled out, as "stand for" does.
FRAMING_PHRASES = re.compile(r"\b(which|what)\s+(?:two|three|four|five|six)\b|\bend(?:s|ed|ing)?\s+up\b"
                             r"|\bshort\s+for\b", re.I)


def content_terms(question: str) -> list[str]:
    """The question's stemmed content words: what it is about, without its framing."""
    question = FRAMING_PHRASES.sub(lambda m: f" {m.group(1) or ''} ", ACCOUNT_REQUEST.sub(" ", question))
    return [t for t in dict.fromkeys(tokenize(question, compounds=False)) if t not in QUESTION_WORDS]
