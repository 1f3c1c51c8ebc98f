"""How well a source supports an answer sentence: shared by the citation fallback and the eval.

Two measures, one per situation:
- word overlap (`support`): the share of the sentence's content words (lower-cased, markers and
  stopwords removed, each CJK character a word) that occur in the source. Deterministic and
  exact, but blind across languages: a Chinese sentence shares no words with an English abstract.
- embedding similarity (`Similarity`): the embedder's cosine between the sentence and the
  source's best-matching sentence. The bundled embedder (multilingual-e5-small) places a
  sentence and its translation close together, so it works across languages.

`crosses_languages(sentence, source)` says which one applies: a sentence written in CJK
characters about a source that is not is measured by similarity, and `held_across_languages`
applies the threshold and the margin over the other sources.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from rag.clean import clean
from rag.markers import strip_markers
from rag.text import mostly_cjk, safe, split_sentences

_TOKEN = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+(?:[.\-/^][a-z0-9]+)*")
STOPWORDS = frozenset(
    "a an the and or of to in on for by with as at from into is are was were be been being it its this "
    "that these those which who whom whose what when where how than then so such via both also their "
    "they them we our us can may might will would should could not no do does did has have had".split()
)

# Scores the texts against one sentence: returns one cosine per text.
Similarity = Callable[[str, Sequence[str]], Sequence[float]]
# Across languages the embedder's cosines are close together (multilingual-e5-small puts any
# Chinese sentence about ML at 0.80-0.83 from any English abstract): a sentence is held by a
# source only when it is also this much closer to it than to every other source.
CROSS_LANGUAGE_MARGIN = 0.02


# Small numbers are written either way ("five minutes", "5 minutes"): compared as digits.
NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}


def content_tokens(text: str) -> list[str]:
    """Lower-cased word tokens without markers and stopwords; each CJK character is a token.

    Number words up to twenty become digits; escape sequences and control characters (which a
    terminal would act on, not show) are no part of any word.
    """
    text = clean(safe(strip_markers(text))).casefold()
    return [NUMBER_WORDS.get(t, t) for t in _TOKEN.findall(text) if t not in STOPWORDS]


def support(claim: str, evidence: Sequence[str]) -> float:
    """Share of the claim's content tokens that occur in the evidence texts."""
    tokens = content_tokens(claim)
    if not tokens:
        return 1.0
    pool = set(t for e in evidence for t in content_tokens(e))
    return sum(1 for t in tokens if t in pool) / len(tokens)


def crosses_languages(sentence: str, evidence: str) -> bool:
    """True when word overlap cannot judge: a mostly-CJK sentence over mostly non-CJK evidence."""
    return mostly_cjk(strip_markers(sentence)) and not mostly_cjk(evidence)


def best_similarity(sentence: str, evidence: str, similarity: Similarity) -> float:
    """The embedder's cosine between the sentence and the evidence sentence closest to it."""
    parts = [evidence[s:e] for s, e in split_sentences(evidence)] or [evidence]
    scores = similarity(strip_markers(sentence), parts)
    return max((float(x) for x in scores), default=0.0)


def held_across_languages(sentence: str, evidence: Sequence[str], others: Sequence[str], similarity: Similarity,
                          min_similarity: float) -> bool:
    """True when the closest evidence reaches `min_similarity` and beats every other text by the margin."""
    best = max((best_similarity(sentence, e, similarity) for e in evidence), default=0.0)
    rival = max((best_similarity(sentence, o, similarity) for o in others), default=-1.0)
    return best >= min_similarity and best - rival >= CROSS_LANGUAGE_MARGIN


def embedder_similarity(embedder) -> Similarity:
    """Adapt an `rag.index.embedders.Embedder` into a `Similarity` (cosine of normalised vectors).

    Vectors are kept by text for the life of the returned function (one answer), so a source
    sentence scored against several answer sentences is embedded once.
    """
    import numpy as np

    cache: dict[str, Any] = {}

    def vectors(texts: list[str]) -> list[Any]:
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            for t, v in zip(todo, embedder.embed_passages(todo)):
                cache[t] = np.asarray(v, dtype=float)
        return [cache[t] for t in texts]

    def similarity(sentence: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        first, *rest = vectors([clean(sentence), *(clean(t) for t in texts)])
        return [float(v @ first) for v in rest]

    return similarity
