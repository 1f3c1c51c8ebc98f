"""A Chinese question's words through their English glosses: how an English abstract states them.

The offline answerer weighs a Chinese question against English sentences by each content word's
dictionary glosses (`gloss_groups`), and keeps the papers stating a term the question quotes
(`stating_quoted_term`).
"""
from __future__ import annotations

import re

from rag.answering.candidates import Candidate, matches
from rag.answering.framing import QUANTITY_WORDS, QUESTION_WORDS
from rag.answering.quantity import asks_quantity
from rag.index.lexical import CJK, tokenize
from rag.index.translate import word_senses

# A term a Chinese question quotes ("引入一种……的“反向奖励”"): the asker's rendering of the paper's own coined term.
QUOTED_ZH = re.compile(r"[“「『\"]([^”」』\"]{2,12})[”」』\"]")


def stating_quoted_term(pool: list[Candidate], question: str) -> list[Candidate]:
    """The candidates of the papers stating every word of a term the Chinese question quotes, when a paper
    does; else the pool as it was.

    A quoted term ("反向奖励", reverse reward) is what the asker knows the paper by, the way a name would
    be: among many papers close in meaning ("reward learning from videos"), one whose abstract states
    the term is the one meant, and the others are not quoted beside or instead of it."""
    terms = [groups for m in QUOTED_ZH.finditer(question)
             if CJK.search(m.group(1)) and len(groups := gloss_groups(m.group(1), set())) >= 2]
    if not terms:
        return pool
    stating = {c.hit_index for c in pool if any(states_in_order(c.text, groups) for groups in terms)}
    return [c for c in pool if c.hit_index in stating] or pool


def states_in_order(text: str, groups: list[set[str]]) -> bool:
    """Whether the text writes a word of each group, one right after the other (a term's words, in order)."""
    words = tokenize(text, compounds=False)
    return any(all(any(matches(x, {words[i + k]}) for x in g) for k, g in enumerate(groups))
               for i in range(len(words) - len(groups) + 1))


def gloss_groups(question: str, skip: set[str]) -> list[set[str]]:
    """The stemmed English glosses of each Chinese content word of the question, one set per word.

    A word glossed first as framing is left out, as an English question's framing words are (测试 "test" in
    "在哪些环境中进行了测试"), and so, in a question asking for a quantity, is a word glossed as the
    quantity's name (数量 "amount; quantity"): the sentence states the number, not the word.
    """
    framing = QUESTION_WORDS | (QUANTITY_WORDS if asks_quantity(question) else set())
    groups = []
    for senses in word_senses(question):
        first = set(tokenize(senses[0], compounds=False))
        if first and first <= framing:
            continue  # framing in its first sense (联合 "joint; combined" is not "combined" the verb)
        group = set(tokenize(" ".join(senses), compounds=False)) - skip
        if group:
            groups.append(group)
    return groups
