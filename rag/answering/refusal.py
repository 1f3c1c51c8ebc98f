"""The refusal: its one sentence and how to recognise it.

Prompts, the citation check, the offline answerer and the tests share this sentence. An
offline refusal may add one sentence saying why ("No indexed abstract mentions X."); it still
starts with this one.
"""
from __future__ import annotations

from rag.markers import strip_markers

REFUSAL = "I can't answer that from the indexed abstracts."

_QUOTES = "\"'\u201c\u201d\u2018\u2019`*"


def _normal(text: str) -> str:
    text = strip_markers(text).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split()).strip(_QUOTES + " ").rstrip(".").strip(_QUOTES + " ").lower()


def is_refusal(text: str) -> bool:
    """True when the text is the refusal sentence (ignoring quotes, case, markers, final period)."""
    return _normal(text) == _normal(REFUSAL)
