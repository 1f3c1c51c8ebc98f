"""Metadata filters: `year=2025`, `venue=NeurIPS`, `author=Smith`, parsed once, applied everywhere.

A `Where` is one predicate over a document's metadata, used by both retrievers: the dense
one passes `chroma_where()` to Chroma (year and venue are stored in a form Chroma can match
exactly), and both keep only the chunks `matches()` accepts (the author test is a substring,
which Chroma's metadata filters cannot express). Fields combine with AND.

- `year`: equality with the record's year (stored as a number, so `2025` and `"2025"` agree).
- `venue`: equality ignoring case, spacing and a year inside the venue name, so `NeurIPS`
  matches `NeurIPS`, `neurips` and `NeurIPS 2025`.
- `author`: a case- and accent-insensitive substring of the authors string (`smith` matches
  `J. Smith` and `Goldsmith`; `muller` matches `Müller`).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, Iterable, Mapping, Union

from rag.errors import UsageError

FIELDS = ("year", "venue", "author")
USAGE = "--where takes FIELD=VALUE with FIELD one of year, venue, author (e.g. year=2025, venue=NeurIPS, author=Smith)"
_YEAR = re.compile(r"^\d{4}$")
_YEAR_IN_NAME = re.compile(r"(?<![\w])(?:19|20)\d{2}(?![\w])")


def fold(text: str | None) -> str:
    """Case-, accent- and spacing-insensitive form of a metadata string."""
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split())


def venue_key(venue: str | None) -> str:
    """The form a venue is compared in: folded, without a year ("NeurIPS 2025" -> "neurips")."""
    return " ".join(_YEAR_IN_NAME.sub(" ", fold(venue)).split())


def year_number(year: str | int | None) -> int | None:
    """A four-digit year as a number (what the store keeps), else None."""
    text = str(year).strip() if year is not None else ""
    return int(text) if _YEAR.match(text) else None


@dataclass(frozen=True)
class Where:
    """A metadata filter; empty fields do not constrain."""

    year: int | None = None
    venue: str | None = None
    author: str | None = None

    # -- building ---------------------------------------------------------------------------------
    @classmethod
    def parse(cls, value: "WhereLike") -> "Where | None":
        """Build a filter from a mapping, `FIELD=VALUE` strings, or a `Where`; None/empty -> None.

        A bad field name or value is a `UsageError` naming the accepted form.
        """
        if value is None or isinstance(value, Where):
            return value if value is None or not value.empty else None
        pairs: list[tuple[str, Any]] = []
        if isinstance(value, Mapping):
            pairs = [(str(k), v) for k, v in value.items()]
        else:
            items = [value] if isinstance(value, str) else list(value)
            for item in items:
                for part in _split_terms(str(item)):
                    key, sep, val = part.partition("=")
                    if not sep or not key.strip() or not val.strip():
                        raise UsageError(f"{USAGE}; got {part.strip()!r}")
                    pairs.append((key, val))
        out: dict[str, Any] = {}
        for key, val in pairs:
            name = key.strip().lower()
            name = {"authors": "author", "years": "year", "venues": "venue"}.get(name, name)
            if name not in FIELDS:
                raise UsageError(f"unknown filter field {key.strip()!r}: {USAGE}")
            if name in out:
                raise UsageError(f"filter field {name} given twice (fields combine with AND)")
            text = str(val).strip().strip("\"'").strip()
            if not text:
                raise UsageError(f"{USAGE}; got an empty value for {name}")
            if name == "year":
                number = year_number(text)
                if number is None:
                    raise UsageError(f"year must be four digits, like year=2025; got {text!r}")
                out[name] = number
            else:
                out[name] = text
        where = cls(**out)
        return None if where.empty else where

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    # -- applying ---------------------------------------------------------------------------------
    def chroma_where(self) -> dict[str, Any] | None:
        """The part of the filter Chroma can apply itself (year, venue), as a `where` clause.

        The year is matched as a number or as a string: indexes built before years were
        stored as numbers hold strings.
        """
        clauses: list[dict[str, Any]] = []
        if self.year is not None:
            clauses.append({"$or": [{"year": self.year}, {"year": str(self.year)}]})
        if self.venue is not None:
            clauses.append({"venue_key": venue_key(self.venue)})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def matches(self, *, year: str | None, venue: str | None, authors: str | None) -> bool:
        """True when a document with this metadata passes the filter."""
        return self.matches_keys(year_number(year), venue_key(venue), fold(authors))

    def matches_keys(self, year: int | None, venue: str, authors: str) -> bool:
        """`matches` on keys already computed: a numeric year, `venue_key()` and `fold()`ed authors."""
        want_venue, want_author = self._keys
        if self.year is not None and year != self.year:
            return False
        if want_venue is not None and venue != want_venue:
            return False
        if want_author is not None and want_author not in authors:
            return False
        return True

    @cached_property
    def _keys(self) -> tuple[str | None, str | None]:
        """The venue and author as compared (computed once: a catalog tests every chunk)."""
        return (venue_key(self.venue) if self.venue is not None else None,
                fold(self.author) if self.author is not None else None)

    def describe(self) -> str:
        """`year=2025 venue=NeurIPS`: the filter as the user would type it."""
        return " ".join(f"{f}={getattr(self, f)}" for f in FIELDS if getattr(self, f) is not None)

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in FIELDS if getattr(self, f) is not None}


WhereLike = Union[Where, Mapping[str, Any], str, Iterable[str], None]

# "at NeurIPS", "from the ICLR 2024 proceedings": the words joining a venue to the question go with it.
_VENUE_LEAD = r"(?:\b(?:at|from|in|of|to)\s+(?:the\s+)?)?"
_VENUE_YEAR = r"(?:\s*(?P<year>(?:19|20)\d{2})(?!\d)|\s*'(?P<short>\d{2})(?!\d))?"


def scope_in_question(question: str, venues: Iterable[str]) -> tuple[str, Where | None]:
    """The venue (and year) a question names, as a filter, and the question without them.

    "Which NeurIPS 2025 paper proposes X?" asks among the NeurIPS 2025 papers: the corpus's own
    venues (`venues`: `venue_key`s of the indexed documents), written as a conference's acronym
    (two or more capitals: "NeurIPS", "ICLR", not "science"), name a scope, not a paper or a topic
    the abstracts would mention. Returns (question, None) when it names none.
    """
    for key in sorted({v for v in venues if v}, key=len, reverse=True):
        words = r"\s+".join(re.escape(w) for w in key.split())
        for m in re.finditer(rf"{_VENUE_LEAD}(?<![\w-])(?P<venue>{words})(?![\w-]){_VENUE_YEAR}", question, re.I):
            if sum(c.isupper() for c in m.group("venue")) < 2:
                continue
            year = m.group("year") or (f"20{m.group('short')}" if m.group("short") else None)
            rest = " ".join((question[:m.start()] + " " + question[m.end():]).split())
            rest = re.sub(r"\s+([?？.,;:!])", r"\1", rest)
            return rest or question, Where(venue=m.group("venue"), year=int(year) if year else None)
    return question, None


def _split_terms(text: str) -> list[str]:
    """`year=2025 author=Smith` or `year=2025, author=Smith` -> two terms (a value may hold spaces)."""
    starts = [m.start() for m in re.finditer(r"(?:^|[\s,;]+)(?=[A-Za-z_]+\s*=)", text)]
    if not starts:
        return [text] if text.strip() else []
    starts = [0] + starts[1:] if starts[0] != 0 else starts
    bounds = starts + [len(text)]
    terms = [text[a:b].strip(" \t,;") for a, b in zip(bounds, bounds[1:])]
    head = text[: starts[0]].strip(" \t,;")
    return ([head] if head else []) + [t for t in terms if t]
