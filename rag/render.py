"""Render answers, hits and reports for the terminal; untrusted text is neutralised first.

Text from abstracts and models is shown readable (`rag.readable`: LaTeX and Markdown markup
rendered as plain text) and safe (`rag.text.safe`: no terminal escapes); `--json` keeps the
original. Scores shown are the dense cosine similarity of question and chunk, which a person
can compare across questions; the fused rank score stays in JSON.
"""
from __future__ import annotations

import re

from rag.corpus import first_author
from rag.markers import MARKER_TOKEN
from rag.readable import readable, readable_latex
from rag.text import mask_url, safe
from rag.types import Answer, Citation, Hit, IngestReport

__all__ = ["safe"]  # re-exported: the CLI and chat render through this module


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 chunk`, `2 chunks`, `0 documents`."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def first_line(text: str, width: int = 100) -> str:
    line = " ".join(safe(readable(text)).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def byline(authors: str | None, year: str | None, venue: str | None) -> str:
    """`A. Smith et al., NeurIPS 2025`: first author, venue and year, whichever are known."""
    parts = []
    first = first_author(authors)
    if first:
        more = first_author(authors) != " ".join((authors or "").split())
        parts.append(first + (" et al." if more else ""))
    where = " ".join((venue or "").split())
    if year and not re.search(r"\b(?:19|20)\d\d\b", where):  # "NeurIPS 2025" already says when
        where = f"{where} {year}".strip()
    if where:
        parts.append(where)
    return safe(", ".join(parts))


def similarity(dense_score: float | None) -> str:
    """The question-chunk cosine as people read it; a hit only BM25 found says so."""
    return f"similarity {dense_score:.2f}" if dense_score is not None else "keyword match"


def source_name(item: Hit | Citation) -> str:
    """Label (or title) with its byline: `Safe RLHF-V (Ji et al., NeurIPS 2025)`."""
    name = safe(item.label or item.title)
    by = byline(item.authors, item.year, item.venue)
    return f"{name} ({by})" if by else name


def _dense(ans: Answer, c: Citation) -> float | None:
    if c.dense_score is not None:
        return c.dense_score
    hit = ans.sources[c.n - 1] if 0 < c.n <= len(ans.sources) else None
    return hit.dense_score if hit is not None else None


def format_answer(ans: Answer) -> str:
    """Plain-text answer with its numbered sources, as `rag ask` prints it."""
    lines = [safe(readable(ans.text)), ""]
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
            lines.append(f"  [{c.n}] {source_name(c)} · {similarity(_dense(ans, c))} — {first_line(c.text, 90)}")
    others = [(i + 1, h) for i, h in enumerate(ans.sources) if i + 1 not in cited]
    if others and not ans.refused:
        lines.append("Also retrieved: " + ", ".join(f"[{n}] {safe(h.label or h.title)}" for n, h in others))
    return "\n".join(lines).rstrip() + "\n"


def format_hits(hits: list[Hit]) -> str:
    out = []
    for i, h in enumerate(hits, start=1):
        lex = f" · bm25 {h.lexical_score:.2f}" if h.lexical_score is not None else ""
        out.append(f"[{i}] {source_name(h)} · {similarity(h.dense_score)}{lex} · id {h.doc_id}")
        out.append(f"    {first_line(h.text, 110)}")
    return "\n".join(out) + "\n"


def format_report(r: IngestReport) -> str:
    lines = [
        f"Indexed {plural(r.documents, 'document')}: {r.added} added, {r.updated} updated, {r.removed} removed, "
        f"{r.unchanged} unchanged; {plural(r.chunks_embedded, 'chunk')} embedded in {r.seconds:.1f}s."
    ]
    if r.skipped:
        lines.append(f"Skipped {len(r.skipped)}:")
        lines.extend(f"  {safe(str(p))}" for p in r.skipped)
    return "\n".join(lines) + "\n"


# -- rich renderables for `rag chat` -----------------------------------------------------------
# Untrusted text reaches rich only as `Text` (never parsed as console markup) or as Markdown
# source after `safe()`; hyperlinks are off so no escape sequence is emitted for links.

CITATION_STYLE = "bold cyan"


def cited_markdown(text: str):
    """Return a rich Markdown renderable of `text` with its [n] citation markers highlighted."""
    from rich.markdown import Markdown, Paragraph

    class _CitedParagraph(Paragraph):
        def __rich_console__(self, console, options):
            self.text.highlight_regex(MARKER_TOKEN, CITATION_STYLE)
            yield from super().__rich_console__(console, options)

    class _CitedMarkdown(Markdown):
        elements = {**Markdown.elements, "paragraph_open": _CitedParagraph}

    return _CitedMarkdown(safe(readable_latex(text)), hyperlinks=False)


def sources_text(ans: Answer, *, width: int = 90):
    """Return the numbered sources of an answer (label, byline, similarity, first line) as rich Text."""
    from rich.text import Text

    out = Text()
    cited = {c.n for c in ans.citations}
    for c in sorted(ans.citations, key=lambda c: c.n):
        out.append(f"[{c.n}] ", style=CITATION_STYLE)
        out.append(safe(c.label or c.title), style="bold")
        by = byline(c.authors, c.year, c.venue)
        out.append(f"  {by + ' · ' if by else ''}{similarity(_dense(ans, c))}", style="dim")
        out.append("\n    " + first_line(c.text, width) + "\n")
    others = [(i + 1, h) for i, h in enumerate(ans.sources) if i + 1 not in cited]
    if others:
        names = ", ".join(f"[{n}] {safe(h.label or h.title)}" for n, h in others)
        out.append(("Also retrieved: " if cited else "Retrieved: ") + names + "\n", style="dim")
    return out


def abstract_text(n: int, label: str, body: str, *, score: float | None = None,
                  files: list[str] | None = None, url: str | None = None, doc_id: str = "",
                  by: str = ""):
    """Return one source in full (header line, files, URL, readable text) as rich Text.

    `score` is the dense similarity; `by` the byline (`rag.render.byline`).
    """
    from pathlib import Path

    from rich.text import Text

    out = Text()
    out.append(f"[{n}] ", style=CITATION_STYLE)
    out.append(safe(label), style="bold")
    meta = [by] if by else []
    if doc_id:
        meta.append(f"id {doc_id}")
    if score is not None:
        meta.append(similarity(score))
    if files:
        meta.append(", ".join(safe(Path(f).name) for f in files))
    if meta:
        out.append("  " + " · ".join(meta), style="dim")
    out.append("\n")
    if url:
        out.append(safe(url) + "\n", style="underline")
    out.append(safe(readable(body)).strip() + "\n")
    return out


def masked_settings(settings, origin: dict[str, str]) -> list[dict[str, str]]:
    """Return one row per setting: name, value (secrets masked), origin and environment variable."""
    from rag.config import env_of, setting_names

    rows = []
    for name in setting_names():
        value = settings
        for part in name.split("."):
            value = getattr(value, part)
        if name == "openai_api_key":
            shown = "set (hidden)" if value else "unset"
        elif value is None:
            shown = "unset"
        else:
            shown = mask_url(str(value)) if name.endswith("_url") else str(value)
        rows.append({"name": name, "value": shown, "origin": origin.get(name, "default"), "env": env_of(name)})
    return rows


def format_settings(rows: list[dict[str, str]]) -> str:
    """Align the settings rows as `name  value  (origin)` lines."""
    width = max(len(r["name"]) for r in rows)
    vwidth = min(40, max(len(r["value"]) for r in rows))
    lines = []
    for r in rows:
        how = r["origin"] if r["origin"].startswith("env ") else f"{r['origin']}; env {r['env']}"
        lines.append(f"{r['name']:<{width}}  {safe(r['value']):<{vwidth}}  ({safe(how)})")
    return "\n".join(lines) + "\n"
