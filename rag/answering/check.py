"""Check the citation markers of a model's answer against the sources it was given.

Markers follow `rag.markers`. A number that names no given source is removed from the visible
text and recorded; a claim (sentence) without a citation is flagged; the exact refusal
sentence means "refused", with no citations.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.answering.refusal import REFUSAL, is_refusal
from rag.markers import MARKER, parse_marker, split_claims


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


def _needs_citation(sentence: str) -> bool:
    if not any(ch.isalpha() for ch in sentence):
        return False  # a stray number or bullet, not a claim
    return not is_refusal(sentence)


def check_citations(text: str, k: int) -> CitationCheck:
    """Validate the markers of `text` against sources 1..k and flag uncited claims."""
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
    uncited = [c.text for c in split_claims(visible) if _needs_citation(c.text) and not c.cites]
    return CitationCheck(
        text=visible,
        cited=list(dict.fromkeys(cited)),
        refused=False,
        invalid=invalid,
        uncited=uncited,
        empty=not visible,
        k=k,
    )
