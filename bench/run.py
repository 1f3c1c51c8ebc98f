"""Benchmark the pipeline on the seed corpus and print a table of figures.

Measures, in one run: first ingest (wall time, tokens/s) beside the raw embedding engine's
tokens/s on the same chunks, unchanged re-ingest, retrieval latency p50/p95 in one process,
warm answer time, and cold `rag ask` wall time beside a bare llama-index Chroma import.
Uses a temporary index; never touches `.rag/`. Run: `make bench` or `.venv/bin/python bench/run.py`.
`--scale` adds bench/scale.py (retrieval p50/p95, start-up and peak RSS at 35, 10,000 and
100,000 documents; `make bench-scale`), `--engines` adds bench/engines.py (tokens/s per
embedding backend).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "bench"))

from common import QUESTIONS, pct  # noqa: E402


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", action="store_true", help="Also measure retrieval at 35 / 10k / 100k documents.")
    ap.add_argument("--engines", action="store_true", help="Also measure tokens/s per embedding backend.")
    ap.add_argument("--minilm-python", default=None, help="With --engines: a venv python with torch MiniLM.")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rag-bench-"))
    env = {**os.environ, "RAG_INDEX_DIR": str(tmp / "index"), "RAG_DATA_DIR": str(ROOT / "data")}
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    rows: list[tuple[str, str]] = []
    try:
        t_ingest, out = wall([str(BIN / "rag"), "ingest", "-q", "--json"], env)
        report = json.loads(out)
        rows.append(("first ingest, wall (35 docs)", f"{t_ingest:.2f} s"))
        rows.append(("ingest tokens/s (in-process time)", f"{report['tokens_embedded'] / report['seconds']:.0f}"))
        rows.append(("ingest tokens/s (wall, incl. start-up)", f"{report['tokens_embedded'] / t_ingest:.0f}"))

        os.environ.update({"RAG_INDEX_DIR": env["RAG_INDEX_DIR"], "RAG_DATA_DIR": env["RAG_DATA_DIR"]})
        from rag import Index
        from rag.clean import clean
        from rag.config import get_settings

        settings = get_settings()
        index = Index.open(settings)
        texts = [clean(c.text) for c in index.store.scan(text=True)]
        embedder = index.embedder
        tokens = sum(embedder.count_tokens(t) for t in texts)
        t = time.perf_counter()
        for i in range(0, len(texts), 8):
            embedder.embed_passages(texts[i : i + 8])
        raw = tokens / (time.perf_counter() - t)
        rows.append(("raw engine tokens/s, same chunks", f"{raw:.0f}"))
        rows.append(("ingest / raw engine throughput", f"{report['tokens_embedded'] / report['seconds'] / raw:.2f}x"))

        t_re, _ = wall([str(BIN / "rag"), "ingest", "-q"], env)
        rows.append(("unchanged re-ingest, wall", f"{t_re:.2f} s"))
        t_rb, out = wall([str(BIN / "rag"), "ingest", "-q", "--rebuild", "--json"], env)
        rb = json.loads(out)
        rows.append(("`ingest --rebuild`, embedding cache warm, wall",
                     f"{t_rb:.2f} s ({rb['chunks_embedded']} embedded, {rb['chunks_cached']} from cache)"))

        import rag

        retriever = index
        retriever.retrieve(QUESTIONS[0])
        lat = []
        for _ in range(5):
            for q in QUESTIONS:
                t = time.perf_counter()
                retriever.retrieve(q)
                lat.append((time.perf_counter() - t) * 1000)
        rows.append(("retrieval p50 / p95 (in process)", f"{pct(lat, 50):.1f} / {pct(lat, 95):.1f} ms"))
        warm = []
        for q in QUESTIONS:
            t = time.perf_counter()
            rag.answer(q, index=index)
            warm.append((time.perf_counter() - t) * 1000)
        rows.append(("warm offline answer p50 / max", f"{pct(warm, 50):.0f} / {max(warm):.0f} ms"))

        colds = [wall([str(BIN / "rag"), "ask", QUESTIONS[1]], env)[0] for _ in range(3)]
        imports = [wall([sys.executable, "-c", "import llama_index.vector_stores.chroma"], env)[0] for _ in range(3)]
        cold, imp = statistics.median(colds), statistics.median(imports)
        rows.append(("cold `rag ask` wall (median of 3)", f"{cold:.2f} s"))
        rows.append(("bare `import llama_index.vector_stores.chroma`", f"{imp:.2f} s"))
        rows.append(("cold ask / bare import", f"{cold / imp:.2f}x"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if args.scale:
        import scale

        rows.extend(scale.rows(scale.run([35, 10_000, 100_000])))

    width = max(len(k) for k, _ in rows)
    print(f"{'measure'.ljust(width)}  value")
    for k, v in rows:
        print(f"{k.ljust(width)}  {v}")
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end)")
    if args.engines:
        subprocess.run([sys.executable, str(ROOT / "bench" / "engines.py")]
                       + (["--minilm-python", args.minilm_python] if args.minilm_python else []), check=True)


if __name__ == "__main__":
    main()
