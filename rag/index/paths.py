"""Where an index keeps its files: one folder per index, one sub-folder per collection."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rag.config import Settings
from rag.errors import IndexError_

CACHE_FILE = "embed_cache.sqlite"
LOCK_FILE = "ingest.lock"
OPEN_LOCK_FILE = "open.lock"  # held while a process opens the Chroma store (its tables are created on open)
SOURCES_FILE = "sources.json"
READ_ONLY_HINT = ("questions still work; to change it, run `rag ingest` as its owner, or copy the folder "
                  "somewhere writable and set RAG_INDEX_DIR to the copy")


@dataclass(frozen=True)
class IndexPaths:
    """The files of the index named by a Settings object."""

    root: Path  # the index folder (RAG_INDEX_DIR)
    collection: str  # Chroma collection named by the chunking and embedding settings

    @classmethod
    def of(cls, settings: Settings) -> "IndexPaths":
        return cls(Path(settings.index_dir).expanduser(), settings.collection_name())

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def lexical(self) -> Path:
        return self.root / self.collection / "lexical"

    @property
    def catalog(self) -> Path:
        return self.root / self.collection / "catalog.json"

    @property
    def embed_cache(self) -> Path:
        return self.root / CACHE_FILE

    @property
    def lock(self) -> Path:
        return self.root / LOCK_FILE

    @property
    def sources(self) -> Path:
        """Every source file the index held after its last ingest (what `--rebuild` keeps)."""
        return self.root / SOURCES_FILE

    def check_root(self) -> None:
        """Raise a one-line index error when the index folder, or a folder above it, is a file."""
        for path in (self.root, *self.root.parents):
            if path.exists():
                if not path.is_dir():
                    what = "is a file" if path == self.root else f"is inside {path}, which is a file"
                    raise IndexError_(f"the index folder {self.root} (RAG_INDEX_DIR) {what}, not a folder",
                                      hint="set RAG_INDEX_DIR to a folder (it is created when missing)")
                return

    def writable(self) -> bool:
        """True when this process may change the index (its folder and Chroma's files)."""
        chroma = [self.chroma, self.chroma / "chroma.sqlite3"]
        if self.chroma.is_dir():
            chroma += [p for p in self.chroma.iterdir() if p.is_dir()]
        return all(os.access(p, os.W_OK) for p in [self.root, *chroma] if p.exists())


def read_only_error(root: Path, what: str, reason: str) -> IndexError_:
    """The error of a write refused because the index is read-only (permissions or mount)."""
    return IndexError_(f"the index in {root} is read-only: cannot write {what} ({reason})", hint=READ_ONLY_HINT)


def make_dir(path: Path) -> Path:
    """Create a folder of the index, turning an OS refusal into a one-line index error."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except PermissionError as e:
        raise IndexError_(f"cannot create the index folder {path}: {e.strerror or e}",
                          hint="set RAG_INDEX_DIR to a folder you can write") from None
    except OSError as e:
        raise IndexError_(f"cannot create the index folder {path}: {e.strerror or e}",
                          hint="set RAG_INDEX_DIR to a writable folder") from None
    return path
