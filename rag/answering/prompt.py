"""Load the prompt templates from `prompts/` and build the messages sent to the LLM.

Templates are plain text files packaged as `rag.prompts`, with one placeholder syntax:
`{{name}}`. Each template has a fixed set of variables; a file that uses an unknown one,
leaves out a required one, or holds a malformed `{{...}}` is rejected when loaded.
Source text is untrusted: it is escaped so it cannot close the `<sources>` data section.
"""
from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rag.answering.refusal import REFUSAL
from rag.errors import PromptError
from rag.text import strip_unsafe
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


def format_sources(hits: list[Hit]) -> str:
    """Number the hits [1]..[k] inside `<source>` delimiters, labels as attributes."""
    blocks = []
    for n, hit in enumerate(hits, start=1):
        label = _data(" ".join((hit.label or hit.title or hit.doc_id).split()), attribute=True)
        blocks.append(f'<source n="{n}" label="{label}">\n{_data(hit.text.strip())}\n</source>')
    return "\n".join(blocks)


def build_messages(question: str, hits: list[Hit], prompts: Prompts) -> list[dict[str, str]]:
    """Return the system and user chat messages for `question` over `hits`."""
    system = prompts.system.render(refusal=REFUSAL)
    user = prompts.question.render(
        sources=format_sources(hits), question=_data(question.strip()), refusal=REFUSAL
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def build_repair(problems: list[str], k: int, prompts: Prompts) -> str:
    """Return the user message that tells the model exactly what to fix."""
    listed = "\n".join(f"- {p}" for p in problems)
    return prompts.repair.render(problems=listed, k=k, refusal=REFUSAL)
