"""Where an index keeps its files: one folder per index, one sub-folder per collection."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag.config import Settings
from rag.errors import IndexError_

CACHE_FILE = "embed_cache.sqlite"
LOCK_FILE = "ingest.lock"


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


def make_dir(path: Path) -> Path:
    """Create a folder of the index, turning an OS refusal into a one-line index error."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise IndexError_(f"cannot create the index folder {path}: {e.strerror or e}",
                          hint="set RAG_INDEX_DIR to a writable folder") from None
    return path
