"""Render answers, hits and reports for the terminal; untrusted text is neutralised first."""
from __future__ import annotations

import re

from rag.types import Answer, Hit, IngestReport

# Escape sequences and control characters from documents or models must not reach the terminal.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(text: str | None) -> str:
    """Strip terminal escape sequences and control characters (newlines and tabs stay)."""
    if not text:
        return ""
    return _CONTROL.sub("", _ANSI.sub("", text))


def first_line(text: str, width: int = 100) -> str:
    line = " ".join(safe(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def format_answer(ans: Answer) -> str:
    """Plain-text answer with its numbered sources, as `rag ask` prints it."""
    lines = [safe(ans.text), ""]
    if ans.mode == "offline":
        note = "offline mode: sentences quoted from the abstracts"
        lines.append(f"({note}; no LLM configured)" if not ans.refused else "(offline mode)")
    for w in ans.warnings:
        lines.append(f"warning: {safe(w)}")
    cited = {c.n for c in ans.citations}
    if ans.citations:
        lines.append("")
        lines.append("Sources:")
        for c in ans.citations:
            lines.append(f"  [{c.n}] {safe(c.label or c.title)} (score {c.score:.3f}) — {first_line(c.text, 90)}")
    others = [(i + 1, h) for i, h in enumerate(ans.sources) if i + 1 not in cited]
    if others and not ans.refused:
        lines.append("Also retrieved: " + ", ".join(f"[{n}] {safe(h.label or h.title)}" for n, h in others))
    return "\n".join(lines).rstrip() + "\n"


def format_hits(hits: list[Hit]) -> str:
    out = []
    for i, h in enumerate(hits, start=1):
        dense = f"{h.dense_score:.3f}" if h.dense_score is not None else "-"
        lex = f"{h.lexical_score:.2f}" if h.lexical_score is not None else "-"
        out.append(f"[{i}] {safe(h.label or h.title)}  score {h.score:.4f} (dense {dense}, bm25 {lex})  id {h.doc_id}")
        out.append(f"    {first_line(h.text, 110)}")
    return "\n".join(out) + "\n"


def format_report(r: IngestReport) -> str:
    lines = [
        f"Indexed {r.documents} documents: {r.added} added, {r.updated} updated, {r.removed} removed, "
        f"{r.unchanged} unchanged; {r.chunks_embedded} chunks embedded in {r.seconds:.1f}s."
    ]
    if r.skipped:
        lines.append(f"Skipped {len(r.skipped)}:")
        lines.extend(f"  {safe(str(p))}" for p in r.skipped)
    return "\n".join(lines) + "\n"
