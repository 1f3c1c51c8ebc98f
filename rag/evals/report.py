"""Show and save an eval run: a rich table, a JSON result, a Markdown report with charts per type."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

from rag.evals.evaluators import Evaluator
from rag.evals.gate import GateReport
from rag.evals.runner import RunResult

DEFAULT_RESULTS = Path("eval") / "results"
_TYPE_ABBREV = {"lookup": "lookup", "which_paper": "which", "paraphrase": "para", "multi_doc": "multi",
                "numeric": "num", "unanswerable": "unans", "false_premise": "f.prem"}


def _fmt(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _groups(result: RunResult) -> list[tuple[str, dict[str, Any]]]:
    s = result.summary
    out = [("all", s["overall"])]
    out += [(_TYPE_ABBREV.get(t, t), g) for t, g in s["by_type"].items()]
    out += [(lang, g) for lang, g in s["by_lang"].items()]
    return out


def metrics_table(result: RunResult, evaluators: Sequence[Evaluator] | None = None) -> Table:
    """A table of every metric overall, per question type and per language."""
    evaluators = evaluators or result.evaluators
    meta = result.meta
    title = (f"rag eval · {meta['mode']} · k={meta['k']} · {meta['n_questions']} questions · "
             f"settings {meta['settings_hash']}" + (f" · prompt {meta['prompt_hash']}" if meta.get("prompt_hash") else ""))
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    groups = _groups(result)
    for name, g in groups:
        table.add_column(f"{name}\n({g['n']})", justify="right")
    for e in evaluators:
        arrow = "↑" if e.higher_is_better else "↓"
        table.add_row(f"{e.short or e.name} {arrow}", *[_fmt(g["metrics"][e.name]["value"]) for _, g in groups])
    table.add_row("p50 ms", *[_fmt(g["latency_ms"]["p50"], 0) for _, g in groups])
    table.add_row("p95 ms", *[_fmt(g["latency_ms"]["p95"], 0) for _, g in groups])
    table.add_row("failures", *[str(g["failures"]) for _, g in groups])
    return table


def usage_line(result: RunResult) -> str:
    """Tokens and cost, when the run used an LLM."""
    t = result.summary["tokens"]
    if not t["total"]:
        return f"tokens: none ({result.meta['mode']} mode) · model {result.meta['model']}"
    cost = result.summary["cost_usd"]
    cost_s = f"${cost:.4f} (estimated list price)" if cost is not None else "cost unknown for this model"
    return f"tokens: {t['prompt']} prompt + {t['completion']} completion · {cost_s} · model {result.meta['model']}"


def print_run(result: RunResult, console: Console) -> None:
    """Print the metrics table and the usage line."""
    console.print(metrics_table(result))
    console.print(usage_line(result))
    failed = [c for c in result.cases if not c.passed]
    console.print(f"{len(result.cases) - len(failed)}/{len(result.cases)} questions passed "
                  f"in {result.meta['seconds']:.1f} s")


def _signed(v: float | None) -> str:
    return "–" if v is None else f"{v:+.3f}"


def print_gate(report: GateReport, console: Console, *, show_all_groups: bool = False) -> None:
    """Print each metric's change against the baseline, flipped questions, and the verdict."""
    for note in report.notes:
        console.print(f"note: {note}")
    table = Table(title=f"change vs baseline (tolerance {report.tolerance:g})", title_justify="left")
    for col in ("scope", "metric", "baseline", "now", "change", "allowed", ""):
        table.add_column(col, justify="right" if col in ("baseline", "now", "change", "allowed") else "left")
    for c in report.changes:
        moved = c.delta is not None and abs(c.delta) >= report.tolerance
        if c.scope != "overall" and not (show_all_groups or moved or c.regressed):
            continue
        flag = "REGRESSED" if c.regressed else ("gated" if c.gated else "")
        allowed = "" if c.allowed is None else f"{'-' if c.higher_is_better else '+'}{c.allowed:.3f}"
        table.add_row(c.scope, c.label, _fmt(c.baseline, 3), _fmt(c.current, 3), _signed(c.delta), allowed, flag)
    console.print(table)
    if report.flips:
        console.print(f"{len(report.flips)} question(s) flipped:")
        for f in report.flips:
            word = {True: "pass", False: "fail", None: "absent"}
            why = f"  ({'; '.join(f.checks)[:160]})" if f.checks else ""
            console.print(f"  {f.id}: {word[f.before]} -> {word[f.after]}{why}", markup=False)
    else:
        console.print("no question flipped")
    if report.ok:
        console.print("check passed")
    else:
        names = ", ".join(c.metric for c in report.regressions)
        console.print(f"check FAILED: {len(report.regressions)} metric(s) fell by more than their allowed drop "
                      f"(tolerance {report.tolerance:g}, or one question's worth): {names}")


def result_stem(result: RunResult) -> str:
    """A file name stem from the run's time, mode, k and settings hash."""
    stamp = re.sub(r"[^0-9T]", "", result.meta["created"].split("+")[0])
    return f"{stamp}-{result.meta['mode']}-k{result.meta['k']}-{result.meta['settings_hash']}"


def write_json(result: RunResult, directory: str | Path = DEFAULT_RESULTS, gate: GateReport | None = None) -> Path:
    """Write the full run (and gate report) as JSON into `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    payload = result.to_dict()
    if gate is not None:
        payload["gate"] = gate.to_dict()
    path = d / f"{result_stem(result)}.json"
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def bar(value: float | None, width: int = 20) -> str:
    """A text bar for a value in [0, 1]."""
    if value is None:
        return "·" * width
    full = round(max(0.0, min(1.0, value)) * width)
    return "█" * full + "░" * (width - full)


def _cell(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def markdown_report(result: RunResult, gate: GateReport | None = None,
                    evaluators: Sequence[Evaluator] | None = None) -> str:
    """A Markdown report: run stamp, metrics, a bar chart per type, one row per question."""
    evaluators = evaluators or result.evaluators
    meta, s = result.meta, result.summary
    lines = [f"# rag eval report — {meta['mode']} mode, k={meta['k']}", ""]
    lines += [f"- {key}: `{meta.get(key)}`" for key in
              ("created", "model", "settings_hash", "prompt_hash", "embed_model", "questions", "questions_hash")]
    lines += [f"- {usage_line(result)}", f"- latency p50 {_fmt(s['overall']['latency_ms']['p50'], 0)} ms, "
              f"p95 {_fmt(s['overall']['latency_ms']['p95'], 0)} ms", ""]
    groups = _groups(result)
    lines += ["## Metrics", "", "| metric | " + " | ".join(f"{n} ({g['n']})" for n, g in groups) + " |",
              "|---|" + "---:|" * len(groups)]
    for e in evaluators:
        arrow = "↑" if e.higher_is_better else "↓"
        lines.append(f"| {e.label} {arrow} | " + " | ".join(_fmt(g["metrics"][e.name]["value"]) for _, g in groups) + " |")
    lines += ["", "## Per type", ""]
    for metric in ("passed", "fact_recall", "recall_at_k", "citation_recall"):
        e = next(x for x in evaluators if x.name == metric)
        lines += [f"**{e.label}**", "", "```"]
        for t, g in s["by_type"].items():
            v = g["metrics"][metric]["value"]
            lines.append(f"{t:<14} {bar(v)} {_fmt(v)}  (n={g['metrics'][metric]['n']})")
        lines += ["```", ""]
    if gate is not None:
        lines += ["## Against the baseline", "", f"Verdict: {'passed' if gate.ok else 'FAILED'} "
                  f"(tolerance {gate.tolerance:g}).", ""]
        lines += [f"- note: {n}" for n in gate.notes]
        lines += [f"- {c.label}: {_fmt(c.baseline, 3)} → {_fmt(c.current, 3)} ({_signed(c.delta)})"
                  + (" **REGRESSED**" if c.regressed else "") for c in gate.changes if c.scope == "overall"]
        lines += [f"- flipped {f.id}: {f.before} → {f.after}" for f in gate.flips]
        lines.append("")
    lines += ["## Questions", "", "| id | type | lang | ok | question | answer | citations | failed checks |",
              "|---|---|---|---|---|---|---|---|"]
    for c in result.cases:
        a = c.answer or {}
        cites = ", ".join(f"[{x['n']}] {x['label']}" for x in a.get("citations", []))
        answer = "(refused) " + a.get("text", "") if a.get("refused") else a.get("text", "")
        lines.append(f"| {c.case.id} | {c.case.type} | {c.case.lang} | {'✓' if c.passed else '✗'} | "
                     f"{_cell(c.case.question)} | {_cell(answer)} | {_cell(cites, 200)} | "
                     f"{_cell('; '.join(c.failed_checks()), 300)} |")
    return "\n".join(lines) + "\n"


def write_markdown(result: RunResult, path: str | Path, gate: GateReport | None = None) -> Path:
    """Write the Markdown report to `path`."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(markdown_report(result, gate), encoding="utf-8")
    return p
