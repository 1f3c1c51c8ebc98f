"""The baseline gate: save a run as the baseline, compare a run with it, list flipped questions."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rag.errors import UsageError
from rag.evals.evaluators import Evaluator
from rag.evals.runner import CaseResult, RunResult, summarize

DEFAULT_BASELINE = Path("eval") / "baseline.json"
DEFAULT_TOLERANCE = 0.05
BASELINE_FORMAT = 2  # 2: each question's scores, so a run of some of its questions is compared on those


class BaselineError(UsageError):
    """The baseline file is missing or unreadable."""


def baseline_payload(result: RunResult) -> dict[str, Any]:
    """The parts of a run the gate needs: how it was made, its metrics, each question's outcome and scores."""
    return {
        "format": BASELINE_FORMAT,
        "meta": result.meta,
        "summary": result.summary,
        "cases": {c.case.id: {"passed": c.passed, "split": c.case.split, "failed_checks": c.failed_checks(),
                              "scores": c.scores}
                  for c in result.cases},
    }


def save_baseline(result: RunResult, path: str | Path = DEFAULT_BASELINE) -> Path:
    """Write the baseline file (stable key order, one diffable line per field)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(baseline_payload(result), ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                 encoding="utf-8")
    return p


def load_baseline(path: str | Path = DEFAULT_BASELINE) -> dict[str, Any]:
    """Read a baseline file; a missing or malformed one is a one-line BaselineError."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"baseline not found: {p}", hint="create it with `rag eval --save-baseline`") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BaselineError(f"cannot read baseline {p}: {e}") from None
    if not isinstance(data, dict) or "summary" not in data or "cases" not in data:
        raise BaselineError(f"{p} is not an eval baseline (no summary or cases)")
    return data


@dataclass
class MetricChange:
    """One metric in one scope, before and after."""

    scope: str  # "overall", "type:lookup", "lang:zh"
    metric: str
    label: str
    baseline: float | None
    current: float | None
    higher_is_better: bool = True
    gated: bool = False
    regressed: bool = False
    allowed: float | None = None  # the drop this gated metric may show

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline


@dataclass
class Flip:
    """A question whose pass/fail outcome changed (or that is new or gone)."""

    id: str
    before: bool | None
    after: bool | None
    checks: list[str] = field(default_factory=list)


@dataclass
class GateReport:
    """Every metric change, the flipped questions, and notes on how the runs differ."""

    tolerance: float
    changes: list[MetricChange]
    flips: list[Flip]
    notes: list[str]

    @property
    def regressions(self) -> list[MetricChange]:
        return [c for c in self.changes if c.regressed]

    @property
    def ok(self) -> bool:
        return not self.regressions

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "tolerance": self.tolerance,
            "changes": [{**c.__dict__, "delta": c.delta} for c in self.changes],
            "flips": [f.__dict__ for f in self.flips],
            "notes": self.notes,
        }


def _value(group: dict[str, Any] | None, metric: str) -> float | None:
    if not group:
        return None
    return (group.get("metrics", {}).get(metric) or {}).get("value")


def _count(group: dict[str, Any] | None, metric: str) -> int:
    if not group:
        return 0
    return int((group.get("metrics", {}).get(metric) or {}).get("n") or 0)


def allowed_drop(tolerance: float, n: int, *, strict: bool = False) -> float:
    """The drop a metric may show: the tolerance, or one question's worth (1/n) when that is larger.

    Without the per-question slack a metric averaged over 10 questions would fail the gate on a
    single flipped question; `strict` turns the slack off.
    """
    if strict or n <= 0:
        return tolerance
    return max(tolerance, 1.0 / n)


def _regressed(base: float | None, cur: float | None, higher: bool, allowed: float) -> bool:
    """True when the value fell by more than `allowed` (rose, for a lower-is-better metric)."""
    if base is None:
        return False
    if cur is None:
        return True  # the metric disappeared: no applicable question was scored
    drop = base - cur if higher else cur - base
    return drop > allowed + 1e-9


def _notes(meta: dict[str, Any], base_meta: dict[str, Any]) -> list[str]:
    notes = []
    for key in ("mode", "setting", "split", "k", "settings_hash", "prompt_hash", "model", "questions_hash"):
        if base_meta.get(key) != meta.get(key):
            notes.append(f"{key} differs: baseline {base_meta.get(key)!r}, now {meta.get(key)!r}")
    # (a baseline from before versions were stamped has none to compare)
    base_packages, packages = base_meta.get("packages") or {}, meta.get("packages") or {}
    changed = [f"{name} {base_packages[name]} -> {packages.get(name, 'absent')}" for name in base_packages
               if packages.get(name, "absent") != base_packages[name]]
    if changed:
        notes.append(f"package versions differ from the baseline's: {', '.join(changed)} (answers may change "
                     f"with no change to rag's code)")
    return notes


Scope = tuple[str, "dict | None", "dict | None", bool]


def _scopes(now: dict[str, Any], base: dict[str, Any], notes: list[str]) -> list[Scope]:
    """(name, current group, baseline group, gated) for every group the gate looks at.

    With splits on both sides each split's overall metrics are gated and the whole set is
    shown; a baseline from before splits gates the whole set. Type and language groups are shown.
    """
    now_splits, base_splits = now.get("splits") or {}, base.get("splits") or {}
    by_split = bool(now_splits and base_splits)
    scopes: list[Scope] = [("overall", now.get("overall"), base.get("overall"), not by_split)]
    if by_split:
        scopes += [(f"split:{name}", group.get("overall"), (base_splits.get(name) or {}).get("overall"), True)
                   for name, group in now_splits.items()]
        notes += [f"split {name} is in the baseline but was not run: not checked"
                  for name in base_splits if name not in now_splits]
    for kind, key in (("type", "by_type"), ("lang", "by_lang")):
        names = sorted(set(now.get(key, {})) | set(base.get(key, {})))
        scopes += [(f"{kind}:{n}", now.get(key, {}).get(n), base.get(key, {}).get(n), False) for n in names]
    return scopes


def _change(scope: str, e: Evaluator, cur_group: dict | None, base_group: dict | None, gated: bool,
            tolerance: float, strict: bool, zero: bool = False) -> MetricChange | None:
    """One metric's change in one scope; a metric held at zero (`zero`) fails on any nonzero value."""
    b, c = _value(base_group, e.name), _value(cur_group, e.name)
    if b is None and c is None:
        return None
    change = MetricChange(scope, e.name, e.label, b, c, e.higher_is_better, gated and e.gated)
    if not change.gated:
        return change
    if zero:
        change.allowed = 0.0
        change.regressed = c is not None and c > 0
    else:
        change.allowed = allowed_drop(tolerance, _count(base_group, e.name), strict=strict)
        change.regressed = _regressed(b, c, e.higher_is_better, change.allowed)
    return change


def _flips(result: RunResult, before: dict[str, Any], *, sample: bool = False) -> list[Flip]:
    """Questions whose outcome changed; baseline questions of a split that was not run, or left out of a
    `sample`, are skipped."""
    flips: list[Flip] = []
    seen = set()
    for c in result.cases:
        seen.add(c.case.id)
        old = before.get(c.case.id)
        was = None if old is None else bool(old.get("passed"))
        if was != c.passed:
            flips.append(Flip(c.case.id, was, c.passed, c.failed_checks() if not c.passed else []))
    if sample:
        return flips
    splits_run = {c.case.split for c in result.cases}
    flips += [Flip(i, bool(v.get("passed")), None) for i, v in before.items()
              if i not in seen and v.get("split", "any") in splits_run | {"any"}]
    return flips


def _sample_summary(result: RunResult, baseline: dict[str, Any],
                    evaluators: Sequence[Evaluator]) -> dict[str, Any] | None:
    """The baseline's metrics over only the questions this run asked, when it asked some of those it holds
    in the splits run (a sample: `--limit`, the CI gate): metrics over other questions would not compare.

    None when the run asked them all, or asked a question the baseline lacks or holds no scores for (a
    baseline of format 1): the baseline's own summary is compared then.
    """
    before = baseline.get("cases", {})
    asked = [c.case for c in result.cases]
    splits_run = {c.split for c in asked}
    held = [v for v in before.values() if v.get("split", "any") in splits_run | {"any"}]
    if len(asked) >= len(held) or any("scores" not in before.get(c.id, {}) for c in asked):
        return None
    return summarize([CaseResult(case=c, scores=before[c.id]["scores"], evaluators=evaluators) for c in asked],
                     evaluators=evaluators)


def compare(result: RunResult, baseline: dict[str, Any], *, tolerance: float = DEFAULT_TOLERANCE,
            evaluators: Sequence[Evaluator] | None = None, strict: bool = False) -> GateReport:
    """Compare a run with a baseline: each split's gated metrics fail beyond their allowed drop, groups are shown."""
    if tolerance < 0:
        raise UsageError(f"--tolerance must be >= 0, got {tolerance}")
    evaluators = evaluators or result.evaluators
    sampled = _sample_summary(result, baseline, evaluators)
    now, base = result.summary, sampled or baseline.get("summary", {})
    notes = _notes(result.meta, baseline.get("meta", {}))
    if sampled is not None:
        notes.append(f"compared on the {len(result.cases)} questions run, of the baseline's {len(baseline['cases'])}")
    changes: list[MetricChange] = []
    setting = result.meta.get("setting", "seed")
    for scope, cur_group, base_group, gated in _scopes(now, base, notes):
        for e in evaluators:
            change = _change(scope, e, cur_group, base_group, gated, tolerance, strict, e.held_at_zero(setting))
            if change is not None:
                changes.append(change)
    b_fail = (base.get("overall") or {}).get("failures", 0)
    c_fail = (now.get("overall") or {}).get("failures", 0)
    fail = MetricChange("overall", "failures", "failure rows (evaluator or answer raised)",
                        float(b_fail), float(c_fail), higher_is_better=False, gated=True, allowed=0.0)
    fail.regressed = c_fail > b_fail
    changes.append(fail)
    return GateReport(tolerance, changes, _flips(result, baseline.get("cases", {}), sample=sampled is not None),
                      notes)


def zero_check(result: RunResult, evaluators: Sequence[Evaluator] | None = None) -> GateReport:
    """Check only the metrics that must be 0 (wrong-paper answers), per split: for a run with no baseline."""
    setting = result.meta.get("setting", "seed")
    evaluators = [e for e in (evaluators or result.evaluators) if e.held_at_zero(setting)]
    splits = result.summary.get("splits") or {"overall": result.summary}
    changes = [c for name, groups in splits.items() for e in evaluators
               if (c := _change(name if name == "overall" else f"split:{name}", e, groups.get("overall"), None,
                                True, 0.0, True, True)) is not None]
    if not evaluators:  # honest about it: with no metric held at 0 this check has nothing to fail on
        note = (f"{setting} setting: not checked: there is no baseline for it, and no metric is held at 0 in "
                f"this setting (wrong-paper answers are held at 0 at scale only)")
    else:
        note = f"{setting} setting: no baseline; only {', '.join(e.label for e in evaluators)} are checked (must be 0)"
    return GateReport(0.0, changes, [], [note])
