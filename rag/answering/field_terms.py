"""The field's technical terms a question uses that no retrieved abstract mentions.

A question built on a named technique of the field ("knowledge distillation") that the retrieved
abstracts never write is most likely about a topic the corpus lacks; the offline answerer weakens
the evidence of sentences that only sound like it (`rag.answering.offline`).
"""
from __future__ import annotations

import re
from functools import lru_cache

from rag.index.lexical import tokenize
from rag.index.translate import question_words, technical_terms


def _initials(words: list[str]) -> str:
    return "".join(w[0] for w in words).casefold()


def missing_field_terms(question: str, texts: list[str]) -> list[str]:
    """The field's terms the question uses ("knowledge distillation", "experience replay") that none of
    `texts` mentions, as words (stemmed) or as the term's acronym.

    A question built on a named technique of the field that no retrieved abstract mentions is most
    likely about a topic the corpus lacks: a sentence that only sounds like it is weak evidence. The
    terms are the multi-word English senses of the shipped ML glossary (`rag.index.translate`),
    written from knowledge of the field, not from any question set.
    """
    words = question_words(question)
    asked = [(term, seq) for term, seq in _field_terms() if _contains(words, seq)]
    if not asked:
        return []
    read = [(tokenize(x, compounds=False), x.casefold()) for x in texts]
    return sorted({term for term, seq in asked
                   if not any(_contains(toks, seq) or _acronym_pattern(term).search(low)
                              for toks, low in read)})


def is_glossary_term(name: str) -> bool:
    """Whether a name is one of the shipped ML glossary's English terms, singular or plural ("LLMs", "PPO")."""
    folded = name.casefold()
    return folded in _glossary() or folded.endswith("s") and folded[:-1] in _glossary()


@lru_cache(maxsize=1)
def _glossary() -> frozenset[str]:
    """The English terms of the shipped ML glossary, case-folded ("llm", "proximal policy optimization")."""
    return frozenset(term.casefold() for senses in technical_terms().values() for term in senses)


@lru_cache(maxsize=4096)
def _acronym_pattern(term: str) -> re.Pattern[str]:
    """The term's acronym as a word, plural allowed ("kd", "kds" for knowledge distillation)."""
    return re.compile(rf"\b{re.escape(_initials(term.split()))}s?\b")


def _contains(words: list[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(words[i:i + n]) == seq for i in range(len(words) - n + 1))


# Glossary terms that name no technique or topic: a measurement, a bound, a data split, a resource, or a
# quality any paper may claim ("state-of-the-art", "trade-off"). A question using one says how it asks,
# not what about, and an abstract on its topic need not write it ("match the computing power available").
_NOT_TOPICS = frozenset(tuple(tokenize(term, compounds=False)) for term in (
    "ablation study", "average precision", "batch size", "benchmark evaluation", "closed-source",
    "computing power", "convergence rate", "cutting-edge", "downstream task", "end-to-end", "feature vector",
    "floating-point operations", "GPU memory", "intersection over union", "large model", "learning rate",
    "loss function", "lower bound", "mean squared error", "number of parameters", "open-source",
    "parameter count", "plug-and-play", "sample complexity", "sample efficiency", "state-of-the-art",
    "step size", "success rate", "test set", "theoretical guarantee", "tight bound", "trade-off",
    "training set", "upper bound", "validation set", "win rate"))


# A letter or digit standing alone in a term ("deep Q-network"): the tokenizer drops it, and the words left
# ("deep network") are another phrase, which a question may use without meaning the term.
_LONE_CHARACTER = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9](?![A-Za-z0-9])")


@lru_cache(maxsize=1)
def _field_terms() -> list[tuple[str, tuple[str, ...]]]:
    """(term, its stemmed words) for every multi-word English term of the ML glossary that names a
    technique or topic of the field (not one of `_NOT_TOPICS`)."""
    seen: dict[tuple[str, ...], str] = {}
    for senses in technical_terms().values():
        for term in senses:
            seq = tuple(tokenize(term, compounds=False))
            if len(seq) >= 2 and seq not in _NOT_TOPICS and not _LONE_CHARACTER.search(term):
                seen.setdefault(seq, term)
    return [(term, seq) for seq, term in sorted(seen.items())]
