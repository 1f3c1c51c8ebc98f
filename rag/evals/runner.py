"""Run a question set through the public `rag.answer` API and score every answer.

An answer that fails with an ordinary error, or an evaluator that raises, becomes a failure
row and the run goes on; errors that would fail every question (no index, no LLM) stop it.
"""
from __future__ import annotations

import hashlib
import platform
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import rag
from rag.errors import ConfigError, ProviderError, RagError, RagIndexError, UsageError
from rag.evals import metrics as m
from rag.evals.dataset import SPLITS, Case, Dataset
from rag.evals.evaluators import EVALUATORS, EvalContext, Evaluator

AnswerFn = Callable[..., rag.Answer]

# The command that runs the LLM eval with a real key and records its answers as a cassette.
RERECORD_COMMAND = "OPENAI_API_KEY=sk-... .venv/bin/rag eval --mode llm --record"

# Estimated list prices in USD per million tokens (input, output); unknown models get no cost.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
}


class EvalUnavailable(RagError):
    """The answers for this mode cannot be produced here (no LLM server, key or cassette)."""

    exit_code = 3


@dataclass
class CaseResult:
    """One question's answer, scores, reasons and failure rows."""

    case: Case
    answer: dict[str, Any] | None = None
    latency_ms: float | None = None
    usage: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)  # evaluator (or "answer") and error
    evaluators: Sequence[Evaluator] = EVALUATORS

    @property
    def passed(self) -> bool:
        return self.scores.get("passed") == 1.0 and not self.failures

    def failed_checks(self, evaluators: Sequence[Evaluator] | None = None) -> list[str]:
        """One line per check that fell short, then one per failure row."""
        out = []
        for e in evaluators or self.evaluators:
            if e.name != "passed" and e.failed(self.scores.get(e.name)):
                reason = self.reasons.get(e.name) or f"{self.scores[e.name]:.2f}"
                out.append(f"{e.name}: {reason}")
        out += [f"{f['evaluator']} raised: {f['error']}" for f in self.failures]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case.id, "question": self.case.question, "type": self.case.type,
            "lang": self.case.lang, "split": self.case.split, "answerable": self.case.answerable,
            "gold_ids": list(self.case.gold_ids), "gold_labels": list(self.case.gold_labels),
            "passed": self.passed, "scores": self.scores, "failed_checks": self.failed_checks(),
            "failures": self.failures, "latency_ms": self.latency_ms, "usage": self.usage,
            "answer": self.answer,
        }


@dataclass
class RunResult:
    """A whole eval run: how it was made, every case, and the aggregated metrics."""

    meta: dict[str, Any]
    cases: list[CaseResult]
    summary: dict[str, Any]
    evaluators: Sequence[Evaluator] = EVALUATORS

    def to_dict(self) -> dict[str, Any]:
        return {"meta": self.meta, "summary": self.summary, "cases": [c.to_dict() for c in self.cases]}


def _answer_record(ans: rag.Answer, k: int) -> dict[str, Any]:
    record = {
        "text": ans.text,
        "refused": ans.refused,
        "mode": ans.mode,
        "model": ans.model,
        "citations": [{"n": c.n, "doc_id": c.doc_id, "label": c.label or c.title} for c in ans.citations],
        "sources": [{"doc_id": h.doc_id, "label": h.label or h.title} for h in ans.sources[:k]],
        "warnings": list(ans.warnings),
        "timings_ms": dict(ans.timings_ms),
    }
    if ans.mode == "llm":
        record["llm"] = llm_record(ans)
    return record


def llm_record(ans: rag.Answer) -> dict[str, Any]:
    """What enforcement did to one LLM answer: repair call, fallback, retries, what is left unchecked."""
    from rag.answering.check import check_citations

    left = None
    if not ans.refused:
        labels = [h.label or h.title for h in ans.sources]
        left = check_citations(ans.text, len(ans.sources), question=ans.question, labels=labels,
                               sources=[h.text for h in ans.sources])
    return {
        "repair_call": ans.repair is not None,
        "repair_fixed": bool(ans.repair and ans.repair.get("fixed")),
        "first_refused": bool(ans.repair is None and ans.refused),
        "cited_by_fallback": sum("citation check: cited [" in w for w in ans.warnings),
        "dropped_by_fallback": sum("citation check: dropped" in w for w in ans.warnings),
        "refused_by_fallback": any("so the answer is the refusal" in w for w in ans.warnings),
        "requests": len(ans.attempts) or None,
        "retries": sum(1 for a in ans.attempts if a.get("outcome") != "ok"),
        "uncited": len(left.uncited) if left else 0,
        "marker_only": len(left.marker_only) if left else 0,
        "unsupported": len(left.unsupported) if left else 0,
        "llm_ms": round(ans.timings_ms.get("llm", 0.0) + ans.timings_ms.get("llm_repair", 0.0), 2),
    }


def llm_summary(results: list["CaseResult"]) -> dict[str, Any] | None:
    """Enforcement over an LLM run: repair-call rate, fallback use, retries, uncited/marker-only answers."""
    records = [r.answer["llm"] for r in results if r.answer and "llm" in r.answer]
    if not records:
        return None
    n = len(records)
    calls = sum(r["repair_call"] for r in records)
    return {
        "answers": n,
        "repair_calls": calls,
        "repair_rate": round(calls / n, 3),
        "repairs_fixed": sum(r["repair_fixed"] for r in records),
        "cited_by_fallback": sum(r["cited_by_fallback"] for r in records),
        "dropped_by_fallback": sum(r["dropped_by_fallback"] for r in records),
        "refused_by_fallback": sum(r["refused_by_fallback"] for r in records),
        "retries": sum(r["retries"] for r in records),
        "uncited_answers": sum(1 for r in records if r["uncited"]),
        "marker_only_answers": sum(1 for r in records if r["marker_only"]),
        "unsupported_answers": sum(1 for r in records if r.get("unsupported")),
        "llm_ms_p50": m.percentile([r["llm_ms"] for r in records], 50),
    }


def score_case(case: Case, ans: rag.Answer, *, k: int, evaluators: Sequence[Evaluator] = EVALUATORS,
               setting: str = "seed") -> CaseResult:
    """Run every evaluator on one answer; one that raises becomes a failure row."""
    result = CaseResult(case=case, answer=_answer_record(ans, k), usage=dict(ans.usage or {}),
                        evaluators=tuple(evaluators))
    ctx = EvalContext(case=case, answer=ans, k=k, setting=setting)
    for e in evaluators:
        try:
            outcome = e.evaluate(ctx)
        except Exception as exc:  # an evaluator bug must not stop the run
            result.scores[e.name] = None
            result.failures.append({"evaluator": e.name, "error": f"{type(exc).__name__}: {exc}"})
            continue
        result.scores[e.name] = outcome.value
        if outcome.reason:
            result.reasons[e.name] = outcome.reason
    return result


def _failed_answer(case: Case, exc: Exception, evaluators: Sequence[Evaluator]) -> CaseResult:
    result = CaseResult(case=case, evaluators=tuple(evaluators))
    result.failures.append({"evaluator": "answer", "error": f"{type(exc).__name__}: {exc}"})
    result.scores = {e.name: None for e in evaluators}
    return result


def _usage_tokens(usage: dict[str, int]) -> tuple[int, int]:
    prompt = usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0
    completion = usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0
    return int(prompt), int(completion)


def _group(results: list[CaseResult], evaluators: Sequence[Evaluator]) -> dict[str, Any]:
    metrics = {}
    for e in evaluators:
        values = [r.scores.get(e.name) for r in results]
        present = [v for v in values if v is not None]
        metrics[e.name] = {"value": m.mean(present), "n": len(present)}
    latencies = [r.latency_ms for r in results if r.latency_ms is not None]
    return {
        "n": len(results),
        "failures": sum(len(r.failures) for r in results),
        "metrics": metrics,
        "latency_ms": {"p50": m.percentile(latencies, 50), "p95": m.percentile(latencies, 95)},
    }


def _groups(results: list[CaseResult], evaluators: Sequence[Evaluator]) -> dict[str, Any]:
    """Metrics overall, per question type and per language."""
    types = sorted({r.case.type for r in results})
    langs = sorted({r.case.lang for r in results})
    return {
        "overall": _group(results, evaluators),
        "by_type": {t: _group([r for r in results if r.case.type == t], evaluators) for t in types},
        "by_lang": {lang: _group([r for r in results if r.case.lang == lang], evaluators) for lang in langs},
    }


def summarize(results: list[CaseResult], *, model: str | None = None,
              evaluators: Sequence[Evaluator] = EVALUATORS) -> dict[str, Any]:
    """Aggregate metrics overall, per type and language, and the same per split (None values left out)."""
    prompt = completion = 0
    for r in results:
        p, c = _usage_tokens(r.usage)
        prompt, completion = prompt + p, completion + c
    price = PRICES_PER_MTOK.get(model or "")
    cost = (prompt * price[0] + completion * price[1]) / 1e6 if price and (prompt or completion) else None
    splits = [s for s in SPLITS if any(r.case.split == s for r in results)]
    return {
        **_groups(results, evaluators),
        "splits": {s: _groups([r for r in results if r.case.split == s], evaluators) for s in splits},
        "tokens": {"prompt": prompt, "completion": completion, "total": prompt + completion},
        "cost_usd": cost,
        **({"llm": llm} if (llm := llm_summary(results)) else {}),
    }


def select_cases(cases: Sequence[Case], *, ids: Sequence[str] = (), types: Sequence[str] = (),
                 limit: int | None = None) -> list[Case]:
    """Pick questions: by id, by type, then at most `limit`, stratified by type.

    The limit is shared out over the types as evenly as it goes (round robin, in the order the
    types first appear); within a type, over its languages the same way (so a type with picks
    to spare has at least one question in each language), and within a language the picks are
    spread evenly over its questions in file order.
    """
    picked = list(cases)
    if ids:
        known = {c.id for c in picked}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise UsageError(f"--ids: no question with id {', '.join(unknown)}")
        wanted = set(ids)
        picked = [c for c in picked if c.id in wanted]
    if types:
        picked = [c for c in picked if c.type in set(types)]
    if limit is None or limit >= len(picked):
        return picked
    by_type: dict[str, list[Case]] = {}
    for c in picked:
        by_type.setdefault(c.type, []).append(c)
    chosen: set[str] = set()
    for t, n in _share(by_type, limit).items():
        by_lang: dict[str, list[Case]] = {}
        for c in by_type[t]:
            by_lang.setdefault(c.lang, []).append(c)
        for lang, count in _share(by_lang, n).items():
            group = by_lang[lang]
            chosen.update(group[int((i + 0.5) * len(group) / count)].id for i in range(count))
    return [c for c in picked if c.id in chosen]


def _share(groups: dict[str, list[Case]], n: int) -> dict[str, int]:
    """Deal n picks over the groups round robin (a group gets no more than it holds)."""
    share = {g: 0 for g in groups}
    left = min(n, sum(len(v) for v in groups.values()))
    while left:
        for g in groups:
            if left and share[g] < len(groups[g]):
                share[g] += 1
                left -= 1
    return {g: k for g, k in share.items() if k}


def prompt_hash(mode: str) -> str | None:
    """Digest of the LLM prompt templates, when the LLM path is installed and in use."""
    if mode != "llm":
        return None
    try:
        from rag.answering.prompt import load_prompts

        return load_prompts().digest()[:12]
    except (ImportError, AttributeError, RagError):
        return None


def file_hash(path: str) -> str | None:
    """Short content hash of a file, or None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    except OSError:
        return None


def _systemic(exc: RagError, mode: str) -> RagError | None:
    """Return the error to stop the run with, when `exc` would fail every question."""
    if isinstance(exc, EvalUnavailable):
        return exc
    if mode == "llm" and isinstance(exc, (ConfigError, ProviderError)):
        return EvalUnavailable(f"LLM answers unavailable: {exc}", hint=f"re-record with: {RERECORD_COMMAND}")
    if isinstance(exc, (RagIndexError, ConfigError)):
        return exc
    return None


# The installed packages whose versions can change answers without a change to rag's code: the vector
# store and its HNSW graph, the embedding runtime and its numerics, the lexical ranking and tokenizers.
ANSWER_PACKAGES = ("chromadb", "onnxruntime", "numpy", "bm25s", "tokenizers", "llama-index-core")


def package_versions() -> dict[str, str]:
    """Python's and the `ANSWER_PACKAGES`' versions ("absent" for one not installed), stamped on a run so a
    baseline made with other versions is noted when compared."""
    from importlib.metadata import PackageNotFoundError, version

    def of(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "absent"

    return {"python": platform.python_version(), **{name: of(name) for name in ANSWER_PACKAGES}}


def run(
    dataset: Dataset,
    *,
    mode: str = "offline",
    k: int | None = None,
    settings: rag.Settings | None = None,
    answer_fn: AnswerFn | None = None,
    evaluators: Sequence[Evaluator] = EVALUATORS,
    progress: Callable[[int, int], None] | None = None,
    setting: str = "seed",
    split: str = "all",
    extra_meta: dict[str, Any] | None = None,
) -> RunResult:
    """Answer every case with `rag.answer` (or `answer_fn`) and score it.

    `setting` says where the questions are asked (`seed` or `scale`, see rag/evals/scale.py);
    `split` and `extra_meta` are recorded in the result's meta.
    """
    settings = (settings or rag.get_settings()).with_overrides(answer_mode=mode)
    k = k or settings.k
    answer_fn = answer_fn or rag.answer
    results: list[CaseResult] = []
    started = time.perf_counter()
    model = None
    for i, case in enumerate(dataset.cases):
        t0 = time.perf_counter()
        try:
            ans = answer_fn(case.question, k=k, settings=settings)
            latency = round((time.perf_counter() - t0) * 1000, 2)
        except RagError as exc:
            stop = _systemic(exc, mode)
            if stop is not None:
                raise stop from exc
            results.append(_failed_answer(case, exc, evaluators))
        except Exception as exc:  # a pipeline bug on one question: record it, go on
            results.append(_failed_answer(case, exc, evaluators))
        else:
            result = score_case(case, ans, k=k, evaluators=evaluators, setting=setting)
            result.latency_ms = latency
            model = model or ans.model
            results.append(result)
        if progress:
            progress(i + 1, len(dataset.cases))
    model = model or (settings.llm_model if mode == "llm" else "offline-extractive")
    meta = {
        "mode": mode,
        "setting": setting,
        "split": split,
        "k": k,
        "settings_hash": settings.hash(),
        "prompt_hash": prompt_hash(mode),
        "model": model,
        "embed_model": settings.embed_model,
        "questions": dataset.path,
        "questions_hash": file_hash(dataset.path) if dataset.path else None,
        "n_questions": len(dataset.cases),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 2),
        "rag_version": rag.__version__,
        "packages": package_versions(),
        **(extra_meta or {}),
    }
    return RunResult(meta=meta, cases=results, summary=summarize(results, model=model, evaluators=evaluators),
                     evaluators=tuple(evaluators))
