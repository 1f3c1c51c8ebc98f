"""The scale setting: the seed abstracts hidden among N real abstracts, in a cached index.

`rag eval --extra-corpus PATH [--extra-limit N]` asks the same questions of an index holding the
seed corpus (the settings' `data_dir`) plus the first N records of PATH (JSONL, optionally
gzip-compressed). That index is built once into a cache folder named by a hash of everything
that decides its contents (the extra file's bytes, N, the seed files, the chunking and embedding
settings), so a re-run opens it in seconds and a changed input never reuses a stale one.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import rag
from rag.corpus import SUPPORTED, find_files
from rag.errors import UsageError
from rag.evals.runner import AnswerFn
from rag.index.paths import IndexPaths
from rag.index.sync import Progress

DEFAULT_EXTRA_LIMIT = 5000
CACHE_ENV = "RAG_EVAL_CACHE"
SCALE_FORMAT = 1  # bump when the cache folder's layout changes
_COMPLETE = "complete.json"
_EXTRA_FILE = "extra.jsonl"


class ScaleError(UsageError):
    """The extra corpus cannot be used (missing, malformed, or too short for --extra-limit)."""


@dataclass(frozen=True)
class ScaleSpec:
    """Which extra abstracts to hide the seed corpus among, and where the built index is cached."""

    corpus: Path
    limit: int = DEFAULT_EXTRA_LIMIT
    cache: Path | None = None  # default: cache_root()


@dataclass(frozen=True)
class ScaleIndex:
    """An opened scale index and how it came to be."""

    index: rag.Index
    folder: Path
    documents: int
    built_seconds: float | None  # None when the cached index was reused

    def meta(self, spec: ScaleSpec) -> dict[str, Any]:
        """What a result records about its scale setting."""
        return {"extra_corpus": str(spec.corpus), "extra_limit": spec.limit, "scale_documents": self.documents,
                "scale_index": str(self.folder), "scale_build_seconds": self.built_seconds}


def cache_root(override: Path | None = None) -> Path:
    """The folder holding scale indexes: the override, $RAG_EVAL_CACHE, or the user cache folder."""
    if override is not None:
        return override.expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "rag" / "eval-scale"


def _lines(path: Path) -> Iterator[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        yield from f


def read_extra(path: Path, limit: int) -> list[str]:
    """The first `limit` records of a JSONL(.gz) file as JSON lines; a bad record is a one-line error."""
    if limit < 1:
        raise ScaleError(f"--extra-limit must be at least 1, got {limit}")
    out: list[str] = []
    try:
        for n, line in enumerate(_lines(path), start=1):
            if len(out) == limit:
                break
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ScaleError(f"{path}:{n}: malformed JSON ({e.msg})") from None
            body = obj.get("abstract") or obj.get("text") if isinstance(obj, dict) else None
            if not isinstance(body, str) or not body.strip():
                raise ScaleError(f"{path}:{n}: expected a JSON object with an `abstract` field")
            out.append(json.dumps(obj, ensure_ascii=False))
    except FileNotFoundError:
        raise ScaleError(f"extra corpus not found: {path}") from None
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise ScaleError(f"cannot read extra corpus {path}: {e}") from None
    if len(out) < limit:
        raise ScaleError(f"{path} holds {len(out)} records, fewer than --extra-limit {limit}")
    return out


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def seed_files(settings: rag.Settings) -> list[Path]:
    """The corpus files of the seed setting (the settings' data folder)."""
    files = [f for f in find_files([Path(settings.data_dir)]) if f.suffix.lower() in SUPPORTED]
    if not files:
        raise ScaleError(f"no seed abstracts in {settings.data_dir}")
    return files


def cache_key(spec: ScaleSpec, settings: rag.Settings, seeds: list[Path]) -> str:
    """Hash of everything that decides what the scale index holds."""
    try:
        corpus = _digest(spec.corpus.read_bytes())
    except OSError as e:
        raise ScaleError(f"cannot read extra corpus {spec.corpus}: {e.strerror or e}") from None
    parts = {"format": SCALE_FORMAT, "corpus": corpus, "limit": spec.limit, "index": settings.index_key(),
             "seeds": sorted((f.name, _digest(f.read_bytes())) for f in seeds)}
    return _digest(json.dumps(parts, sort_keys=True).encode())[:16]


def index_settings(settings: rag.Settings, folder: Path) -> rag.Settings:
    """The run's settings pointed at the cache folder (always an embedded store, never a server)."""
    values = {**settings.model_dump(), "data_dir": str(folder / "data"), "index_dir": str(folder / "index"),
              "chroma_url": None}
    return rag.Settings(**values)


def _write_data(folder: Path, seeds: list[Path], extra: list[str]) -> None:
    data = folder / "data"
    (data / "seed").mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(seeds):
        shutil.copyfile(f, data / "seed" / f"{i:03d}-{f.name}")
    (data / _EXTRA_FILE).write_text("".join(line + "\n" for line in extra), encoding="utf-8")


def reuse_vectors(settings: rag.Settings, scale_settings: rag.Settings) -> bool:
    """Start the scale index's embedding cache as a copy of the default index's, when it has none.

    Vectors are keyed by model and text hash, so the copy only saves embedding the seed
    abstracts again; a cache that cannot be copied is skipped (the build embeds them).
    """
    src, dst = IndexPaths.of(settings).embed_cache, IndexPaths.of(scale_settings).embed_cache
    if dst.exists() or not src.exists():
        return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        with closing(sqlite3.connect(str(src))) as a, closing(sqlite3.connect(str(dst))) as b:
            a.backup(b)
    except sqlite3.Error:
        dst.unlink(missing_ok=True)
        return False
    return True


def open_scale_index(spec: ScaleSpec, settings: rag.Settings, *, progress: Progress | None = None) -> ScaleIndex:
    """Open the cached scale index for these inputs, building it first when there is none.

    An interrupted build resumes: embedded chunks are kept in the index's embedding cache.
    """
    seeds = seed_files(settings)
    folder = cache_root(spec.cache) / cache_key(spec, settings, seeds)
    s = index_settings(settings, folder)
    done = folder / _COMPLETE
    if done.exists():
        index = rag.Index.open(s)
        if index.stale_extras():  # built by an older version: add what it lacks (vectors of a newer ranking)
            index.ingest(progress=progress)
        return ScaleIndex(index, folder, int(json.loads(done.read_text(encoding="utf-8"))["documents"]), None)
    extra = read_extra(spec.corpus, spec.limit)
    _write_data(folder, seeds, extra)
    reuse_vectors(settings, s)
    started = time.perf_counter()
    index = rag.Index.create(s)
    report = index.ingest(progress=progress)
    seconds = round(time.perf_counter() - started, 1)
    done.write_text(json.dumps({"documents": report.documents, "seconds": seconds, "extra_corpus": str(spec.corpus),
                                "extra_limit": spec.limit}) + "\n", encoding="utf-8")
    return ScaleIndex(index, folder, report.documents, seconds)


def answerer(index: rag.Index) -> AnswerFn:
    """An answer function for `runner.run` that asks the scale index through the public API."""
    def answer(question: str, *, k: int, settings: rag.Settings) -> rag.Answer:
        return rag.answer(question, k=k, index=index, mode=settings.answer_mode)

    return answer
