"""Text grammar shared by every stage: sentences, terminal-safe strings, secrets in messages.

One definition each, imported by the runtime, the renderer and the eval alike:
- `split_sentences`: sentence spans of abstract or answer text;
- `UNSAFE` / `strip_unsafe` / `safe`: characters a terminal or prompt must never receive
  (C0/C1 controls except tab and newline, bidi overrides) and ANSI escape sequences;
- `redact` / `mask_url`: secrets and URL passwords removed from anything shown;
- `normalize_question`: a question as retrieval and the answerers must see it.
"""
from __future__ import annotations

import re
import unicodedata

# -- sentences ---------------------------------------------------------------------------------
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|et al|vs|cf|Fig|Eq|Sec|resp|approx|etc|No|Dr|Prof)\.|\b[A-Z]\.)$")
_BOUNDARY = re.compile(r"(?<=[.!?。！？])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9\u3400-\u9fff$\\*])|(?<=[。！？])")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Return (start, end) offsets of the sentences of text, not breaking at "e.g." or "1.70"."""
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


# -- characters that act on a terminal or break a delimiter --------------------------------------
# C0 controls except tab and newline, DEL and C1 controls: never part of a text's content.
_CONTROL_CHARS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
CONTROL = re.compile(f"[{_CONTROL_CHARS}]")
# ... and bidi marks, embeddings and isolates: content, but they reorder what a terminal shows.
UNSAFE = re.compile(f"[{_CONTROL_CHARS}\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


def strip_unsafe(text: str | None) -> str:
    """Remove unsafe characters (tab and newline stay)."""
    return UNSAFE.sub("", text or "")


def safe(text: str | None) -> str:
    """Return text fit for a terminal: escape sequences and unsafe characters removed."""
    if not text:
        return ""
    return strip_unsafe(_ANSI.sub("", text))


def one_line(text: str, width: int = 300) -> str:
    """Collapse text to one safe line of at most `width` characters (for messages)."""
    line = " ".join(UNSAFE.sub(" ", _ANSI.sub("", text or "")).split())
    return line if len(line) <= width else line[: width - 1] + "\u2026"


# -- questions -----------------------------------------------------------------------------------
def normalize_question(text: str) -> str:
    """Return the question in NFKC form, without format characters, whitespace collapsed.

    Format characters (Unicode category Cf: soft hyphen, zero-width space/joiner/non-joiner,
    word joiner, BOM, bidi marks) are invisible and never part of a word, yet they split
    "Robo\u00adRefer" into two tokens that match nothing; NFKC folds full-width letters and
    compatibility forms ("ＲｏｂｏＲｅｆｅｒ", "ﬁ") into the characters the abstracts use.
    Control characters become spaces. A question word's contracted "is" is spelled out ("what's the
    max gain?" -> "what is the max gain?"): the answerer reads a question's form by its words.
    """
    text = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text
                   if unicodedata.category(ch) != "Cf")
    return _CONTRACTED_IS.sub(r"\1 is", " ".join(unicodedata.normalize("NFKC", text).split()))


_CONTRACTED_IS = re.compile(r"\b(what|how|where|which|who|when|why)['’]s\b", re.I)


# -- secrets -------------------------------------------------------------------------------------
_URL_PASSWORD = re.compile(r"(?<=//)([^/:@\s]+):[^/@\s]+@")
_URL_TOKEN = re.compile(r"(?<=//)[^/:@\s]+@")


def mask_url(text: str) -> str:
    """Hide credentials in URLs: `//user:secret@` -> `//user:***@`, `//token@` -> `//***@`."""
    return _URL_TOKEN.sub("***@", _URL_PASSWORD.sub(r"\1:***@", text))


def redact(text: str, *secrets: str | None) -> str:
    """Replace each secret with `***` and mask credentials in any URL of text."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return mask_url(text)


_HAN = re.compile(r"[\u3400-\u9fff]")
# A text is "mostly Chinese" when at least a quarter of its letters are Han characters (a Chinese
# question naming a few Latin-script methods, "DynamicRAG 中的重排序器是用什么方法优化的？", is;
# an English sentence quoting one Chinese term is not). One definition for retrieval, the
# answerers and the eval.
MOSTLY_CJK_SHARE = 0.25


def cjk_share(text: str) -> float:
    """Share of the text's letters that are Han (CJK) characters."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(1 for ch in letters if _HAN.match(ch)) / len(letters) if letters else 0.0


def mostly_cjk(text: str) -> bool:
    """True when the text is mostly Chinese, so its words cannot match English text."""
    return cjk_share(text) >= MOSTLY_CJK_SHARE

