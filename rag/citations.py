"""Check the citation markers of a model's answer against the sources it was given.

Markers come in several shapes: `[1]`, `[1, 2]`, `[1][3]`, `[1-2]`. A number that names no
given source is removed from the visible text and recorded; a sentence without a citation is
flagged; the exact refusal sentence means "refused", with no citations.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.offline import REFUSAL
from rag.sentences import split_sentences

# One bracketed marker: numbers separated by commas, semicolons or range dashes.
MARKER = re.compile(r"(\s*)\[\s*(\d{1,6}(?:\s*[,;\-\u2013\u2014]\s*\d{1,6})*)\s*\]")
_PART = re.compile(r"(\d+)(?:\s*[\-\u2013\u2014]\s*(\d+))?")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[\s*\d[\d\s,;\-\u2013\u2014]*\])+")
_QUOTES = "\"'\u201c\u201d\u2018\u2019`*"


@dataclass
class CitationCheck:
    """The validated answer and everything wrong with the original."""

    text: str  # user-visible text: invalid markers removed
    cited: list[int]  # 1-based source numbers, in order of first citation
    refused: bool
    # (marker as written, the numbers or ranges in it that name no given source)
    invalid: list[tuple[str, list[str]]] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)  # sentences with no valid citation
    empty: bool = False
    k: int = 0

    @property
    def ok(self) -> bool:
        return not (self.invalid or self.uncited or self.empty)

    def problems(self) -> list[str]:
        """Describe each problem in one line, precisely enough for the model to fix it."""
        out = []
        if self.empty:
            out.append("the answer was empty")
        given = f"only sources 1 to {self.k} exist" if self.k else "no sources were given"
        for marker, bad in self.invalid:
            out.append(f"citation {marker} names source {', '.join(bad)}, which was not given ({given})")
        for sentence in self.uncited:
            out.append(f'this sentence has no [n] citation: "{_clip(sentence)}"')
        return out


def _clip(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def parse_marker(body: str, k: int) -> tuple[list[int], list[str]]:
    """Split the inside of one marker into valid source numbers and invalid parts."""
    valid: list[int] = []
    invalid: list[str] = []
    for m in _PART.finditer(body):
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        lo, hi = min(lo, hi), max(lo, hi)
        valid.extend(range(max(lo, 1), min(hi, k) + 1))
        if lo < 1 or hi > k:
            invalid.append(m.group(0))
    return list(dict.fromkeys(valid)), invalid


def _normal(text: str) -> str:
    text = MARKER.sub("", text).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split()).strip(_QUOTES + " ").rstrip(".").strip(_QUOTES + " ").lower()


def is_refusal(text: str) -> bool:
    """True when the text is the refusal sentence (ignoring quotes, case, markers, final period)."""
    return _normal(text) == _normal(REFUSAL)


def _sentences(text: str) -> list[str]:
    """Split into sentences, moving markers that open a sentence back to the one before."""
    out: list[str] = []
    for line in text.splitlines():
        for s, e in split_sentences(line):
            sentence = line[s:e]
            lead = _LEADING_MARKERS.match(sentence)
            if lead and out:
                out[-1] += " " + lead.group(0).strip()
                sentence = sentence[lead.end():]
            if sentence.strip():
                out.append(sentence.strip())
    return out


def _needs_citation(sentence: str) -> bool:
    if not any(ch.isalpha() for ch in sentence):
        return False  # a stray number or bullet, not a claim
    return not is_refusal(sentence)


def check_citations(text: str, k: int) -> CitationCheck:
    """Validate the markers of `text` against sources 1..k and flag uncited sentences."""
    invalid: list[tuple[str, list[str]]] = []

    def rewrite(m: re.Match) -> str:
        valid, bad = parse_marker(m.group(2), k)
        if not bad:
            return m.group(0)
        invalid.append((f"[{m.group(2)}]", bad))
        return f"{m.group(1)}[{', '.join(map(str, valid))}]" if valid else ""

    if is_refusal(text):
        MARKER.sub(rewrite, text)  # record invalid markers, but the answer is the refusal
        return CitationCheck(text=REFUSAL, cited=[], refused=True, invalid=invalid, k=k)

    visible = MARKER.sub(rewrite, text).strip()
    cited: list[int] = []
    for m in MARKER.finditer(visible):
        cited.extend(parse_marker(m.group(2), k)[0])
    uncited = [s for s in _sentences(visible) if _needs_citation(s) and not MARKER.search(s)]
    return CitationCheck(
        text=visible,
        cited=list(dict.fromkeys(cited)),
        refused=False,
        invalid=invalid,
        uncited=uncited,
        empty=not visible,
        k=k,
    )
