"""Split abstract text into sentences without breaking at "e.g.", "et al." or "1.70"."""
from __future__ import annotations

import re

_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|et al|vs|cf|Fig|Eq|Sec|resp|approx|etc|No|Dr|Prof)\.|\b[A-Z]\.)$")
_BOUNDARY = re.compile(r"(?<=[.!?。！？])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9\u3400-\u9fff$\\*])|(?<=[。！？])")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Return (start, end) offsets of the sentences of text."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        head = text[start : m.start()]
        if _ABBREV.search(head.rstrip("\"')]")):
            continue
        if head.strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return [(s + (len(text[s:e]) - len(text[s:e].lstrip())), e) for s, e in spans]
