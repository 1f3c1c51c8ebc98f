"""Warm offline answer latency with the seed abstracts hidden among 5,000 real ones, one run.

    .venv/bin/python bench/answer_scale.py [--extra-limit 5000] [--rounds 2] [--json out.json]

Opens the eval's cached scale index (`rag eval --extra-corpus`, rag/evals/scale.py; built first
when missing: about 8 minutes on two idle cores) and asks every question of eval/questions.jsonl
with `rag.answer(..., mode="offline")` in one process, after one warm-up question. Prints p50 /
p95 / max wall time per round, overall and by language (Chinese questions take the dictionary
translation and cross-lingual sentence scoring), and the slowest questions.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from common import pct  # noqa: E402

import rag  # noqa: E402
from rag.evals.dataset import load_dataset  # noqa: E402
from rag.evals.scale import ScaleSpec, open_scale_index  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts-10k.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--extra-limit", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=2, help="passes over the questions (default 2)")
    ap.add_argument("--json", help="also write every timing here")
    args = ap.parse_args()
    settings = rag.Settings(data_dir=str(ROOT / "data"))
    scale = open_scale_index(ScaleSpec(Path(args.corpus), args.extra_limit), settings)
    cases = load_dataset(ROOT / "eval" / "questions.jsonl").cases
    index = scale.index
    # Warm-up, one question per language: models, BM25, sentence vectors, the Chinese dictionary
    # (its first load, ~0.5 s, is a once-per-process cost).
    for lang in sorted({c.lang for c in cases}):
        rag.answer(next(c.question for c in cases if c.lang == lang), index=index, mode="offline")
    rows = []
    for rnd in range(args.rounds):
        for c in cases:
            t = time.perf_counter()
            rag.answer(c.question, index=index, mode="offline")
            rows.append({"round": rnd + 1, "id": c.id, "lang": c.lang, "ms": (time.perf_counter() - t) * 1000})
    print(f"{scale.documents} documents; {len(cases)} questions x {args.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    groups = [("all", rows)] + [(f"round {r + 1}", [x for x in rows if x["round"] == r + 1]) for r in range(args.rounds)]
    groups += [(lang, [x for x in rows if x["lang"] == lang]) for lang in sorted({x["lang"] for x in rows})]
    print(f"{'':<10} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, xs in groups:
        ms = [x["ms"] for x in xs]
        print(f"{name:<10} {len(ms):>5} {pct(ms, 50):>8.1f} {pct(ms, 95):>8.1f} {max(ms):>8.1f}")
    slow = sorted(rows, key=lambda x: -x["ms"])[:5]
    print("slowest:", ", ".join(f"{x['id']} {x['ms']:.0f} ms" for x in slow))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
