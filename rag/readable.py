"""Turn LaTeX and Markdown markup into text a person reads on a terminal.

`$O(\\epsilon^{-3})$` -> `O(ε^-3)`, `\\textbf{Bra}nch` -> `Branch`, `74.5\\%` -> `74.5%`,
`**bold**` -> `bold`. LaTeX is converted by pylatexenc's `LatexNodes2Text` (a maintained
converter), guarded so that it never raises and never touches text it should not:

- citation markers (`[1]`, `[2, 3]`) are cut out first and put back unchanged;
- only the pieces that contain LaTeX (a `\\command` or `$...$` math) are converted, so a bare
  `%`, `~`, `&` or `#` in ordinary text stays what it is;
- inside those pieces the characters LaTeX would swallow (`%` starts a comment, `~` is a
  space, `&` a column separator, an unpaired `$`) are escaped first;
- any failure (braces nested too deep, a converter bug) leaves that piece as it was.

This is for display only: stored text, `--json` output and citations keep the original.
"""
from __future__ import annotations

import logging
import re
from functools import lru_cache

from rag.clean import strip_markdown
from rag.markers import MARKER_TOKEN

_LATEX = re.compile(r"\\[A-Za-z]+|\\[%&$#_{}]|(?<!\\)\$")
_UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")
_BARE = re.compile(r"(?<!\\)([%&#])")
_TILDE = "\ue000"  # a private-use placeholder: `~` survives the converter as itself
MAX_CHARS = 20_000  # longer pieces are not converted (pathological input, not an abstract)


@lru_cache(maxsize=1)
def _converter():
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    logging.getLogger("pylatexenc").addHandler(logging.NullHandler())
    logging.getLogger("pylatexenc").propagate = False  # its parse warnings are not for users
    db = get_default_latex_context_db()
    # Readable over typographic: ε (as people write it) rather than ϵ, plain letters rather
    # than mathematical alphanumerics that many terminal fonts lack; \texttt kept in math.
    plain = ("texttt", "mathtt", "mathrm", "mathbf", "mathit", "mathsf", "mathcal", "boldsymbol", "bm",
             "operatorname", "text", "textrm", "textsf", "textnormal")
    db.add_context_category(
        "rag-readable",
        prepend=True,
        macros=[MacroTextSpec("epsilon", "ε"), *(MacroTextSpec(name, "%(1)s") for name in plain)],
    )
    return LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=True)


def _latex_to_text(piece: str) -> str:
    """Convert one piece that contains LaTeX; on any failure return it unchanged."""
    if len(piece) > MAX_CHARS:
        return piece
    source = _BARE.sub(r"\\\1", piece).replace("~", _TILDE)
    if len(_UNESCAPED_DOLLAR.findall(source)) % 2:  # "$5 and $x$": no math can be trusted
        source = _UNESCAPED_DOLLAR.sub(r"\\$", source)
    try:
        out = _converter().latex_to_text(source)
    except Exception:  # noqa: BLE001 - a display helper must never break an answer
        return piece
    out = out.replace(_TILDE, "~").replace("\u00a0", " ")
    lead = piece[: len(piece) - len(piece.lstrip())]
    trail = piece[len(piece.rstrip()):]
    return lead + " ".join(out.split()) + trail


def _convert(text: str | None, *, markdown: bool) -> str:
    if not text:
        return ""
    lines = []
    for line in text.split("\n"):
        parts, last = [], 0
        for m in MARKER_TOKEN.finditer(line):
            parts += [_piece(line[last:m.start()], markdown), m.group(0)]
            last = m.end()
        parts.append(_piece(line[last:], markdown))
        lines.append("".join(parts))
    out = "\n".join(lines)
    # Removing markup must not make a citation marker ("[1\\textbf{]" -> "[1]", or "[{1" and "]" on the
    # next line): such text is shown as it was.
    return out if _markers(out) == _markers(text) else text


def _markers(text: str) -> list[str]:
    return [m.group(0) for m in MARKER_TOKEN.finditer(text)]


def _piece(piece: str, markdown: bool) -> str:
    if not piece.strip():
        return piece
    if _LATEX.search(piece):
        piece = _latex_to_text(piece)
    return strip_markdown(piece) if markdown else piece


def readable(text: str | None) -> str:
    """Return text with LaTeX and Markdown markup rendered as plain text; [n] markers unchanged."""
    return _convert(text, markdown=True)


def readable_latex(text: str | None) -> str:
    """Like `readable`, but keep Markdown (for renderers that display Markdown themselves)."""
    return _convert(text, markdown=False)
