"""The English engines (rag.index.minilm_onnx, rag.index.mpnet_onnx) on real abstracts: speed and
peak memory per batch size.

    .venv/bin/python bench/minilm_engine.py [--model minilm|mpnet|mpnet-float32] [--n 2000] [--batch-tokens 512,1024,2048,8192]
                                            [--json out.json]

Each batch size runs in a fresh worker process of this interpreter (so peak RSS is its own): load
the engine, embed the first N abstracts of ../shared/corpora/ml-abstracts-10k.jsonl.gz (each cut to
the model's window, 256 tokens for MiniLM and 384 for mpnet, as at ingest, where one vector per chunk is computed) in one call, after a
warm-up call on 8 of them. Reported: load seconds, embed seconds, tokens/s, peak RSS (ru_maxrss),
and the load average around the run (other work on the 2 cores slows every figure). One run.
`mpnet` is the retriever's engine (int8 matrix products); `mpnet-float32` runs every layer in float32.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts-10k.jsonl.gz"


def abstracts(n: int) -> list[str]:
    out = []
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("abstract"):
                out.append(row["abstract"])
            if len(out) == n:
                break
    return out


def worker(n: int, batch_tokens: int, model_name: str = "minilm") -> dict:
    import resource
    import time

    sys.path.insert(0, str(ROOT))
    from rag.index.minilm_onnx import MiniLMOnnx
    from rag.index.mpnet_onnx import MPNetOnnx, locate

    texts = abstracts(n)
    engine = {"minilm": MiniLMOnnx, "mpnet": MPNetOnnx,
              "mpnet-float32": lambda **kw: MPNetOnnx(int8=False, **kw)}[model_name]
    if model_name.startswith("mpnet"):
        locate()  # unpacked once into the model cache; not part of the load time
    t0 = time.perf_counter()
    model = engine(batch_tokens=batch_tokens)
    t1 = time.perf_counter()
    model.embed(texts[:8])
    tokens = sum(len(ids) for ids in model.token_ids(texts))
    t2 = time.perf_counter()
    model.embed(texts)
    t3 = time.perf_counter()
    return {"model": model_name, "batch_tokens": batch_tokens, "texts": len(texts), "tokens": tokens, "load_s": round(t1 - t0, 2),
            "embed_s": round(t3 - t2, 1), "tokens_per_s": round(tokens / (t3 - t2)),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["minilm", "mpnet", "mpnet-float32"], default="minilm")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--batch-tokens", default="512,1024,2048,8192")
    parser.add_argument("--json")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.n, args.worker, args.model)))
        return
    rows = []
    for bt in (int(x) for x in args.batch_tokens.split(",")):
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--model", args.model, "--n", str(args.n), "--worker", str(bt)],
                             check=True, capture_output=True, text=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        row["load"] = f"{load:.2f}-{os.getloadavg()[0]:.2f}"
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\n{'batch tokens':>12} {'texts':>6} {'tokens':>9} {'load s':>7} {'embed s':>8} {'tok/s':>7} {'peak MB':>8}  load")
    for r in rows:
        print(f"{r['batch_tokens']:>12} {r['texts']:>6} {r['tokens']:>9} {r['load_s']:>7} {r['embed_s']:>8} "
              f"{r['tokens_per_s']:>7} {r['peak_rss_mb']:>8}  {r['load']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
