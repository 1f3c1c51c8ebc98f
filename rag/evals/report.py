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


def detail_split(summary: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The split whose types and languages are detailed: test when present (it is never tuned on)."""
    splits = summary.get("splits") or {}
    if "test" in splits:
        return "test", splits["test"]
    if len(splits) == 1:
        name = next(iter(splits))
        return name, splits[name]
    return "all", summary


def _split_groups(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The whole set, then each split when there are several."""
    splits = summary.get("splits") or {}
    out = [("all", summary["overall"])]
    if len(splits) > 1:
        out += [(name, g["overall"]) for name, g in splits.items()]
    return out


def _detail_groups(groups: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Per question type, then per language."""
    out = [(_TYPE_ABBREV.get(t, t), g) for t, g in groups["by_type"].items()]
    return out + [(lang, g) for lang, g in groups["by_lang"].items()]


def _groups(result: RunResult) -> list[tuple[str, dict[str, Any]]]:
    s = result.summary
    return _split_groups(s) + _detail_groups(detail_split(s)[1])


def _title(meta: dict[str, Any]) -> str:
    where = f" · scale: {meta['scale_documents']} documents" if meta.get("setting") == "scale" else ""
    split = f" · split {meta['split']}" if meta.get("split", "all") != "all" else ""
    return (f"rag eval · {meta['mode']} · k={meta['k']} · {meta['n_questions']} questions{split}{where} · "
            f"settings {meta['settings_hash']}" + (f" · prompt {meta['prompt_hash']}" if meta.get("prompt_hash") else ""))


def metrics_table(result: RunResult, evaluators: Sequence[Evaluator] | None = None) -> Table:
    """A table of every metric on the whole set, per split, and per type and language of the detailed split."""
    evaluators = evaluators or result.evaluators
    name, _ = detail_split(result.summary)
    table = Table(title=_title(result.meta), title_justify="left",
                  caption=f"type and language columns: {name} split" if name != "all" else None,
                  caption_justify="left")
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


def wrong_paper_line(result: RunResult) -> str:
    """How many answers cited no gold paper, per split (the gate holds this at 0)."""
    splits = result.summary.get("splits") or {"all": result.summary}
    parts = [f"{name} {_count(groups['overall'], 'wrong_paper')}" for name, groups in splits.items()]
    return "wrong-paper answers (answered, no gold abstract cited): " + ", ".join(parts)


def print_run(result: RunResult, console: Console) -> None:
    """Print the metrics table, the wrong-paper count and the usage line."""
    console.print(metrics_table(result))
    console.print(wrong_paper_line(result))
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
        if not (c.gated or show_all_groups or moved or c.regressed):
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
        names = ", ".join(c.metric if c.scope == "overall" else f"{c.metric} ({c.scope})" for c in report.regressions)
        console.print(f"check FAILED: {len(report.regressions)} metric(s) fell by more than their allowed drop "
                      f"(tolerance {report.tolerance:g}, or one question's worth; wrong-paper answers must be 0): {names}")


def result_stem(result: RunResult) -> str:
    """A file name stem from the run's time, mode, k and settings hash (and split and scale, when set)."""
    meta = result.meta
    stamp = re.sub(r"[^0-9T]", "", meta["created"].split("+")[0])
    split = f"-{meta['split']}" if meta.get("split", "all") != "all" else ""
    scale = f"-scale{meta.get('extra_limit')}" if meta.get("setting") == "scale" else ""
    return f"{stamp}-{meta['mode']}-k{meta['k']}-{meta['settings_hash']}{split}{scale}"


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


def _md_table(groups: list[tuple[str, dict[str, Any]]], evaluators: Sequence[Evaluator]) -> list[str]:
    lines = ["| metric | " + " | ".join(f"{n} ({g['n']})" for n, g in groups) + " |", "|---|" + "---:|" * len(groups)]
    for e in evaluators:
        arrow = "↑" if e.higher_is_better else "↓"
        lines.append(f"| {e.label} {arrow} | " + " | ".join(_fmt(g["metrics"][e.name]["value"]) for _, g in groups) + " |")
    return lines + [""]


def _md_bars(by_type: dict[str, Any], evaluators: Sequence[Evaluator]) -> list[str]:
    lines: list[str] = []
    for metric in ("passed", "fact_recall", "recall_at_k", "citation_recall"):
        e = next(x for x in evaluators if x.name == metric)
        lines += [f"**{e.label}**", "", "```"]
        for t, g in by_type.items():
            v = g["metrics"][metric]["value"]
            lines.append(f"{t:<14} {bar(v)} {_fmt(v)}  (n={g['metrics'][metric]['n']})")
        lines += ["```", ""]
    return lines


def _md_gate(gate: GateReport) -> list[str]:
    lines = ["## Against the baseline", "", f"Verdict: {'passed' if gate.ok else 'FAILED'} "
             f"(tolerance {gate.tolerance:g}).", ""]
    lines += [f"- note: {n}" for n in gate.notes]
    lines += [f"- {c.scope} · {c.label}: {_fmt(c.baseline, 3)} → {_fmt(c.current, 3)} ({_signed(c.delta)})"
              + (" **REGRESSED**" if c.regressed else "") for c in gate.changes if c.gated]
    lines += [f"- flipped {f.id}: {f.before} → {f.after}" for f in gate.flips]
    return lines + [""]


def _md_questions(result: RunResult) -> list[str]:
    lines = ["## Questions", "", "| id | type | lang | split | ok | question | answer | citations | failed checks |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in result.cases:
        a = c.answer or {}
        cites = ", ".join(f"[{x['n']}] {x['label']}" for x in a.get("citations", []))
        answer = "(refused) " + a.get("text", "") if a.get("refused") else a.get("text", "")
        lines.append(f"| {c.case.id} | {c.case.type} | {c.case.lang} | {c.case.split} | {'✓' if c.passed else '✗'} | "
                     f"{_cell(c.case.question)} | {_cell(answer)} | {_cell(cites, 200)} | "
                     f"{_cell('; '.join(c.failed_checks()), 300)} |")
    return lines


def _count(group: dict[str, Any], metric: str) -> str:
    """`hits/n` for a 0/1 metric of a group."""
    m = group["metrics"].get(metric) or {}
    n = m.get("n") or 0
    return f"{round((m.get('value') or 0.0) * n)}/{n}"


def comparison_rows(seed: RunResult, scale: RunResult,
                    evaluators: Sequence[Evaluator] | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and rows comparing the two settings metric by metric, per split."""
    evaluators = evaluators or seed.evaluators

    def split_groups(r: RunResult) -> dict[str, dict[str, Any]]:
        return {n: g["overall"] for n, g in (r.summary.get("splits") or {"all": r.summary}).items()}

    a, b = split_groups(seed), split_groups(scale)
    names = [n for n in a if n in b]
    header = ["metric"] + [f"{n} {w}" for n in names for w in ("seed", "scale")]
    rows = []
    for e in evaluators:
        arrow = "↑" if e.higher_is_better else "↓"
        rows.append([f"{e.short or e.name} {arrow}"] + [_fmt(g[n]["metrics"][e.name]["value"]) for n in names
                                                       for g in (a, b)])
    rows.append(["wrong-paper count"] + [_count(g[n], "wrong_paper") for n in names for g in (a, b)])
    rows.append(["questions"] + [str(g[n]["n"]) for n in names for g in (a, b)])
    rows.append(["p50 ms"] + [_fmt(g[n]["latency_ms"]["p50"], 0) for n in names for g in (a, b)])
    return header, rows


def _documents(result: RunResult) -> str:
    return str(result.meta.get("scale_documents") or "the seed corpus")


def comparison_table(seed: RunResult, scale: RunResult) -> Table:
    """The seed and scale settings side by side, per split."""
    header, rows = comparison_rows(seed, scale)
    table = Table(title=f"seed vs scale: the same questions among {_documents(scale)} documents "
                        f"({scale.meta.get('extra_limit')} extra abstracts)", title_justify="left")
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    return table


def _md_comparison(seed: RunResult, scale: RunResult) -> list[str]:
    header, rows = comparison_rows(seed, scale)
    lines = ["## Seed vs scale", "", f"The same questions with the seed abstracts hidden among "
             f"{scale.meta.get('extra_limit')} real abstracts of `{scale.meta.get('extra_corpus')}` "
             f"({_documents(scale)} documents). At scale, questions marked `distractor_may_answer` are left out "
             "of wrong-paper answers, citation precision and (unanswerable ones) refusal accuracy.", "",
             "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines + [""]


def markdown_report(result: RunResult, gate: GateReport | None = None,
                    evaluators: Sequence[Evaluator] | None = None, *,
                    side_by_side: tuple[RunResult, RunResult] | None = None) -> str:
    """A Markdown report: run stamp, metrics per split, type and language, bar charts, one row per question.

    `side_by_side` (seed run, scale run) adds the two settings compared metric by metric.
    """
    evaluators = evaluators or result.evaluators
    meta, s = result.meta, result.summary
    lines = [f"# rag eval report — {meta['mode']} mode, k={meta['k']}, {meta.get('setting', 'seed')} setting", ""]
    lines += [f"- {key}: `{meta.get(key)}`" for key in
              ("created", "model", "settings_hash", "prompt_hash", "embed_model", "questions", "questions_hash", "split")]
    if meta.get("setting") == "scale":
        lines += [f"- {key}: `{meta.get(key)}`" for key in ("extra_corpus", "extra_limit", "scale_documents")]
    lines += [f"- {usage_line(result)}", f"- {wrong_paper_line(result)}",
              f"- latency p50 {_fmt(s['overall']['latency_ms']['p50'], 0)} ms, "
              f"p95 {_fmt(s['overall']['latency_ms']['p95'], 0)} ms", ""]
    lines += ["## Metrics", ""] + _md_table(_split_groups(s), evaluators)
    for name, groups in sorted((s.get("splits") or {}).items(), key=lambda x: x[0] != "test"):
        why = " (never tuned on)" if name == "test" else " (tuned on)" if name == "dev" else ""
        lines += [f"### {name} split{why}: by type and language", ""] + _md_table(_detail_groups(groups), evaluators)
    if side_by_side is not None:
        lines += _md_comparison(*side_by_side)
    name, detail = detail_split(s)
    lines += [f"## Per type ({name} split)" if name != "all" else "## Per type", ""] + _md_bars(detail["by_type"], evaluators)
    if gate is not None:
        lines += _md_gate(gate)
    return "\n".join(lines + _md_questions(result)) + "\n"


def write_markdown(result: RunResult, path: str | Path, gate: GateReport | None = None, *,
                   side_by_side: tuple[RunResult, RunResult] | None = None) -> Path:
    """Write the Markdown report to `path`."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(markdown_report(result, gate, side_by_side=side_by_side), encoding="utf-8")
    return p
