"""The eval question set: typed cases loaded from a JSONL file and checked against the corpus."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from rag.clean import clean
from rag.errors import UsageError

TYPES = ("lookup", "which_paper", "paraphrase", "multi_doc", "numeric", "unanswerable", "false_premise")
LANGS = ("en", "zh")
# dev: anything may be tuned on it; test: reported, never tuned on.
SPLITS = ("dev", "test")
DEFAULT_QUESTIONS = Path("eval") / "questions.jsonl"


class DatasetError(UsageError):
    """The questions file is missing or malformed."""


@dataclass(frozen=True)
class Case:
    """One question with its gold documents and the facts a correct answer must contain."""

    id: str
    question: str
    type: str
    lang: str
    answerable: bool
    gold_ids: tuple[str, ...] = ()
    gold_labels: tuple[str, ...] = ()
    facts: tuple[tuple[str, ...], ...] = ()  # each fact: acceptable spellings
    note: str = ""
    split: str = "dev"
    plausible: bool = False  # unanswerable: asks a detail of a named paper that its abstract lacks
    distractor_may_answer: bool = False  # among other real papers, another one may legitimately answer

    @property
    def refusal_ok(self) -> bool:
        """True when refusing counts as a correct outcome (unanswerable or false premise)."""
        return not self.answerable or self.type == "false_premise"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["gold_ids"], d["gold_labels"] = list(self.gold_ids), list(self.gold_labels)
        d["facts"] = [list(f) for f in self.facts]
        return d


@dataclass
class Dataset:
    """A named list of cases read from one file."""

    name: str
    cases: list[Case] = field(default_factory=list)
    path: str = ""

    def __len__(self) -> int:
        return len(self.cases)


# A hyphen (or dash) between two CJK characters: "树-结构" is written "树结构".
_CJK_HYPHEN = re.compile(r"(?<=[\u3400-\u9fff])\s*[-\u2010-\u2015\u2212\uff0d]\s*(?=[\u3400-\u9fff])")


def normalize_text(text: str) -> str:
    """Return text as facts are matched: markup removed by rag.clean, case folded, no hyphens inside CJK words."""
    return _CJK_HYPHEN.sub("", clean(text)).casefold()


def has_spelling(text: str, spellings: Iterable[str]) -> bool:
    """True when any spelling occurs in text after cleaning and case folding."""
    hay = normalize_text(text)
    return any(normalize_text(s) and normalize_text(s) in hay for s in spellings)


def _strings(value: Any, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DatasetError(f"{where}: `{name}` must be a list of non-empty strings")
    return tuple(value)


def _flag(obj: dict[str, Any], key: str, where: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise DatasetError(f"{where}: `{key}` must be true or false")
    return value


def _split(obj: dict[str, Any], where: str) -> str:
    """The case's split; there is no default, so no question is silently counted as untuned."""
    if "split" not in obj:
        raise DatasetError(f"{where}: missing field `split` (dev: may be tuned on, test: never tuned on)")
    if obj["split"] not in SPLITS:
        raise DatasetError(f"{where}: unknown split {obj['split']!r} (known: {', '.join(SPLITS)})")
    return obj["split"]


def parse_case(obj: Any, where: str) -> Case:
    """Validate one decoded JSON object and return its Case."""
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: expected a JSON object")
    for key in ("id", "question", "type", "lang", "answerable"):
        if key not in obj:
            raise DatasetError(f"{where}: missing field `{key}`")
    for key in ("id", "question"):
        if not isinstance(obj[key], str) or not obj[key].strip():
            raise DatasetError(f"{where}: `{key}` must be a non-empty string")
    if obj["type"] not in TYPES:
        raise DatasetError(f"{where}: unknown type {obj['type']!r} (known: {', '.join(TYPES)})")
    if obj["lang"] not in LANGS:
        raise DatasetError(f"{where}: unknown lang {obj['lang']!r} (known: {', '.join(LANGS)})")
    if not isinstance(obj["answerable"], bool):
        raise DatasetError(f"{where}: `answerable` must be true or false")
    gold = _strings(obj.get("gold_ids", []), where, "gold_ids")
    labels = _strings(obj.get("gold_labels", []), where, "gold_labels")
    raw_facts = obj.get("facts", [])
    if not isinstance(raw_facts, list):
        raise DatasetError(f"{where}: `facts` must be a list of lists of spellings")
    facts = tuple(_strings(f, where, "facts[]") for f in raw_facts)
    if any(not f for f in facts):
        raise DatasetError(f"{where}: every fact needs at least one spelling")
    if obj["answerable"] and not gold:
        raise DatasetError(f"{where}: an answerable question needs `gold_ids`")
    if not obj["answerable"] and (gold or facts):
        raise DatasetError(f"{where}: an unanswerable question must have no gold documents and no facts")
    if (obj["type"] == "unanswerable") == obj["answerable"]:
        raise DatasetError(f"{where}: type `unanswerable` and `answerable: false` go together")
    if labels and len(labels) != len(gold):
        raise DatasetError(f"{where}: `gold_labels` must match `gold_ids` one to one")
    split = _split(obj, where)
    plausible = _flag(obj, "plausible", where)
    if plausible and obj["answerable"]:
        raise DatasetError(f"{where}: `plausible` applies to unanswerable questions only")
    return Case(id=obj["id"], question=obj["question"], type=obj["type"], lang=obj["lang"],
                answerable=obj["answerable"], gold_ids=gold, gold_labels=labels, facts=facts,
                note=str(obj.get("note", "")), split=split, plausible=plausible,
                distractor_may_answer=_flag(obj, "distractor_may_answer", where))


def load_dataset(path: str | Path | None = None) -> Dataset:
    """Read a JSONL questions file; a missing file or a bad line is a one-line DatasetError."""
    p = Path(path) if path is not None else DEFAULT_QUESTIONS
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"questions file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"cannot read questions file {p}: {e}") from None
    cases: list[Case] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{p}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{where}: malformed JSON ({e.msg})") from None
        case = parse_case(obj, where)
        if case.id in seen:
            raise DatasetError(f"{where}: duplicate id {case.id!r}")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise DatasetError(f"{p}: no questions")
    return Dataset(name=p.stem, cases=cases, path=str(p))


def select_split(dataset: Dataset, split: str) -> Dataset:
    """The cases of one split (`dev`, `test`), or all of them (`all`)."""
    if split == "all":
        return dataset
    if split not in SPLITS:
        raise UsageError(f"--split must be dev, test or all, got {split!r}")
    cases = [c for c in dataset.cases if c.split == split]
    if not cases:
        raise DatasetError(f"{dataset.path or dataset.name}: no questions in the {split} split")
    return Dataset(name=dataset.name, cases=cases, path=dataset.path)


def check_against_corpus(cases: Iterable[Case], documents: Mapping[str, str]) -> list[str]:
    """List problems: gold ids absent from `documents` (id -> text), facts absent from their gold text."""
    problems: list[str] = []
    for case in cases:
        missing = [g for g in case.gold_ids if g not in documents]
        problems += [f"{case.id}: gold document {g} is not in the corpus" for g in missing]
        texts = [documents[g] for g in case.gold_ids if g in documents]
        for fact in case.facts:
            if not any(has_spelling(t, fact) for t in texts):
                problems.append(f"{case.id}: fact {list(fact)} occurs in none of its gold abstracts")
    return problems
