"""`rag eval`: registered on the main CLI app; the harness itself lives in rag/evals/."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from rag.console import fail

MODES = ("offline", "llm")


def register(app: typer.Typer) -> None:
    """Add the `eval` command to the app."""

    @app.command("eval")
    def eval_command(
        questions: Optional[Path] = typer.Option(None, "--questions", help="Questions file (JSONL; default eval/questions.jsonl)."),
        mode: str = typer.Option("offline", "--mode", help="offline or llm."),
        k: Optional[int] = typer.Option(None, "-k", help="Documents retrieved per question (default: the settings' k)."),
        as_json: bool = typer.Option(False, "--json", help="Print the whole result as JSON on stdout."),
        save_baseline: bool = typer.Option(False, "--save-baseline", help="Save this run as the baseline."),
        check: bool = typer.Option(False, "--check", help="Fail when a metric falls more than --tolerance below the baseline."),
        tolerance: float = typer.Option(0.05, "--tolerance", help="Allowed drop of each overall metric (absolute, 0-1)."),
        baseline: Optional[Path] = typer.Option(
            None, "--baseline", help="Baseline file (default eval/baseline.json; --mode llm: eval/baseline-llm.json)."),
        out: Path = typer.Option(Path("eval/results"), "--out", help="Folder for the JSON result and Markdown report."),
        record: bool = typer.Option(False, "--record", help="LLM mode: save the live answers as a cassette."),
        cassettes: Path = typer.Option(Path("eval/cassettes"), "--cassettes", help="Folder of LLM-mode cassettes."),
        strict: bool = typer.Option(False, "--strict", help="No one-question slack: every metric gets only --tolerance."),
        judge: bool = typer.Option(False, "--judge", help="Also ask the configured LLM whether cited text supports each sentence."),
        limit: Optional[int] = typer.Option(
            None, "--limit", help="At most N questions, stratified by type (and language within a type)."),
        ids: Optional[str] = typer.Option(None, "--ids", help="Only these question ids (comma-separated)."),
        types: Optional[str] = typer.Option(None, "--type", help="Only these question types (comma-separated)."),
    ) -> None:
        """Score answers on the question set: retrieval, facts, citations, groundedness, refusals."""
        from rag.errors import RagError, UsageError

        try:
            if mode not in MODES:
                raise UsageError(f"--mode must be offline or llm, got {mode!r}")
            if k is not None:
                from rag.config import get_settings

                get_settings(flag_names={"k": "-k"}, k=k)  # a bad -k is a usage error naming it
            if not 0 <= tolerance <= 1:
                raise UsageError(f"--tolerance must be between 0 and 1, got {tolerance}")
            if check and save_baseline:
                raise UsageError("use --check or --save-baseline, not both")
            if record and mode != "llm":
                raise UsageError("--record applies to --mode llm only")
            if limit is not None and limit < 1:
                raise UsageError(f"--limit must be at least 1, got {limit}")
            selection = {"limit": limit, "ids": _names(ids), "types": _names(types)}
            if baseline is None:
                baseline = LLM_BASELINE if mode == "llm" else OFFLINE_BASELINE
            _run(questions=questions, mode=mode, k=k, as_json=as_json, save_baseline=save_baseline, check=check,
                 tolerance=tolerance, baseline=baseline, out=out, record=record, cassettes=cassettes,
                 judge=judge, strict=strict, selection=selection)
        except RagError as e:
            fail(e)


OFFLINE_BASELINE = Path("eval/baseline.json")
LLM_BASELINE = Path("eval/baseline-llm.json")


def _names(value: Optional[str]) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _select(dataset, selection: dict, base: dict | None):
    """Apply --limit/--ids/--type; with none given, a baseline's own selection (an LLM subset)."""
    from rag.evals.dataset import TYPES, Dataset
    from rag.errors import UsageError
    from rag.evals.runner import select_cases

    if not any(selection.values()) and base is not None:
        selection = {**selection, **(base.get("meta", {}).get("selection") or {})}
    unknown = [t for t in selection.get("types") or [] if t not in TYPES]
    if unknown:
        raise UsageError(f"--type: unknown type {', '.join(unknown)} (known: {', '.join(TYPES)})")
    if not any(selection.values()):
        return dataset, None
    cases = select_cases(dataset.cases, ids=selection.get("ids") or (), types=selection.get("types") or (),
                         limit=selection.get("limit"))
    if not cases:
        raise UsageError("no question matches --ids/--type")
    return Dataset(name=dataset.name, cases=cases, path=dataset.path), selection


def _llm_line(summary: dict) -> str | None:
    """One line on what citation enforcement did in an LLM run."""
    llm = summary.get("llm")
    if not llm:
        return None
    n = llm["answers"]
    p50 = llm.get("llm_ms_p50")
    return (f"llm: repair calls {llm['repair_calls']}/{n} ({llm['repair_rate']:.2f}), fixed {llm['repairs_fixed']}; "
            f"fallback cited {llm['cited_by_fallback']}, dropped {llm['dropped_by_fallback']}, "
            f"refused {llm['refused_by_fallback']}; retries {llm['retries']}; "
            f"answers left uncited {llm['uncited_answers']}, marker-only {llm['marker_only_answers']}, "
            f"unsupported {llm['unsupported_answers']}"
            + (f"; model time p50 {p50 / 1000:.1f} s" if p50 is not None else ""))


def _llm_answerer(record: bool, cassettes: Path):
    """Pick live answers (recorded when asked) or a cassette replay for LLM mode."""
    from rag.config import get_settings
    from rag.errors import UsageError
    from rag.evals.cassette import Recorder, cassette_path, replayer

    settings = get_settings().with_overrides(answer_mode="llm")
    if settings.llm_configured:
        return (Recorder(), cassette_path(settings, cassettes), settings) if record else (None, None, settings)
    if record:
        raise UsageError("--record needs an LLM: set OPENAI_API_KEY or OPENAI_BASE_URL")
    return replayer(cassette_path(settings, cassettes)), None, settings


def _evaluators(judge: bool):
    """The default evaluators, plus the LLM judge when asked for."""
    from rag.evals.evaluators import EVALUATORS

    if not judge:
        return EVALUATORS
    from rag.config import get_settings
    from rag.evals.judge import faithfulness_evaluator
    from rag.llm import OpenAIChatClient

    return (*EVALUATORS, faithfulness_evaluator(OpenAIChatClient(get_settings())))


def _run(*, questions: Optional[Path], mode: str, k: Optional[int], as_json: bool, save_baseline: bool,
         check: bool, tolerance: float, baseline: Path, out: Path, record: bool, cassettes: Path,
         judge: bool, strict: bool, selection: dict) -> None:
    """Run the eval, write the result and report, print them, save or check the baseline."""
    import json

    from rich.console import Console

    from rag.evals.dataset import load_dataset
    from rag.evals.gate import compare, load_baseline, save_baseline as write_baseline
    from rag.evals.report import print_gate, print_run, result_stem, write_json, write_markdown
    from rag.evals.runner import run

    base = load_baseline(baseline) if check else None
    dataset, selection = _select(load_dataset(questions), selection, base)
    err = Console(stderr=True)
    progress = None
    if sys.stderr.isatty():
        def progress(done: int, total: int) -> None:
            err.print(f"\r{done}/{total} questions", end="")
    elif mode == "llm":  # slow: a line per question for a log file
        import time

        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            err.print(f"{done}/{total} questions, {time.perf_counter() - started:.0f} s", markup=False)
    answer_fn, record_to, settings = _llm_answerer(record, cassettes) if mode == "llm" else (None, None, None)
    evaluators = _evaluators(judge)
    result = run(dataset, mode=mode, k=k, settings=settings, answer_fn=answer_fn, progress=progress,
                 evaluators=evaluators)
    if progress and sys.stderr.isatty():
        err.print()
    if selection:
        result.meta["selection"] = selection
    gate = compare(result, base, tolerance=tolerance, strict=strict) if base is not None else None
    json_path = write_json(result, out, gate)
    md_path = write_markdown(result, Path(out) / f"{result_stem(result)}.md", gate)

    if as_json:
        payload = result.to_dict()
        if gate is not None:
            payload["gate"] = gate.to_dict()
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=1))
        console = err
    else:
        console = Console() if sys.stdout.isatty() else Console(width=132)
        print_run(result, console)
    line = _llm_line(result.summary)
    if line:
        (err if as_json else console).print(line, markup=False)
    if gate is not None:
        print_gate(gate, console)
    err.print(f"result: {json_path}\nreport: {md_path}", markup=False)
    if record_to is not None:
        err.print(f"cassette saved: {answer_fn.save(record_to, settings)}", markup=False)
    if save_baseline:
        path = write_baseline(result, baseline)
        report = write_markdown(result, path.with_suffix(".md"))
        err.print(f"baseline saved: {path} (report {report})", markup=False)
    if gate is not None and not gate.ok:
        raise typer.Exit(1)
