"""Rewrite a follow-up question into a standalone one before retrieval.

A question that `stands_alone` (it asks the corpus for a paper, names its own subject, asks
for a definition, or carries its own content words) is never rewritten, in either mode.
Offline, a deterministic rule: pronouns and "this paper"-style references (English and
Chinese) are replaced by the conversation's subject (the label of the previous answer's top
cited source), "what about X?" asks about X, and a short follow-up that names no method gets
the subject added. With an LLM, the `rewrite` prompt asks the model for the standalone
question; its reply is checked and the rule is the fallback when the reply is unusable.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Sequence

from rag.text import normalize_question
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
# Chinese back-references: 它/它们 ("it/they"; not 其它, "other") and 这篇论文/该方法 ("this paper").
_CJK_REFERENCE = re.compile(
    r"(?:这|该|此|那)(?:篇|个|项|种|一)?(?:论文|文章|方法|模型|工作|研究|框架|算法|系统)|(?<!其)它们?"
)
_LEADING_CONJUNCTION = re.compile(r"^(?:and|also|but|so|then|ok(?:ay)?|well)\b[\s,]*", re.I)
_WHAT_ABOUT = re.compile(r"^(?:(?:what|how)\s+about|and|also|now)\s+", re.I)
_CJK_WHAT_ABOUT = re.compile(r"^(?:那么?|还有)?\s*(.+?)\s*呢\s*[？?]?$")  # "那 BraVE 呢？" = "what about BraVE?"
_FOLLOW_UP_START = re.compile(r"^(?:and|also|but|so|then|what\s+about|how\s+about|why|what\s+else)\b", re.I)
# Questions that ask the corpus for a paper: never tied to the previous subject.
_NEW_TOPIC = re.compile(
    r"\b(?:which|what|any|some|other|another|all|every)\s+(?:papers?|abstracts?|works?|methods?|studies)\b|"
    r"\bis\s+there\b|\bare\s+there\b|\bdoes\s+any\b|\bpapers\b|"
    r"哪(?:一|几)?(?:篇|些|个|项|种)?(?:论文|文章|工作|研究|方法|模型)|"
    r"(?:有没有|是否有|有哪些)[^？?，,。]*?(?:论文|文章|工作|研究)",
    re.I,
)
# A definition of a bare noun phrase names a concept, not a part of the previous paper, whose
# parts come with a determiner or a possessive ("what are the results?", "what is its speedup?").
# The phrase has two words or more and does not start with a participle ("what is new?", "what
# is used for training?" ask about the paper).
_NOT_A_CONCEPT = r"(?!(?:the|its|their|this|that|these|those|it|they|them)\b)(?!\w+ed\b)"
_DEFINITION = re.compile(
    rf"^(?:(?:what|who)\s+(?:is|are)|explain|define|describe)\s+(?:an?\s+)?{_NOT_A_CONCEPT}\w+[\s-]+\w",
    re.I,
)
# Method-like names (BraVE, T2I-R1, ε-DPO): a capital or digit inside the word. Letters and digits
# around the name end it, so a name written inside Chinese text ("用QSHNN做") is still found.
_NAME = re.compile(
    r"(?<![A-Za-z0-9_])[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*(?![A-Za-z0-9_])"
)
_WORD = re.compile(r"[^\W\u3040-\u30ff\u3400-\u9fff]+")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]+")
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
            pattern = rf"(?<![a-z0-9_]){re.escape(label.lower())}(?![a-z0-9_])"
            found += [m.start() for m in re.finditer(pattern, lowered)]
    return sorted(set(found))


def _first_reference(text: str) -> int | None:
    """Return where the first back-reference (it, its, this paper, that, 它, 该方法) starts, if any."""
    starts = [m.start() for m in _DETERMINED.finditer(text)]
    starts += [m.start() for m in _POSSESSIVE.finditer(text)]
    starts += [m.end(1) + 1 for m in _DEMONSTRATIVE.finditer(text)]
    starts += [m.start() for m in _SUBJECT_PRONOUN.finditer(text)]
    starts += [m.start() for m in _CJK_REFERENCE.finditer(text)]
    return min(starts) if starts else None


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def word_count(text: str) -> int:
    """Count words; an unspaced CJK run counts one word per two characters.

    `\\w+` would count a whole Chinese sentence as one word, so every Chinese question would
    look like a two-word follow-up.
    """
    return len(_WORD.findall(text)) + sum((len(run) + 1) // 2 for run in _CJK_RUN.findall(text))


def is_cjk(text: str) -> bool:
    """True when most letters of text are CJK characters."""
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    return cjk > 0 and cjk >= sum(len(w) for w in _WORD.findall(text))


def _what_about(body: str, labels: Collection[str]) -> str | None:
    """Return the name X of "what about X?", "and X?", "X 呢？" or a bare "X?", else None."""
    m = _CJK_WHAT_ABOUT.match(body)
    name = m.group(1).strip() if m else _WHAT_ABOUT.sub("", body).rstrip(" ?.!？").strip()
    if not name or word_count(name) > 3 or _name_positions(name, labels) != [0]:
        return None
    return name


def _topic_words(question: str, subject: str, name: str, abstract_of: Callable[[str], str | None]) -> list[str]:
    """Words of `question` that only the previous subject's abstract has, not `name`'s."""
    from rag.index.lexical import tokenize

    previous, new = abstract_of(subject), abstract_of(name)
    if not previous or not new:
        return []
    mine, theirs = set(tokenize(new)), set(tokenize(previous))
    drop = set(tokenize(subject)) | set(tokenize(name))
    return [w for w in tokenize(question) if w not in drop and w in theirs and w not in mine]


def _swap_subject(body: str, last: Turn | None, labels: Collection[str],
                  abstract_of: Callable[[str], str | None] | None) -> tuple[str, str] | None:
    """Turn "and BraVE?" / "what about BraVE?" into a question whose subject is BraVE.

    It is the previous question asked about BraVE, unless that question carries words only
    the previous paper's abstract has (DISCO's "replace ... guidance" asked of XVerse): those
    words would pull retrieval and the quoted sentences back to the previous paper, so the
    question becomes "What does BraVE do?".
    """
    if last is None or not last.subject:
        return None
    name = _what_about(body, labels)
    if name is None:
        return None
    previous = last.standalone
    if last.subject not in previous:
        return None
    swapped = previous.replace(last.subject, name)
    if abstract_of is not None and _topic_words(swapped, last.subject, name, abstract_of):
        return f"What does {name} do?", f"asked what {name} does: the previous question was about {last.subject}"
    return swapped, "same question about another method"


def stands_alone(question: str, *, labels: Collection[str] = ()) -> str | None:
    """Return why `question` needs no conversation to be understood, or None when it may.

    Each rule has a reason:
    - it asks the corpus for a paper ("which papers ...", "is there a paper ...", "哪篇论文 ..."):
      its subject is the paper it asks for, and its pronouns refer to that paper;
    - it names a method or a known label before any back-reference: it is about that name
      ("what does BraVE do and how fast is it?");
    - it asks for the definition of a bare noun phrase of two words or more ("what is tactile
      sensing?"): a concept, whereas the parts of a paper come with a determiner ("what are the
      results?") and "what is new?" asks about the paper;
    - it has no back-reference, does not start like a follow-up and is longer than
      SHORT_FOLLOW_UP_WORDS words (CJK counted per two characters): it carries its own content.
    """
    body = _LEADING_CONJUNCTION.sub("", normalize_question(question))
    if _NEW_TOPIC.search(body):
        return "asks the corpus for a paper"
    if _what_about(body, labels) is not None:
        return None
    names = _name_positions(body, labels)
    first_ref = _first_reference(body)
    if names and (first_ref is None or names[0] < first_ref):
        return "names its own subject"
    if first_ref is not None or _FOLLOW_UP_START.match(question):
        return None
    if _DEFINITION.match(body):
        return "asks for a definition"
    if word_count(body) > SHORT_FOLLOW_UP_WORDS:
        return "carries its own content words"
    return None


def rewrite_rule(
    question: str,
    history: Sequence[Turn],
    *,
    labels: Collection[str] = (),
    abstract_of: Callable[[str], str | None] | None = None,
) -> Rewrite:
    """Resolve references to the previous subject deterministically.

    A question that `stands_alone` is left as it is. Otherwise back-references (it, its, this
    paper, 它, 该方法) become the subject; "what about X?" / "X 呢？" asks the previous question
    about X (see `_swap_subject`; `abstract_of(label)` returns a label's abstract); a short
    follow-up gets the subject added ("… in RoboRefer?", "关于RoboRefer，…？").
    """
    question = normalize_question(question)
    subject = current_subject(history)
    if not subject or not question:
        return Rewrite(question, question, "none")
    reason = stands_alone(question, labels=labels)
    if reason is not None:
        return Rewrite(question, question, "none", reason)
    body = _LEADING_CONJUNCTION.sub("", question)
    ref = _reference(subject)

    if _first_reference(body) is not None:
        out = _DETERMINED.sub(ref, body)
        out = _POSSESSIVE.sub(f"{ref}'s", out)
        out = _DEMONSTRATIVE.sub(lambda m: f"{m.group(1)} {ref}", out)
        out = _SUBJECT_PRONOUN.sub(ref, out)
        out = _CJK_REFERENCE.sub(ref, out)
        return Rewrite(question, _capitalise(out), "rule", f"resolved references to {subject}")

    swapped = _swap_subject(body, history[-1] if history else None, labels, abstract_of)
    if swapped is not None:
        return Rewrite(question, swapped[0], "rule", swapped[1])
    if _name_positions(body, labels):
        return Rewrite(question, question, "none")
    stem = body.rstrip(" ?.!？。！")
    out = f"关于{ref}，{stem}？" if is_cjk(body) else _capitalise(f"{stem} in {ref}?")
    return Rewrite(question, out, "rule", f"follow-up about {subject}")


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
    abstract_of: Callable[[str], str | None] | None = None,
) -> Rewrite:
    """Ask the model for a standalone question; fall back to the rule when its reply is unusable."""
    question = normalize_question(question)
    if not history:
        return Rewrite(question, question, "none")
    reason = stands_alone(question, labels=labels)
    if reason is not None:  # the model must not tie a self-contained question to the last topic
        return Rewrite(question, question, "none", reason)
    if template is None:
        from rag.answering.prompt import load_template

        template = load_template("rewrite")
    prompt = template.render(history=format_history(history), question=html.escape(question, quote=False))
    reply = client.chat([{"role": "user", "content": prompt}])
    standalone = clean_reply(reply.text)
    usage = dict(reply.usage or {})
    if standalone is None:
        fallback = rewrite_rule(question, history, labels=labels, abstract_of=abstract_of)
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
    abstract_of: Callable[[str], str | None] | None = None,
) -> Rewrite:
    """Return the standalone question: by the LLM in "llm" mode (with `client`), else by the rule."""
    if mode == "llm" and client is not None:
        return rewrite_llm(question, history, client=client, labels=labels, abstract_of=abstract_of)
    return rewrite_rule(question, history, labels=labels, abstract_of=abstract_of)
