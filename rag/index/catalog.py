"""The filter catalog: every chunk's year, venue key and authors key, saved beside BM25.

Filters need to know which chunks a predicate admits: BM25 knows no metadata, and Chroma
cannot test an author substring. Reading every chunk's metadata back from Chroma costs
seconds at 100,000 chunks, so the catalog is written at the end of every ingest, from the
same scan of the store that rebuilds BM25, and stamped with the BM25 index's version: it
describes exactly the chunks BM25 does. A missing or stale one (an index built before
filters existed) is rebuilt from the store on first use.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable

from rag.index.filters import Where, fold, venue_key, year_number
from rag.index.records import StoredChunk


@dataclass
class Catalog:
    """Filter keys of every stored chunk, in the order of `ids`."""

    version: int | None
    ids: list[str] = field(default_factory=list)
    years: list[int | None] = field(default_factory=list)
    venues: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, chunks: Iterable[StoredChunk], version: int | None) -> "Catalog":
        cat = cls(version)
        for c in chunks:
            cat.add(c)
        return cat

    def add(self, c: StoredChunk) -> None:
        self.ids.append(c.id)
        self.years.append(year_number(c.year))
        self.venues.append(venue_key(c.venue))
        self.authors.append(fold(c.authors))
        self.__dict__.pop("venue_keys", None)  # a chunk added after the venues were read

    @cached_property
    def venue_keys(self) -> frozenset[str]:
        """The venues the stored documents name (as `venue_key`s); read once per catalog, not per question."""
        return frozenset(v for v in self.venues if v)

    def matching(self, where: Where) -> frozenset[str]:
        """Ids of the chunks the filter admits."""
        return frozenset(cid for cid, y, v, a in zip(self.ids, self.years, self.venues, self.authors)
                         if where.matches_keys(y, v, a))

    def save(self, path: Path) -> None:
        """Write atomically (best effort: a read-only index folder only costs the next reader a scan)."""
        data = {"version": self.version, "ids": self.ids, "year": self.years, "venue": self.venues,
                "authors": self.authors}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)


def load(path: Path, version: int | None) -> Catalog | None:
    """The saved catalog if it was built for this BM25 version, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != version or version is None:
            return None
        cat = Catalog(version, list(data["ids"]), list(data["year"]), list(data["venue"]), list(data["authors"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    lengths = {len(cat.ids), len(cat.years), len(cat.venues), len(cat.authors)}
    return cat if len(lengths) == 1 else None
