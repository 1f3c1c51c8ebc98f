"""The field's technical terms a question uses that no retrieved abstract mentions.

A question built on a named technique of the field ("knowledge distillation") that the retrieved
abstracts never write is most likely about a topic the corpus lacks; the offline answerer weakens
the evidence of sentences that only sound like it (`rag.answering.offline`).
"""
from __future__ import annotations

import re
from functools import lru_cache

from rag.index.lexical import tokenize
from rag.index.translate import is_chinese, technical_terms, word_senses


def _initials(words: list[str]) -> str:
    return "".join(w[0] for w in words).casefold()


def missing_field_terms(question: str, texts: list[str]) -> list[str]:
    """The field's terms the question uses ("knowledge distillation", "experience replay") that none of
    `texts` mentions, as words (stemmed) or as the term's acronym.

    A question built on a named technique of the field that no retrieved abstract mentions is most
    likely about a topic the corpus lacks: a sentence that only sounds like it is weak evidence. The
    terms are the multi-word English senses of the shipped ML glossary (`rag.index.translate`),
    written from knowledge of the field, not from any question set. A Chinese question's words are
    read through the glossary one word at a time (`_missing_chinese_terms`).
    """
    words = tokenize(question, compounds=False)  # (a Chinese question's Latin-script words)
    read = [(tokenize(x, compounds=False), x.casefold()) for x in texts]
    missing = {term for term, seq in _field_terms() if _contains(words, seq)
               and not any(_contains(toks, seq) or _acronym_pattern(term).search(low) for toks, low in read)}
    if is_chinese(question):
        missing |= _missing_chinese_terms(question, read)
    return sorted(missing)


def _missing_chinese_terms(question: str, read: list[tuple[list[str], str]]) -> set[str]:
    """The Chinese question's words that the glossary renders as a field term none of the texts writes.

    A word is checked whole, through all its senses: it is written when a text writes any of them, as all of
    the sense's words anywhere in one abstract (a translation gives one wording of many: 灵巧操作 is "dexterous
    manipulation", the paper writes "dexterity" and "manipulation") or as its acronym. A word with a sense
    naming no topic (大模型 "large model") or a one-word sense a text writes ("diffusion") is not missing.
    """
    terms = _terms_by_words()
    vocab = [set(toks) for toks, _ in read]
    missing = set()
    for senses in word_senses(question):
        seqs = [tuple(tokenize(x, compounds=False)) for x in senses]
        field = [(terms[seq], seq) for seq in seqs if seq in terms]
        if not field or any(seq in _NOT_TOPICS for seq in seqs):
            continue
        written = (any(set(seq) <= v for _, seq in field for v in vocab)
                   or any(_acronym_pattern(term).search(low) for term, _ in field for _, low in read)
                   or any(len(seq) == 1 and seq[0] in v for seq in seqs for v in vocab))
        if not written:
            missing.add(field[0][0])
    return missing


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


@lru_cache(maxsize=1)
def _terms_by_words() -> dict[tuple[str, ...], str]:
    """`_field_terms` as {stemmed words: term}, to look a gloss up by its words."""
    return {seq: term for term, seq in _field_terms()}
