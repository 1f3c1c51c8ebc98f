"""`rag eval`: registered on the main CLI app; the harness itself lives in rag/evals/."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

import typer

from rag.console import fail

if TYPE_CHECKING:
    from rich.console import Console

    from rag.config import Settings
    from rag.evals.dataset import Dataset
    from rag.evals.evaluators import Evaluator
    from rag.evals.gate import GateReport
    from rag.evals.runner import RunResult
    from rag.evals.scale import ScaleSpec

MODES = ("offline", "llm")
SPLITS = ("all", "dev", "test")


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
        split: str = typer.Option("all", "--split", help="Questions to run: dev (may be tuned on), test (never tuned on) or all."),
        extra_corpus: Optional[Path] = typer.Option(
            None, "--extra-corpus",
            help="Also run the questions with the seed abstracts hidden among this JSONL(.gz) corpus (scale setting)."),
        extra_limit: int = typer.Option(5000, "--extra-limit", help="Records taken from the start of --extra-corpus."),
        scale_cache: Optional[Path] = typer.Option(
            None, "--scale-cache", help="Folder of cached scale indexes (default $RAG_EVAL_CACHE or ~/.cache/rag/eval-scale)."),
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
            if split not in SPLITS:
                raise UsageError(f"--split must be dev, test or all, got {split!r}")
            if limit is not None and limit < 1:
                raise UsageError(f"--limit must be at least 1, got {limit}")
            selection = {"limit": limit, "ids": _names(ids), "types": _names(types)}
            if baseline is None:
                baseline = LLM_BASELINE if mode == "llm" else OFFLINE_BASELINE
            scale = _scale_spec(extra_corpus, extra_limit, scale_cache, mode=mode, record=record)
            _run(questions=questions, mode=mode, k=k, as_json=as_json, save_baseline=save_baseline, check=check,
                 tolerance=tolerance, baseline=baseline, out=out, record=record, cassettes=cassettes,
                 judge=judge, strict=strict, split=split, scale=scale, selection=selection)
        except RagError as e:
            fail(e)


def _scale_spec(corpus: Optional[Path], limit: int, cache: Optional[Path], *, mode: str,
                record: bool) -> Optional[ScaleSpec]:
    """The scale setting asked for, its corpus read once before any work; None without --extra-corpus."""
    from rag.config import get_settings
    from rag.errors import UsageError
    from rag.evals.scale import ScaleSpec, read_extra

    if corpus is None:
        return None
    if mode == "llm" and (record or not get_settings().llm_configured):
        raise UsageError("--extra-corpus with --mode llm needs a live LLM and no --record (cassettes hold seed answers)")
    read_extra(corpus, limit)  # a bad file or limit fails now, in one line, not after the seed run
    return ScaleSpec(corpus=corpus, limit=limit, cache=cache)


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
    import rag

    def retrieve(question: str, k: int, s) -> list[str]:
        return [h.doc_id for h in rag.retrieve(question, k=k, settings=s)]

    return replayer(cassette_path(settings, cassettes), retrieve=retrieve), None, settings


def _evaluators(judge: bool):
    """The default evaluators, plus the LLM judge when asked for."""
    from rag.evals.evaluators import EVALUATORS

    if not judge:
        return EVALUATORS
    from rag.config import get_settings
    from rag.evals.judge import faithfulness_evaluator
    from rag.llm import OpenAIChatClient

    return (*EVALUATORS, faithfulness_evaluator(OpenAIChatClient(get_settings())))


@dataclass
class _Runs:
    """The seed run, the scale run when asked for, and their gate reports."""

    seed: RunResult
    scale: Optional[RunResult] = None
    gate: Optional[GateReport] = None
    scale_gate: Optional[GateReport] = None

    @property
    def ok(self) -> bool:
        return all(g is None or g.ok for g in (self.gate, self.scale_gate))

    @property
    def pair(self) -> Optional[tuple[RunResult, RunResult]]:
        return (self.seed, self.scale) if self.scale is not None else None


def _progress(err: Console, mode: str = "offline") -> Optional[Callable[[int, int], None]]:
    """A stderr question counter when stderr is a terminal; in LLM mode (slow) a line per question."""
    if not sys.stderr.isatty():
        if mode != "llm":
            return None
        import time

        started = time.perf_counter()

        def lines(done: int, total: int) -> None:
            err.print(f"{done}/{total} questions, {time.perf_counter() - started:.0f} s", markup=False)
        return lines

    def progress(done: int, total: int) -> None:
        err.print(f"\r{done}/{total} questions", end="" if done < total else "\n")
    return progress


def _run_scale(dataset: Dataset, spec: ScaleSpec, *, mode: str, k: Optional[int], settings: Optional[Settings],
               evaluators: Sequence[Evaluator], split: str, err: Console) -> RunResult:
    """Open (or build once) the scale index and run the questions against it."""
    from rag.config import get_settings
    from rag.evals.runner import run
    from rag.evals.scale import answerer, cache_root, open_scale_index
    from rag.progress import progress_bar

    settings = (settings or get_settings()).with_overrides(answer_mode=mode)
    err.print(f"scale setting: seed abstracts + the first {spec.limit} records of {spec.corpus} "
              f"(index cached under {cache_root(spec.cache)}; the first run embeds every abstract)", markup=False)
    with progress_bar(enabled=sys.stderr.isatty()) as bar:
        opened = open_scale_index(spec, settings, progress=bar)
    built = f"built in {opened.built_seconds:.0f} s" if opened.built_seconds is not None else "reused"
    err.print(f"scale index: {opened.documents} documents, {built}: {opened.folder}", markup=False)
    return run(dataset, mode=mode, k=k, settings=settings, answer_fn=answerer(opened.index), evaluators=evaluators,
               progress=_progress(err), setting="scale", split=split, extra_meta=opened.meta(spec))


def _print(runs: _Runs, *, as_json: bool, err: Console) -> None:
    """The result on stdout (table, or JSON with --json), gate reports after it."""
    import json

    from rich.console import Console

    from rag.evals.report import comparison_table, print_gate, print_run

    def payload(result: RunResult, gate: Optional[GateReport]) -> dict:
        data = result.to_dict()
        if gate is not None:
            data["gate"] = gate.to_dict()
        return data

    if as_json:
        data = payload(runs.seed, runs.gate)
        if runs.scale is not None:
            data = {"seed": data, "scale": payload(runs.scale, runs.scale_gate)}
        typer.echo(json.dumps(data, ensure_ascii=False, indent=1))
        console = err
    else:
        console = Console() if sys.stdout.isatty() else Console(width=132)
        print_run(runs.seed, console)
        if runs.scale is not None:
            print_run(runs.scale, console)
            console.print(comparison_table(runs.seed, runs.scale))
    for gate in (runs.gate, runs.scale_gate):
        if gate is not None:
            print_gate(gate, console)


def _write(runs: _Runs, out: Path, err: Console) -> None:
    """The JSON result and Markdown report of each run."""
    from rag.evals.report import result_stem, write_json, write_markdown

    for result, gate in ((runs.seed, runs.gate), (runs.scale, runs.scale_gate)):
        if result is None:
            continue
        json_path = write_json(result, out, gate)
        md_path = write_markdown(result, Path(out) / f"{result_stem(result)}.md", gate, side_by_side=runs.pair)
        err.print(f"result: {json_path}\nreport: {md_path}", markup=False)


def scale_baseline_path(baseline: Path) -> Path:
    """Where the scale setting's baseline lives beside the seed one (eval/baseline-scale.json)."""
    return baseline.with_name(f"{baseline.stem}-scale{baseline.suffix}")


def _run(*, questions: Optional[Path], mode: str, k: Optional[int], as_json: bool, save_baseline: bool,
         check: bool, tolerance: float, baseline: Path, out: Path, record: bool, cassettes: Path,
         judge: bool, strict: bool, split: str = "all", scale: Optional[ScaleSpec] = None,
         selection: Optional[dict] = None) -> None:
    """Run the eval (and its scale setting), write the results, print them, save or check the baseline."""
    from rich.console import Console

    from rag.evals.dataset import load_dataset, select_split
    from rag.evals.gate import compare, load_baseline, save_baseline as write_baseline, zero_check
    from rag.evals.report import write_markdown
    from rag.evals.runner import run

    base = load_baseline(baseline) if check else None
    dataset, selection = _select(select_split(load_dataset(questions), split), selection or {}, base)
    err = Console(stderr=True)
    answer_fn, record_to, settings = _llm_answerer(record, cassettes) if mode == "llm" else (None, None, None)
    evaluators = _evaluators(judge)
    runs = _Runs(run(dataset, mode=mode, k=k, settings=settings, answer_fn=answer_fn, progress=_progress(err, mode),
                     evaluators=evaluators, split=split))
    if selection:
        runs.seed.meta["selection"] = selection
    if scale is not None:
        runs.scale = _run_scale(dataset, scale, mode=mode, k=k, settings=settings, evaluators=evaluators,
                                split=split, err=err)
    if base is not None:
        runs.gate = compare(runs.seed, base, tolerance=tolerance, strict=strict)
        if runs.scale is not None:
            scale_base = scale_baseline_path(baseline)
            runs.scale_gate = (compare(runs.scale, load_baseline(scale_base), tolerance=tolerance, strict=strict)
                               if scale_base.exists() else zero_check(runs.scale))
    _write(runs, out, err)
    _print(runs, as_json=as_json, err=err)
    line = _llm_line(runs.seed.summary)
    if line:
        err.print(line, markup=False)
    if record_to is not None:
        err.print(f"cassette saved: {answer_fn.save(record_to, settings)}", markup=False)
    if save_baseline:
        path = write_baseline(runs.seed, baseline)
        report = write_markdown(runs.seed, path.with_suffix(".md"), side_by_side=runs.pair)
        err.print(f"baseline saved: {path} (report {report})", markup=False)
        if runs.scale is not None:
            err.print(f"scale baseline saved: {write_baseline(runs.scale, scale_baseline_path(baseline))}",
                      markup=False)
    if not runs.ok:
        raise typer.Exit(1)
