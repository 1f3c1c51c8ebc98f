"""Load the prompt templates from `prompts/` and build the messages sent to the LLM.

Templates are plain text files packaged as `rag.prompts`, with one placeholder syntax:
`{{name}}`. Each template has a fixed set of variables; a file that uses an unknown one,
leaves out a required one, or holds a malformed `{{...}}` is rejected when loaded.
Source text is untrusted: it is escaped so it cannot close the `<sources>` data section.

Prompts are trimmed for small local models: under a token budget each source keeps the
sentences that best match the question (at least its best one), in their own order, with "…"
where sentences were left out. The messages keep a stable prefix: the system prompt, then the
sources, then the question, so a server's prompt cache reuses what two requests share (always
the system prompt; the whole first request in a repair call).
"""
from __future__ import annotations

import hashlib
import html
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rag.answering.refusal import REFUSAL
from rag.answering.support import Similarity, content_tokens
from rag.errors import PromptError
from rag.text import mostly_cjk, split_sentences, strip_unsafe
from rag.types import Hit

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

# name -> (required variables, optional variables)
TEMPLATES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "system": (frozenset({"refusal"}), frozenset()),
    "question": (frozenset({"sources", "question"}), frozenset({"refusal"})),
    "repair": (frozenset({"problems"}), frozenset({"k", "refusal"})),
}
# Templates used outside answers (not part of `Prompts` or its digest), validated the same way.
OTHER_TEMPLATES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "rewrite": (frozenset({"history", "question"}), frozenset()),  # chat follow-ups (rag.answering.rewrite)
}


def _spec(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """Return a template's (required, optional) variables; unknown names are an error."""
    spec = TEMPLATES.get(name) or OTHER_TEMPLATES.get(name)
    if spec is None:
        known = ", ".join(sorted({*TEMPLATES, *OTHER_TEMPLATES}))
        raise PromptError(f"unknown prompt {name!r} (known: {known})")
    return spec


@dataclass(frozen=True)
class Template:
    """A validated prompt template."""

    name: str
    text: str
    variables: frozenset[str]

    def render(self, **values: object) -> str:
        """Fill the placeholders in one pass (values are never scanned for placeholders)."""
        missing = sorted(self.variables - values.keys())
        if missing:
            raise PromptError(f"prompt {self.name!r}: no value for {', '.join(missing)}")
        required, optional = _spec(self.name)
        unknown = sorted(values.keys() - required - optional)
        if unknown:
            raise PromptError(f"prompt {self.name!r}: unknown variable(s) {', '.join(unknown)}")
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.text)


def parse_template(name: str, text: str) -> Template:
    """Check a template's placeholders against the variables its name allows."""
    required, optional = _spec(name)
    used = set(PLACEHOLDER.findall(text))
    leftover = PLACEHOLDER.sub("", text)
    if "{{" in leftover or "}}" in leftover:
        bad = re.search(r"\{\{[^}]*\}?\}?|[^{]{0,20}\}\}", leftover)
        raise PromptError(
            f"prompt {name!r}: malformed placeholder {bad.group(0).strip()!r}; use {{{{name}}}}"
        )
    unknown = sorted(used - required - optional)
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise PromptError(f"prompt {name!r}: unknown variable(s) {', '.join(unknown)} (allowed: {allowed})")
    missing = sorted(required - used)
    if missing:
        raise PromptError(f"prompt {name!r}: required variable(s) {', '.join(missing)} not used")
    return Template(name=name, text=text, variables=frozenset(used))


def load_template(name: str, *, directory: Path | None = None) -> Template:
    """Load and validate the template `name` from the packaged prompts (or `directory`)."""
    _spec(name)
    filename = f"{name}.txt"
    try:
        if directory is not None:
            text = (Path(directory) / filename).read_text(encoding="utf-8")
        else:
            text = resources.files("rag.prompts").joinpath(filename).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PromptError(f"cannot read prompt {filename}: {e}") from None
    return parse_template(name, text)


@dataclass(frozen=True)
class Prompts:
    """The templates one answer uses."""

    system: Template
    question: Template
    repair: Template

    def digest(self) -> str:
        """Hash of the template texts, so answers from different prompts are told apart."""
        h = hashlib.sha256()
        for t in (self.system, self.question, self.repair):
            h.update(t.name.encode() + b"\0" + t.text.encode() + b"\0")
        return h.hexdigest()[:12]


def load_prompts(*, directory: Path | None = None) -> Prompts:
    """Load every template an LLM answer needs."""
    return Prompts(*(load_template(n, directory=directory) for n in ("system", "question", "repair")))


def _data(text: str, *, attribute: bool = False) -> str:
    """Neutralise untrusted text so it cannot open or close a delimiter of the prompt."""
    return html.escape(strip_unsafe(text), quote=attribute)


def estimate_tokens(text: str) -> int:
    """Rough token count of text for budgets: ~5 characters a token, one per CJK character."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return math.ceil((len(text) - cjk) / 5) + cjk


_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")
GAP = " \u2026 "  # between sentences of one source that are not adjacent
RANK_WEIGHT = 0.02  # a better-ranked source wins ties between equally matching sentences


def _stems(text: str) -> set[str]:
    return {_SUFFIX.sub("", t) if len(t) > 5 else t for t in content_tokens(text)}


def _scores(question: str, sentences: list[str], similarity: Similarity | None) -> list[float]:
    """How well each sentence matches the question: shared words, or the embedder across languages."""
    asked = _stems(question)
    lexical = [len(asked & _stems(s)) / len(asked) if asked else 0.0 for s in sentences]
    if similarity is not None and mostly_cjk(question):
        # A Chinese question shares only names with English abstracts: add the cosine.
        return [x + float(c) for x, c in zip(lexical, similarity(question, sentences))]
    return lexical


def select_passages(question: str, hits: list[Hit], budget: int, *,
                    similarity: Similarity | None = None) -> list[str]:
    """Return each hit's text trimmed to its best-matching sentences, all within `budget` tokens.

    Every hit keeps its best sentence; the rest of the budget goes to the next best sentences
    of any hit. `budget` 0, or texts that fit whole, leave the texts as they are.
    """
    texts = [" ".join(h.text.split()) for h in hits]
    if budget <= 0 or sum(estimate_tokens(t) for t in texts) <= budget:
        return texts
    sentences = [[t[s:e] for s, e in split_sentences(t)] or [t] for t in texts]
    flat = [(i, j, s) for i, group in enumerate(sentences) for j, s in enumerate(group)]
    scores = _scores(question, [s for _, _, s in flat], similarity)
    ranked = sorted(range(len(flat)), key=lambda n: (-(scores[n] - RANK_WEIGHT * flat[n][0]), flat[n][0], flat[n][1]))
    keep: set[tuple[int, int]] = set()
    spent = 0
    for n in ranked:  # each hit's best sentence first, whatever it costs
        i, j, s = flat[n]
        if not any(key[0] == i for key in keep):
            keep.add((i, j))
            spent += estimate_tokens(s)
    for n in ranked:
        i, j, s = flat[n]
        cost = estimate_tokens(s)
        if (i, j) not in keep and spent + cost <= budget:
            keep.add((i, j))
            spent += cost
    out = []
    for i, group in enumerate(sentences):
        parts, last = [], None
        for j, s in enumerate(group):
            if (i, j) in keep:
                if parts and last != j - 1:
                    parts.append(GAP.strip())
                parts.append(s)
                last = j
        text = " ".join(parts)
        out.append(("\u2026 " if min(j for (h, j) in keep if h == i) > 0 else "") + text
                   + (" \u2026" if last != len(group) - 1 else ""))
    return out


def format_sources(hits: list[Hit], texts: list[str] | None = None) -> str:
    """Number the hits [1]..[k] inside `<source>` delimiters, labels as attributes.

    `texts` replaces the hits' texts (trimmed passages), one per hit.
    """
    blocks = []
    for n, hit in enumerate(hits, start=1):
        label = _data(" ".join((hit.label or hit.title or hit.doc_id).split()), attribute=True)
        body = texts[n - 1] if texts is not None else hit.text
        blocks.append(f'<source n="{n}" label="{label}">\n{_data(body.strip())}\n</source>')
    return "\n".join(blocks)


def build_messages(question: str, hits: list[Hit], prompts: Prompts, *, budget: int = 0,
                   similarity: Similarity | None = None) -> list[dict[str, str]]:
    """Return the system and user chat messages for `question` over `hits` (trimmed to `budget` tokens)."""
    system = prompts.system.render(refusal=REFUSAL)
    texts = select_passages(question, hits, budget, similarity=similarity)
    user = prompts.question.render(
        sources=format_sources(hits, texts), question=_data(question.strip()), refusal=REFUSAL
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def build_repair(problems: list[str], k: int, prompts: Prompts) -> str:
    """Return the user message that tells the model exactly what to fix."""
    listed = "\n".join(f"- {p}" for p in problems)
    return prompts.repair.render(problems=listed, k=k, refusal=REFUSAL)
