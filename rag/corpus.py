"""Read abstracts from files, clean them and de-duplicate them into documents.

Formats: `.txt` (blank-line-separated paragraphs), `.jsonl`, `.json` and `.csv` with an
`abstract` (or `text`) field and optional `title`, `authors` (a string or a list), `url`,
`year`, `venue`, `id`. A `.txt` paragraph may open with a title line (`Title: ...` or a
Markdown heading `# ...`) followed by `Authors:`/`Year:`/`Venue:`/`URL:` lines.
Bad files and lines are reported as `Problem`s and skipped; good records are still read.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from rag.clean import clean, normalize
from rag.errors import UsageError
from rag.labels import make_label
from rag.types import Document, Problem

SUPPORTED = (".txt", ".jsonl", ".json", ".csv")
MAX_FILE_BYTES = 200 * 1024 * 1024
# Paragraphs shorter than this (in words) are headers such as "NeurIPS 2025 Papers", not abstracts.
MIN_ABSTRACT_WORDS = 12
_META_FIELDS = ("title", "authors", "url", "year", "venue")


@dataclass
class Record:
    """One abstract as read from one place in one file."""

    text: str
    source: str
    line: int | None = None
    meta: dict[str, str] = field(default_factory=dict)


@dataclass
class Corpus:
    """Unique documents plus what was skipped and which files were read."""

    documents: list[Document]
    problems: list[Problem]
    files: list[str]


def doc_id(text: str) -> str:
    """Stable content hash: the same abstract gets the same id wherever it comes from."""
    key = normalize(text).casefold()
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def is_header(paragraph: str) -> bool:
    """True for short title lines such as `NeurIPS 2025 Papers` or `NeurIPS 2025 论文列表`."""
    words = paragraph.split()
    cjk = len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff]", paragraph))
    return len(words) < MIN_ABSTRACT_WORDS and cjk < 40


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise ValueError("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"not valid UTF-8 (byte {e.start})") from None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# The first line of a .txt paragraph may be its title; metadata lines may follow it.
_HEADING = re.compile(r"^#{1,6}\s+(?P<value>\S.*?)\s*#*\s*$")
_FIELD_LINE = re.compile(r"^(?P<key>title|authors?|year|venue|url)\s*:\s*(?P<value>.*\S)\s*$", re.I)
_ABSTRACT_LABEL = re.compile(r"^abstract\s*[:.]\s*", re.I)


def split_header(paragraph: str) -> tuple[dict[str, str], str]:
    """Split a paragraph into its metadata lines and its abstract.

    Metadata is read only from the paragraph's opening lines, and only when the first is a
    title (`Title: ...` or `# ...`): a line such as "Year: 2025" inside an abstract is text.
    """
    lines = paragraph.splitlines()
    first = lines[0].strip() if lines else ""
    heading, field = _HEADING.match(first), _FIELD_LINE.match(first)
    if not heading and not (field and field.group("key").lower() == "title"):
        return {}, paragraph
    meta = {"title": (heading or field).group("value").strip()}
    body_start = 1
    for line in lines[1:]:
        m = _FIELD_LINE.match(line.strip())
        if not m:
            break
        key = m.group("key").lower()
        meta["authors" if key.startswith("author") else key] = m.group("value").strip()
        body_start += 1
    body = _ABSTRACT_LABEL.sub("", "\n".join(lines[body_start:]).strip())
    return meta, body


# A file's title naming a venue and a year: "NeurIPS 2025 Papers", "ICLR 2024 accepted abstracts",
# "NeurIPS 2025 论文列表". The venue is a conference's acronym (two or more capitals), so a title such as
# "Reading list 2024" names none.
_FILE_VENUE = re.compile(r"^\s*(?P<venue>(?=[\w&-]*[A-Z][\w&-]*[A-Z])[A-Za-z][\w&-]*)\s*'?\s*(?P<year>(?:19|20)\d{2})(?!\d)")


def file_venue(header: str) -> dict[str, str]:
    """The venue and year a file's title line names ({} when it names none)."""
    m = _FILE_VENUE.match(header)
    return {"venue": m.group("venue"), "year": m.group("year")} if m else {}


def parse_txt(text: str, source: str) -> Iterator[Record]:
    """Yield one record per blank-line-separated paragraph that is not a header.

    A title paragraph opening the file that names a venue and a year ("NeurIPS 2025 Papers") gives
    them to every abstract of the file that does not state its own.
    """
    shared: dict[str, str] = {}
    for n, m in enumerate(re.finditer(r"(?:[^\n]|\n(?![ \t\r]*\n))+", text)):
        meta, body = split_header(m.group(0).strip())
        if n == 0 and not meta and is_header(body):
            shared = file_venue(body)
        if body and not is_header(body):
            meta = {**shared, **meta}
            meta = {k: v for k, v in ((k, normalize_field(k, v)) for k, v in meta.items()) if v}
            yield Record(text=body, source=source, line=_line_of(text, m.start()), meta=meta)


def _author_names(value: object) -> list[str]:
    """Author names from a list (of strings or {"name": ...} objects) or a string."""
    if isinstance(value, (list, tuple)):
        names = [str(v.get("name") or "") if isinstance(v, dict) else str(v) for v in value]
        return [" ".join(n.split()) for n in names if n and n.strip()]
    text = " ".join(str(value).split())
    if not text:
        return []
    parts = re.split(r"\s*;\s*", text) if ";" in text else re.split(r"\s*,\s*|\s+and\s+|\s*&\s*", text)
    return [p for p in parts if p]


def first_author(authors: str | None) -> str | None:
    """The first name in an authors string ("A. Smith, B. Jones" -> "A. Smith")."""
    names = _author_names(authors or "")
    return names[0] if names else None


def normalize_field(key: str, value: object) -> str | None:
    """One metadata value as stored: whitespace collapsed, authors joined, years as four digits."""
    if value is None:
        return None
    if key == "authors":
        if isinstance(value, (list, tuple)):
            return ", ".join(_author_names(value)) or None
        return " ".join(str(value).split()) or None
    if key == "year":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        m = re.match(r"^(\d{4})(?:\b|$)", text)  # "2025", "2025-06-01"
        return m.group(1) if m else (text or None)
    text = " ".join(str(value).split())
    return text or None


def _record_from_obj(obj: object, source: str, line: int | None, problems: list[Problem]) -> Record | None:
    if not isinstance(obj, dict):
        problems.append(Problem(source, "expected a JSON object", line))
        return None
    body = obj.get("abstract") or obj.get("text")
    if not isinstance(body, str) or not body.strip():
        problems.append(Problem(source, "no `abstract` or `text` field", line))
        return None
    meta = {k: v for k, v in ((k, normalize_field(k, obj.get(k))) for k in _META_FIELDS) if v}
    if obj.get("id") not in (None, ""):
        meta["external_id"] = str(obj["id"])
    return Record(text=body.strip(), source=source, line=line, meta=meta)


def _json_problem(e: json.JSONDecodeError, *, with_line: bool) -> str:
    """Describe a JSON error in whole words, with where it is ("... starting at" needs its column)."""
    msg = e.msg[:1].lower() + e.msg[1:]
    if msg.endswith(" at"):
        msg = msg[: -len(" at")]
    where = f"line {e.lineno} column {e.colno}" if with_line else f"column {e.colno}"
    cut = msg.startswith("unterminated") or e.pos >= len(e.doc.rstrip())
    ended = " (the text ends too early: cut short?)" if cut else ""
    return f"malformed JSON: {msg} at {where}{ended}"


def parse_jsonl(text: str, source: str, problems: list[Problem]) -> Iterator[Record]:
    for i, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            problems.append(Problem(source, _json_problem(e, with_line=False), i))
            continue
        rec = _record_from_obj(obj, source, i, problems)
        if rec:
            yield rec


def parse_json(text: str, source: str, problems: list[Problem]) -> Iterator[Record]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(Problem(source, _json_problem(e, with_line=True), e.lineno))
        return
    items = data if isinstance(data, list) else data.get("papers", data.get("documents")) if isinstance(data, dict) else None
    if items is None and isinstance(data, dict):
        items = [data]
    if not isinstance(items, list):
        problems.append(Problem(source, "expected a list of objects"))
        return
    for i, obj in enumerate(items, start=1):
        rec = _record_from_obj(obj, source, None, problems)
        if rec:
            rec.meta.setdefault("item", str(i))
            yield rec


def parse_csv(text: str, source: str, problems: list[Problem]) -> Iterator[Record]:
    try:
        reader = csv.DictReader(io.StringIO(text))
        fields = [f.strip().lower() for f in reader.fieldnames or []]
        if "abstract" not in fields and "text" not in fields:
            problems.append(Problem(source, "CSV has no `abstract` or `text` column"))
            return
        for row in reader:
            obj = {(k or "").strip().lower(): v for k, v in row.items() if isinstance(v, str)}
            rec = _record_from_obj(obj, source, reader.line_num, problems)
            if rec:
                yield rec
    except csv.Error as e:
        problems.append(Problem(source, f"malformed CSV ({e})"))


def parse_file(path: Path, problems: list[Problem]) -> list[Record]:
    """Read one file; on failure record a problem and return what could be read."""
    source = str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            problems.append(Problem(source, f"file larger than {MAX_FILE_BYTES // 2**20} MiB"))
            return []
        text = _decode(path, path.read_bytes())
    except (OSError, ValueError) as e:
        problems.append(Problem(source, str(e) if isinstance(e, ValueError) else f"unreadable ({e.strerror})"))
        return []
    suffix = path.suffix.lower()
    if suffix == ".txt":
        return list(parse_txt(text, source))
    if suffix == ".jsonl":
        return list(parse_jsonl(text, source, problems))
    if suffix == ".json":
        return list(parse_json(text, source, problems))
    return list(parse_csv(text, source, problems))


def find_files(paths: Iterable[Path]) -> list[Path]:
    """Expand folders into supported files (sorted); a missing path is a usage error."""
    out: list[Path] = []
    for p in paths:
        if not p.exists():
            raise UsageError(f"no such file or folder: {p}")
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUPPORTED
                              and not any(part.startswith(".") for part in f.relative_to(p).parts)))
        else:
            out.append(p)
    return sorted(set(out), key=str)


def _nothing_supported(paths: list[Path], files: list[Path]) -> UsageError:
    """The error for paths that hold no file of a supported type, naming what was skipped."""
    skipped = list(files)
    for p in paths:
        if p.is_dir():
            skipped += sorted(f for f in p.rglob("*") if f.is_file()
                              and not any(part.startswith(".") for part in f.relative_to(p).parts))
    where = ", ".join(str(p) for p in paths)
    names = ", ".join(f.name for f in skipped[:5]) + (f", … ({len(skipped)} files)" if len(skipped) > 5 else "")
    what = f"skipped {names}" if skipped else "no files found"
    kinds = ", ".join(SUPPORTED[:-1]) + f" or {SUPPORTED[-1]}"
    return UsageError(f"nothing to ingest in {where}: no {kinds} file ({what})",
                      hint="abstracts are read from .txt (one per paragraph) or .jsonl/.json/.csv records with an "
                           "`abstract` field; convert other files first")


def read_corpus(paths: Iterable[Path]) -> Corpus:
    """Parse every file under `paths` into unique documents, remembering all their sources.

    Paths holding no file of a supported type are a usage error naming what was skipped.
    """
    problems: list[Problem] = []
    paths = list(paths)
    files = find_files(paths)
    if not any(f.suffix.lower() in SUPPORTED for f in files):
        raise _nothing_supported(paths, files)
    by_id: dict[str, Document] = {}
    for path in files:
        if path.suffix.lower() not in SUPPORTED:
            problems.append(Problem(str(path), f"unsupported file type (use {', '.join(SUPPORTED)})"))
            continue
        for rec in parse_file(path, problems):
            did = doc_id(rec.text)
            doc = by_id.get(did)
            if doc is None:
                meta = rec.meta
                doc = Document(
                    id=did,
                    text=normalize(rec.text),
                    label=make_label(rec.text, meta.get("title")),
                    title=meta.get("title"),
                    authors=meta.get("authors"),
                    url=meta.get("url"),
                    year=meta.get("year"),
                    venue=meta.get("venue"),
                    external_id=meta.get("external_id"),
                )
                by_id[did] = doc
            if rec.source not in doc.sources:
                doc.sources.append(rec.source)
    return Corpus(documents=list(by_id.values()), problems=problems, files=[str(f) for f in files])


__all__ = ["Corpus", "Record", "read_corpus", "doc_id", "clean", "first_author", "split_header"]
