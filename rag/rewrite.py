"""Rewrite a follow-up question into a standalone one before retrieval.

Offline, a deterministic rule: pronouns and "this paper"-style references are replaced by the
conversation's subject (the label of the previous answer's top cited source), and a short
follow-up that names no method gets the subject appended. With an LLM, the `rewrite` prompt
asks the model for the standalone question; its reply is checked and the rule is the
fallback when the reply is unusable.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Collection, Sequence

from rag.types import Answer

if TYPE_CHECKING:
    from rag.llm import ChatClient
    from rag.answering.prompt import Template

MAX_TURNS = 3  # turns of history given to the LLM
MAX_ANSWER_CHARS = 600  # of each previous answer, in the LLM prompt
MAX_REWRITE_CHARS = 400  # a longer LLM reply is not a question

_NOUNS = (
    r"paper|method|approach|model|work|system|framework|algorithm|study|technique|abstract|one|"
    r"architecture|agent|policy"
)
_DETERMINED = re.compile(
    rf"\b(?:this|that|the\s+same|the\s+above|the\s+previous|the\s+last|the\s+said|the)\s+(?:{_NOUNS})\b", re.I
)
_POSSESSIVE = re.compile(r"\b(?:its|their)\b", re.I)
_SUBJECT_PRONOUN = re.compile(r"\b(?:it|they|them)\b", re.I)
# Bare "this"/"that" refer back after a verb or preposition ("how does that compare"), not as a
# relative pronoun ("a paper that uses").
_DEMONSTRATIVE = re.compile(
    r"\b(does|did|do|is|was|are|about|of|with|to|and|for|on|compare|beat|beats|use|uses|than)\s+"
    r"(?:this|that)\b(?!\s+(?:the|a|an)\b)",
    re.I,
)
_LEADING_CONJUNCTION = re.compile(r"^(?:and|also|but|so|then|ok(?:ay)?|well)\b[\s,]*", re.I)
_WHAT_ABOUT = re.compile(r"^(?:(?:what|how)\s+about|and|also|now)\s+", re.I)
_FOLLOW_UP_START = re.compile(r"^(?:and|also|but|so|then|what\s+about|how\s+about|why|what\s+else)\b", re.I)
# Questions that ask the corpus for a new topic: never tied to the previous subject.
_NEW_TOPIC = re.compile(
    r"\b(?:which|what|any|some|other|another|all|every)\s+(?:papers?|abstracts?|works?|methods?|studies)\b|"
    r"\bis\s+there\b|\bare\s+there\b|\bdoes\s+any\b|\bpapers\b",
    re.I,
)
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*\b")
_WORD = re.compile(r"\w+")
SHORT_FOLLOW_UP_WORDS = 6


@dataclass
class Turn:
    """One exchange: what the user typed, what was searched, and what the answer was about."""

    question: str
    standalone: str
    answer: str
    subject: str | None = None  # label of the top cited source
    cited: list[str] = field(default_factory=list)  # labels of every cited source

    @classmethod
    def from_answer(cls, question: str, standalone: str, ans: Answer) -> "Turn":
        """Record an answered turn."""
        labels = [c.label or c.title for c in sorted(ans.citations, key=lambda c: c.n)]
        return cls(question=question, standalone=standalone, answer=ans.text,
                   subject=subject_of(ans), cited=labels)


@dataclass(frozen=True)
class Rewrite:
    """A question as typed and as searched, with how it was rewritten."""

    original: str
    question: str
    method: str  # "none", "rule" or "llm"
    note: str = ""
    usage: dict[str, int] = field(default_factory=dict)  # tokens of the LLM call, when one was made

    @property
    def changed(self) -> bool:
        return self.question.strip() != self.original.strip()


def subject_of(ans: Answer) -> str | None:
    """Return the label of the answer's top cited source (lowest n), or None when it cites none."""
    if ans.refused or not ans.citations:
        return None
    top = min(ans.citations, key=lambda c: c.n)
    return (top.label or top.title or "").strip() or None


def current_subject(history: Sequence[Turn]) -> str | None:
    """Return the subject of the latest turn that had one."""
    for turn in reversed(history):
        if turn.subject:
            return turn.subject
    return None


def _reference(subject: str) -> str:
    """Name the subject in a question; a first-words label is quoted as a paper."""
    if subject.endswith("…") or len(subject.split()) > 3:
        return f'the paper "{subject.rstrip("…").strip()}"'
    return subject


def _name_positions(question: str, labels: Collection[str]) -> list[int]:
    """Return where the question names a known label or a method-like name (BraVE, T2I-R1)."""
    lowered = question.lower()
    found = [m.start() for m in _NAME.finditer(question)]
    for label in labels:
        if label and len(label.split()) <= 3:
            found += [m.start() for m in re.finditer(rf"(?<!\w){re.escape(label.lower())}(?!\w)", lowered)]
    return sorted(set(found))


def _first_reference(text: str) -> int | None:
    """Return where the first back-reference (it, its, this paper, that) starts, if any."""
    starts = [m.start() for m in _DETERMINED.finditer(text)]
    starts += [m.start() for m in _POSSESSIVE.finditer(text)]
    starts += [m.end(1) + 1 for m in _DEMONSTRATIVE.finditer(text)]
    starts += [m.start() for m in _SUBJECT_PRONOUN.finditer(text)]
    return min(starts) if starts else None


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _swap_subject(body: str, last: Turn | None, labels: Collection[str]) -> str | None:
    """Turn "and BraVE?" / "what about BraVE?" into the last question asked about BraVE."""
    if last is None or not last.subject:
        return None
    name = _WHAT_ABOUT.sub("", body).rstrip(" ?.!").strip()
    if not name or len(name.split()) > 3 or _name_positions(name, labels) != [0]:
        return None
    previous = last.standalone
    if last.subject not in previous:
        return None
    return previous.replace(last.subject, name)


def rewrite_rule(question: str, history: Sequence[Turn], *, labels: Collection[str] = ()) -> Rewrite:
    """Resolve references to the previous subject deterministically.

    Left alone: questions that ask the corpus for a new topic ("which papers ..."), and
    questions whose pronouns follow a name they can refer to ("what does BraVE do and how
    fast is it?").
    """
    question = " ".join(question.split())
    subject = current_subject(history)
    if not subject or not question:
        return Rewrite(question, question, "none")
    body = _LEADING_CONJUNCTION.sub("", question)
    if _NEW_TOPIC.search(body):
        return Rewrite(question, question, "none")
    ref = _reference(subject)
    follow_up = _FOLLOW_UP_START.match(question) is not None
    names = _name_positions(body, labels)
    first_ref = _first_reference(body)

    if first_ref is not None and not (names and names[0] < first_ref):
        out = _DETERMINED.sub(ref, body)
        out = _POSSESSIVE.sub(f"{ref}'s", out)
        out = _DEMONSTRATIVE.sub(lambda m: f"{m.group(1)} {ref}", out)
        out = _SUBJECT_PRONOUN.sub(ref, out)
        return Rewrite(question, _capitalise(out), "rule", f"resolved references to {subject}")

    swapped = _swap_subject(body, history[-1] if history else None, labels)
    if swapped is not None:
        return Rewrite(question, swapped, "rule", "same question about another method")
    short = len(_WORD.findall(body)) <= SHORT_FOLLOW_UP_WORDS
    if (follow_up or short) and not names:
        stem = body.rstrip(" ?.!")
        return Rewrite(question, _capitalise(f"{stem} in {ref}?"), "rule", f"follow-up about {subject}")
    return Rewrite(question, question, "none")


def format_history(history: Sequence[Turn], *, turns: int = MAX_TURNS) -> str:
    """Render the last turns for the rewrite prompt, escaped so they stay data."""
    blocks = []
    for turn in history[-turns:]:
        answer = " ".join(turn.answer.split())
        if len(answer) > MAX_ANSWER_CHARS:
            answer = answer[: MAX_ANSWER_CHARS - 1] + "…"
        cited = ", ".join(turn.cited) or "none"
        blocks.append(
            f"<turn>\nUser: {html.escape(turn.standalone, quote=False)}\n"
            f"Assistant: {html.escape(answer, quote=False)}\n"
            f"Cited papers: {html.escape(cited, quote=False)}\n</turn>"
        )
    return "\n".join(blocks)


def clean_reply(text: str) -> str | None:
    """Return the standalone question from the model's reply, or None when it is unusable."""
    for line in (text or "").splitlines():
        line = line.strip().strip("`").strip()
        line = re.sub(r"^(?:standalone\s+question|question|rewritten(?:\s+question)?)\s*:\s*", "", line, flags=re.I)
        line = line.strip().strip('"“”\'').strip()
        if line:
            if len(line) > MAX_REWRITE_CHARS or "<" in line:
                return None
            return line
    return None


def rewrite_llm(
    question: str,
    history: Sequence[Turn],
    *,
    client: "ChatClient",
    template: "Template | None" = None,
    labels: Collection[str] = (),
) -> Rewrite:
    """Ask the model for a standalone question; fall back to the rule when its reply is unusable."""
    question = " ".join(question.split())
    if not history:
        return Rewrite(question, question, "none")
    if template is None:
        from rag.answering.prompt import load_template

        template = load_template("rewrite")
    prompt = template.render(history=format_history(history), question=html.escape(question, quote=False))
    reply = client.chat([{"role": "user", "content": prompt}])
    standalone = clean_reply(reply.text)
    usage = dict(reply.usage or {})
    if standalone is None:
        fallback = rewrite_rule(question, history, labels=labels)
        return Rewrite(question, fallback.question, fallback.method, "the model's rewrite was unusable; used the rule",
                       usage=usage)
    return Rewrite(question, standalone, "llm", usage=usage)


def rewrite(
    question: str,
    history: Sequence[Turn],
    *,
    mode: str,
    client: "ChatClient | None" = None,
    labels: Collection[str] = (),
) -> Rewrite:
    """Return the standalone question: by the LLM in "llm" mode (with `client`), else by the rule."""
    if mode == "llm" and client is not None:
        return rewrite_llm(question, history, client=client, labels=labels)
    return rewrite_rule(question, history, labels=labels)
