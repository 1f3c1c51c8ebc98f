"""How a sentence states the question's words: phrases, closed compounds and words close in meaning.

The offline answerer (`rag.answering.offline`) scores a sentence by the question's focus words it
states; these helpers decide what "states" means beyond the same stem.
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from rag.answering.candidates import Candidate, matches
from rag.config import OfflineSettings
from rag.index.lexical import surface_word_list, surface_words, tokenize


def question_phrases(question: str, skip: set[str]) -> list[tuple[str, str]]:
    """Pairs of content words standing side by side in the question ("learning rate"), none in `skip`.

    A noun followed by a past participle is a subject and its verb, not a phrase: "How is the
    threshold adapted?" is answered by "adapts the threshold"."""
    raw = re.findall(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*", question)
    stems = [tokenize(w, compounds=False) for w in raw]
    pairs = []
    for (a, b), second in zip(zip(stems, stems[1:]), raw[1:]):
        if second.lower().endswith("ed"):
            continue
        if len(a) == 1 and len(b) == 1 and a[0] != b[0] and not ({a[0], b[0]} & skip):
            pairs.append((a[0], b[0]))
    return list(dict.fromkeys(pairs))


def join_compounds(pool: list[Candidate], question: str) -> None:
    """Let two adjacent words of the question match a sentence that writes them as one word.

    "kung fu" / "Kungfu", "data set" / "dataset", "multi task" / "multitask": the same term spelled
    open or closed. A sentence holding the closed form counts as stating both words.
    """
    raw = re.findall(r"[A-Za-z0-9]+", question)
    for a, b in zip(raw, raw[1:]):
        parts = tokenize(f"{a} {b}", compounds=False)
        joined = tokenize(a + b, compounds=False)
        if len(parts) != 2 or len(joined) != 1:
            continue
        for c in pool:
            if joined[0] in c.terms:
                c.terms.update(parts)


def has_phrase(pair: tuple[str, str], seq: list[str]) -> bool:
    """True when the pair stands side by side, also with the second word as an acronym written after its
    spelled-out words ("compressed SVD" in "compressed singular value decomposition (SVD)")."""
    a, b = pair
    n = len(b)
    for i, x in enumerate(seq):
        if x != a or i + 1 >= len(seq):
            continue
        if seq[i + 1] == b:
            return True
        if 2 <= n <= 5 and i + 1 + n < len(seq) and seq[i + 1 + n] == b \
                and "".join(w[0] for w in seq[i + 1:i + 1 + n]) == b:
            return True
    return False


def near_words(pool: list[Candidate], focus: list[str], question: str,
                word_vectors: Callable[[list[str]], "np.ndarray"], t: OfflineSettings) -> dict[tuple[int, str], float]:
    """How nearly each sentence states each focus word it lacks, 0-1: (sentence index, term) -> share.

    A question reworded by its asker uses its own words for the abstract's ("clips" for "videos",
    "create" for "generated"): exact stems miss them, and e5's sentence cosine barely moves. Each
    lacking word counts as partly stated by the sentence's closest word, by the second model's
    (MiniLM) cosine of the two words alone, mapped from `word_match_low` .. `word_match_high` onto 0-1.
    `word_vectors(words)` -> their L2-normalised vectors (the index caches them by content).
    """
    surface: dict[str, str] = {}
    for w in surface_word_list(question):  # the first written of two forms of a stem ("training", "train")
        stems = tokenize(w, compounds=False)
        if len(stems) == 1 and stems[0] in focus:
            surface.setdefault(stems[0], w)
    lacking = {n: [x for x in surface if not matches(x, c.terms)] for n, c in enumerate(pool)}
    words = {n: surface_words(c.text) for n, c in enumerate(pool) if lacking[n]}
    words = {n: ws for n, ws in words.items() if ws}
    if not words:
        return {}
    vocab = sorted({surface[x] for x in surface}.union(*words.values()))
    vectors = np.asarray(word_vectors(vocab), dtype=np.float32)
    at = {w: i for i, w in enumerate(vocab)}
    span = max(t.word_match_high - t.word_match_low, 1e-6)
    out: dict[tuple[int, str], float] = {}
    for n, ws in words.items():
        closest = (vectors[[at[w] for w in ws]] @ vectors[[at[surface[x]] for x in lacking[n]]].T).max(axis=0)
        for x, cos in zip(lacking[n], closest):
            out[(n, x)] = min(1.0, max(0.0, (float(cos) - t.word_match_low) / span))
    return out
