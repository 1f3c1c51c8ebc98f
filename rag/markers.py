"""Citation markers: the one grammar the answerer, the renderer and the eval share.

A marker is a bracketed list of source numbers: `[1]`, `[1, 2]`, `[1;3]`, `[1-3]` (also en/em
dashes); adjacent markers (`[1][3]`) are separate. A *claim* is one answer sentence together
with the markers that end it: a marker opening a sentence belongs to the sentence before.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.text import split_sentences

# One marker, with the whitespace before it (group 1) and its inside (group 2).
MARKER = re.compile(r"(\s*)\[\s*(\d{1,6}(?:\s*[,;\-\u2013\u2014]\s*\d{1,6})*)\s*\]")
# The same marker without the whitespace: for highlighting in rendered text.
MARKER_TOKEN = re.compile(r"\[\s*\d{1,6}(?:\s*[,;\-\u2013\u2014]\s*\d{1,6})*\s*\]")
_PART = re.compile(r"(\d+)(?:\s*[\-\u2013\u2014]\s*(\d+))?")
_LEADING = re.compile(r"^(?:\s*" + MARKER_TOKEN.pattern + r")+[.,;:!?。！？]*")
MAX_RANGE = 50  # a range wider than this ("[1-999999]") is read as its first 50 numbers


def _parts(body: str) -> list[tuple[int, int, str]]:
    out = []
    for m in _PART.finditer(body):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        out.append((min(lo, hi), max(lo, hi), m.group(0)))
    return out


def marker_numbers(body: str) -> list[int]:
    """Expand the inside of one marker ("1, 3-4") into source numbers."""
    return [n for lo, hi, _ in _parts(body) for n in range(lo, min(hi, lo + MAX_RANGE) + 1)]


def parse_marker(body: str, k: int) -> tuple[list[int], list[str]]:
    """Split the inside of one marker into valid source numbers (1..k) and invalid parts."""
    valid: list[int] = []
    invalid: list[str] = []
    for lo, hi, text in _parts(body):
        valid.extend(range(max(lo, 1), min(hi, k) + 1))
        if lo < 1 or hi > k:
            invalid.append(text)
    return list(dict.fromkeys(valid)), invalid


def find_markers(text: str) -> list[int]:
    """Every source number named by a marker in text, in order, duplicates kept."""
    return [n for m in MARKER.finditer(text) for n in marker_numbers(m.group(2))]


def strip_markers(text: str) -> str:
    """Text without its markers."""
    return MARKER.sub("", text)


@dataclass
class Claim:
    """One answer sentence (markers included) and the source numbers it cites."""

    text: str
    cites: list[int] = field(default_factory=list)

    @property
    def body(self) -> str:
        """The sentence without its markers."""
        return " ".join(strip_markers(self.text).split())


def split_claims(text: str) -> list[Claim]:
    """Split an answer into claims: sentences, each owning the markers that end it.

    Lines are split separately; a run of markers opening a sentence ("... text. [1] Next")
    is moved back to the sentence before. Empty pieces are dropped.
    """
    out: list[str] = []
    for line in text.splitlines():
        for s, e in split_sentences(line):
            sentence = line[s:e]
            lead = _LEADING.match(sentence)
            if lead and out:
                out[-1] += " " + lead.group(0).strip()
                sentence = sentence[lead.end():]
            if sentence.strip():
                out.append(sentence.strip())
    return [Claim(s, find_markers(s)) for s in out]
