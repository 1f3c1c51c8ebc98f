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
        baseline: Path = typer.Option(Path("eval/baseline.json"), "--baseline", help="Baseline file."),
        out: Path = typer.Option(Path("eval/results"), "--out", help="Folder for the JSON result and Markdown report."),
        record: bool = typer.Option(False, "--record", help="LLM mode: save the live answers as a cassette."),
        cassettes: Path = typer.Option(Path("eval/cassettes"), "--cassettes", help="Folder of LLM-mode cassettes."),
        strict: bool = typer.Option(False, "--strict", help="No one-question slack: every metric gets only --tolerance."),
        judge: bool = typer.Option(False, "--judge", help="Also ask the configured LLM whether cited text supports each sentence."),
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
            _run(questions=questions, mode=mode, k=k, as_json=as_json, save_baseline=save_baseline, check=check,
                 tolerance=tolerance, baseline=baseline, out=out, record=record, cassettes=cassettes,
                 judge=judge, strict=strict)
        except RagError as e:
            fail(e)


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
         judge: bool, strict: bool) -> None:
    """Run the eval, write the result and report, print them, save or check the baseline."""
    import json

    from rich.console import Console

    from rag.evals.dataset import load_dataset
    from rag.evals.gate import compare, load_baseline, save_baseline as write_baseline
    from rag.evals.report import print_gate, print_run, result_stem, write_json, write_markdown
    from rag.evals.runner import run

    base = load_baseline(baseline) if check else None
    dataset = load_dataset(questions)
    err = Console(stderr=True)
    progress = None
    if sys.stderr.isatty():
        def progress(done: int, total: int) -> None:
            err.print(f"\r{done}/{total} questions", end="")
    answer_fn, record_to, settings = _llm_answerer(record, cassettes) if mode == "llm" else (None, None, None)
    evaluators = _evaluators(judge)
    result = run(dataset, mode=mode, k=k, settings=settings, answer_fn=answer_fn, progress=progress,
                 evaluators=evaluators)
    if progress:
        err.print()
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
