"""Clean abstract text for embedding and lexical search.

The original text is kept for display and citation; this cleaned form only feeds the
embedder and BM25, so LaTeX and Markdown markup do not split or hide words.
"""
from __future__ import annotations

import re
import unicodedata

from rag.text import CONTROL

# Commands whose braced argument is kept as plain text: \textbf{Bra}nch -> Branch.
_TEXT_COMMANDS = re.compile(
    r"\\(?:textbf|textit|texttt|textsc|textrm|textsf|emph|mathrm|mathbf|mathit|mathcal|mathbb|"
    r"operatorname|text|underline|boldsymbol|mathsf|mathtt)\s*\{([^{}]*)\}"
)
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SYMBOLS = {
    r"\times": "x",
    r"\cdot": "*",
    r"\leq": "<=",
    r"\le": "<=",
    r"\geq": ">=",
    r"\ge": ">=",
    r"\approx": "~",
    r"\sim": "~",
    r"\infty": "infinity",
    r"\ldots": "...",
    r"\dots": "...",
    r"\%": "%",
    r"\&": "&",
    r"\_": "_",
    r"\#": "#",
    r"\$": "$",
    r"\{": "{",
    r"\}": "}",
}
_SYMBOL_RE = re.compile("|".join(re.escape(k) + (r"(?![A-Za-z])" if k[-1].isalpha() else "")
                                  for k in sorted(_SYMBOLS, key=len, reverse=True)))
_GREEK_OR_COMMAND = re.compile(r"\\(var)?([A-Za-z]+)")
_MATH = re.compile(r"(?<!\\)\$\$?(.+?)(?<!\\)\$\$?", re.S)
_SUPERSCRIPT = re.compile(r"([\^_])\{([^{}]*)\}")
_MD_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{2,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_MD_CODE = re.compile(r"`([^`]+)`")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)]+)\)")

_PUNCT = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u2032": "'", "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": " - ", "\u2015": " - ",
    "\u2212": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u200b": "",
    "\u2026": "...",
}
_PUNCT_RE = re.compile("|".join(map(re.escape, _PUNCT)))
_SPACES = re.compile(r"\s+")


def _strip_latex(text: str) -> str:
    for _ in range(3):  # nested commands, innermost first
        new = _TEXT_COMMANDS.sub(r"\1", text)
        new = _FRAC.sub(r"\1/\2", new)
        if new == text:
            break
        text = new
    text = _SYMBOL_RE.sub(lambda m: _SYMBOLS[m.group(0)], text)
    text = _SUPERSCRIPT.sub(r"\1\2", text)
    text = _GREEK_OR_COMMAND.sub(lambda m: m.group(2), text)
    text = _MATH.sub(lambda m: m.group(1).strip(), text)
    return text


def _strip_markdown(text: str) -> str:
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_CODE.sub(r"\1", text)
    for _ in range(2):
        text = _MD_EMPHASIS.sub(r"\2", text)
    return text


def strip_markdown(text: str) -> str:
    """Remove Markdown links, inline code and emphasis, keeping their words."""
    return _strip_markdown(text)


def normalize(text: str) -> str:
    """Normalize Unicode, drop control characters and collapse whitespace (no markup removal)."""
    text = unicodedata.normalize("NFC", text)
    text = CONTROL.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def clean(text: str) -> str:
    """Return text without LaTeX/Markdown markup, with plain quotes and dashes."""
    text = unicodedata.normalize("NFKC", text)
    text = _PUNCT_RE.sub(lambda m: _PUNCT[m.group(0)], text)
    text = _strip_latex(text)
    text = _strip_markdown(text)
    text = text.replace("{", "").replace("}", "")
    text = CONTROL.sub(" ", text)
    return _SPACES.sub(" ", text).strip()
