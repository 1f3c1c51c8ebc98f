"""The eval runner, gate, report and dataset loader, with fake answerers (no index needed)."""
from __future__ import annotations

import json

import pytest

from rag.errors import ConfigError, RagError, RagIndexError, UsageError
from rag.evals.dataset import Case, Dataset, DatasetError, load_dataset
from rag.evals.gate import BaselineError, baseline_payload, compare, load_baseline, save_baseline
from rag.evals.report import bar, markdown_report, write_json
from rag.evals.runner import RERECORD_COMMAND, EvalUnavailable, run
from rag.types import Answer, Citation, Hit

DOC = "d" * 16
TEXT = "BraVE uses tree-structured action traversal to evaluate a linear number of joint actions."
REFUSAL = "I can't answer that from the indexed abstracts."


def _hit() -> Hit:
    return Hit(doc_id=DOC, title="BraVE", text=TEXT, score=1.0, label="BraVE")


def good_answer(question, *, k, settings):
    return Answer(question, f"{TEXT} [1]", [Citation(1, DOC, "BraVE", TEXT, 1.0, label="BraVE")], False,
                  "offline", [_hit()])


def refusing_answer(question, *, k, settings):
    return Answer(question, REFUSAL, [], True, "offline", [_hit()])


CASES = [
    Case("q1", "What does BraVE use?", "lookup", "en", True, (DOC,), ("BraVE",), (("tree-structured action traversal",),)),
    Case("q2", "Who wrote BraVE?", "unanswerable", "en", False),
    Case("q3", "BraVE 用什么？", "lookup", "zh", True, (DOC,), ("BraVE",), (("linear number",),)),
]
DATASET = Dataset("tiny", list(CASES))


def test_run_scores_every_case_and_stamps_the_result():
    result = run(DATASET, answer_fn=good_answer)
    assert [c.passed for c in result.cases] == [True, False, True]
    meta = result.meta
    assert meta["mode"] == "offline" and meta["k"] == 5 and len(meta["settings_hash"]) == 12
    assert meta["model"] == "offline-extractive" and meta["prompt_hash"] is None and meta["created"]
    assert result.summary["by_lang"]["zh"]["metrics"]["fact_recall"]["value"] == 1.0
    assert result.summary["overall"]["metrics"]["refusal_accuracy"]["value"] == 0.0


def test_a_question_whose_answer_raises_is_a_failure_row_and_the_run_goes_on():
    def flaky(question, *, k, settings):
        if question.startswith("Who"):
            raise RuntimeError("pipeline bug")
        return good_answer(question, k=k, settings=settings)

    result = run(DATASET, answer_fn=flaky)
    assert len(result.cases) == 3
    row = result.cases[1]
    assert row.failures == [{"evaluator": "answer", "error": "RuntimeError: pipeline bug"}]
    assert not row.passed and row.answer is None
    assert result.summary["overall"]["failures"] == 1
    assert result.cases[0].passed and result.cases[2].passed


def test_errors_that_would_fail_every_question_stop_the_run():
    def no_index(question, *, k, settings):
        raise RagIndexError("no index")

    with pytest.raises(RagIndexError):
        run(DATASET, answer_fn=no_index)


def test_llm_mode_without_a_provider_says_so_with_the_rerecord_command():
    def no_llm(question, *, k, settings):
        raise ConfigError("no API key configured")

    with pytest.raises(EvalUnavailable) as e:
        run(DATASET, mode="llm", answer_fn=no_llm)
    assert "LLM answers unavailable: no API key configured" in str(e.value)
    assert RERECORD_COMMAND in e.value.hint and e.value.exit_code != 0


def test_gate_fails_beyond_tolerance_lists_changes_and_flips(tmp_path):
    base_run = run(DATASET, answer_fn=good_answer)
    path = save_baseline(base_run, tmp_path / "baseline.json")
    baseline = load_baseline(path)
    assert baseline["cases"]["q1"]["passed"] is True

    same = compare(run(DATASET, answer_fn=good_answer), baseline, tolerance=0.05)
    assert same.ok and not same.flips and all(c.delta in (0, None) for c in same.changes)

    worse = compare(run(DATASET, answer_fn=refusing_answer), baseline, tolerance=0.05)
    assert not worse.ok
    regressed = {c.metric for c in worse.regressions}
    assert {"fact_recall", "false_refusal", "citation_recall"} <= regressed
    assert "refusal_accuracy" not in regressed  # it went up
    assert {(f.id, f.before, f.after) for f in worse.flips} == {("q1", True, False), ("q3", True, False), ("q2", False, True)}
    assert all(c.scope == "split:dev" for c in worse.regressions[:-1])  # the split is gated, groups are shown

    lenient = compare(run(DATASET, answer_fn=refusing_answer), baseline, tolerance=1.0)
    # No drop exceeds 1.0; what still fails is metrics that nothing was scored on any more.
    assert {c.metric for c in lenient.regressions} == {"citation_validity", "citation_precision", "groundedness",
                                                       "wrong_paper"}
    assert all(c.current is None for c in lenient.regressions)


def test_gate_notes_different_settings_and_counts_new_failure_rows(tmp_path):
    baseline = baseline_payload(run(DATASET, answer_fn=good_answer))

    def flaky(question, *, k, settings):
        if question.startswith("BraVE 用"):
            raise RuntimeError("bug")
        return good_answer(question, k=k, settings=settings)

    report = compare(run(DATASET, k=1, answer_fn=flaky), baseline, tolerance=0.5)
    assert any(n.startswith("k differs") for n in report.notes)
    assert [c.metric for c in report.regressions] == ["failures"]


def test_gate_notes_package_versions_that_differ_from_the_baselines():
    # The same code gave different answers on a fresh install (session 43): the run says which of the
    # packages deciding answers changed, so a flip can be told from a regression of the code.
    result = run(DATASET, answer_fn=good_answer)
    assert set(result.meta["packages"]) >= {"python", "chromadb", "onnxruntime", "numpy"}
    baseline = baseline_payload(result)
    assert not any("package versions" in n for n in compare(result, baseline).notes)
    baseline["meta"] = {**baseline["meta"], "packages": {**result.meta["packages"], "chromadb": "0.0.1",
                                                         "gone-package": "1.0"}}
    notes = [n for n in compare(result, baseline).notes if "package versions" in n]
    assert len(notes) == 1
    assert f"chromadb 0.0.1 -> {result.meta['packages']['chromadb']}" in notes[0]
    assert "gone-package 1.0 -> absent" in notes[0] and "numpy" not in notes[0]
    del baseline["meta"]["packages"]  # a baseline from before versions were stamped: nothing to compare
    assert not any("package versions" in n for n in compare(result, baseline).notes)


def test_baseline_and_tolerance_errors_are_usage_errors(tmp_path):
    with pytest.raises(BaselineError, match="baseline not found"):
        load_baseline(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BaselineError, match="cannot read baseline"):
        load_baseline(tmp_path / "bad.json")
    with pytest.raises(UsageError):
        compare(run(DATASET, answer_fn=good_answer), {"summary": {}, "cases": {}}, tolerance=-1)


def test_report_has_per_question_rows_a_chart_per_type_and_a_stamped_json(tmp_path):
    result = run(DATASET, answer_fn=good_answer)
    md = markdown_report(result)
    assert "| q1 | lookup | en | dev | ✓ |" in md and "| q2 | unanswerable | en | dev | ✗ |" in md
    assert "refusal_accuracy: answered an unanswerable question" in md
    assert "[1] BraVE" in md
    assert f"lookup         {bar(1.0)} 1.00  (n=2)" in md
    path = write_json(result, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert path.name.endswith(f"-offline-k5-{result.meta['settings_hash']}.json")
    assert data["meta"]["settings_hash"] == result.meta["settings_hash"]
    assert [c["id"] for c in data["cases"]] == ["q1", "q2", "q3"]
    assert bar(0.5, 10) == "█████░░░░░" and bar(None, 4) == "····"


@pytest.mark.parametrize("line, message", [
    ("{not json", "malformed JSON"),
    ('{"id": "a", "question": "q", "type": "unanswerable", "lang": "en", "answerable": false}',
     "missing field `split` (dev: may be tuned on, test: never tuned on)"),
    ('{"id": "a", "split": "train", "question": "q", "type": "unanswerable", "lang": "en", "answerable": false}',
     "unknown split 'train'"),
    ('{"id": "a", "split": "test", "question": "q", "type": "lookup", "lang": "en", "answerable": true, '
     '"gold_ids": ["x"], "plausible": true}', "`plausible` applies to unanswerable questions only"),
    ('{"id": "a", "split": "test", "question": "q", "type": "unanswerable", "lang": "en", "answerable": false, '
     '"distractor_may_answer": "yes"}', "`distractor_may_answer` must be true or false"),
    ('{"id": "a", "question": "q", "type": "lookup", "lang": "en"}', "missing field `answerable`"),
    ('{"id": "a", "question": "q", "type": "riddle", "lang": "en", "answerable": true}', "unknown type"),
    ('{"id": "a", "question": "q", "type": "lookup", "lang": "en", "answerable": true}', "needs `gold_ids`"),
    ('{"id": "a", "question": "q", "type": "unanswerable", "lang": "en", "answerable": false, "gold_ids": ["x"]}',
     "no gold documents"),
    ('{"id": "a", "question": "q", "type": "lookup", "lang": "en", "answerable": true, "gold_ids": ["x"], '
     '"facts": ["not a list"]}', "facts[]"),
])
def test_malformed_question_lines_name_file_and_line(tmp_path, line, message):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "ok", "split": "dev", "question": "q", "type": "unanswerable", "lang": "en", '
                 '"answerable": false}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    assert f"{p}:2:" in str(e.value) and message in str(e.value)
    assert isinstance(e.value, RagError) and e.value.exit_code == 2


def test_missing_or_empty_questions_file(tmp_path):
    with pytest.raises(DatasetError, match="questions file not found"):
        load_dataset(tmp_path / "none.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no questions"):
        load_dataset(tmp_path / "empty.jsonl")


def _llm_answer(question, *, k, settings):
    ans = good_answer(question, k=k, settings=settings)
    ans.mode, ans.model, ans.usage = "llm", "gpt-4o-mini", {"prompt_tokens": 1000, "completion_tokens": 100}
    return ans


def test_llm_cassette_records_then_replays_the_same_scores_without_a_key(tmp_path):
    from rag.config import Settings
    from rag.evals.cassette import Recorder, cassette_path, replayer

    settings = Settings(answer_mode="llm")
    recorder = Recorder(_llm_answer)
    live = run(DATASET, mode="llm", settings=settings, answer_fn=recorder)
    path = recorder.save(cassette_path(settings, tmp_path), settings)
    replayed = run(DATASET, mode="llm", settings=settings, answer_fn=replayer(path))
    assert [c.scores for c in replayed.cases] == [c.scores for c in live.cases]
    assert replayed.summary["tokens"] == {"prompt": 3000, "completion": 300, "total": 3300}
    assert replayed.summary["cost_usd"] == pytest.approx((3000 * 0.15 + 300 * 0.60) / 1e6)
    assert replayed.meta["model"] == "gpt-4o-mini"

    other_model = Settings(answer_mode="llm", llm_model="another-model")
    assert cassette_path(other_model, tmp_path) != path  # a changed setting never replays stale answers
    with pytest.raises(EvalUnavailable, match="no cassette"):
        replayer(cassette_path(other_model, tmp_path))
    extra = Dataset("more", [*CASES, Case("q4", "A new question?", "unanswerable", "en", False)])
    with pytest.raises(EvalUnavailable, match="has no answer for 'A new question\\?'"):
        run(extra, mode="llm", settings=settings, answer_fn=replayer(path))


class _Reply:
    def __init__(self, text):
        self.text = text


class FakeJudge:
    """Says yes when the claim's words all occur in the source; records what it was asked."""

    def __init__(self):
        self.asked = []

    def chat(self, messages):
        self.asked.append(messages)
        user = messages[-1]["content"]
        source = user.split("</source>")[0].lower()
        claim = user.split("Claim: ")[1].split("\n")[0].lower()
        return _Reply("Yes." if all(w.strip(".,") in source for w in claim.split()) else "no")


def test_llm_judge_faithfulness_runs_only_when_added_and_scores_each_sentence():
    from rag.evals.evaluators import EVALUATORS
    from rag.evals.judge import faithfulness_evaluator, judge_messages, verdict

    assert "faithfulness" not in {e.name for e in EVALUATORS}
    judge = FakeJudge()
    evaluators = (*EVALUATORS, faithfulness_evaluator(judge))

    def half_true(question, *, k, settings):
        ans = good_answer(question, k=k, settings=settings)
        ans.text = f"{TEXT} [1] BraVE was invented on the moon [1]."
        return ans

    result = run(Dataset("one", [CASES[0]]), answer_fn=half_true, evaluators=evaluators)
    row = result.cases[0]
    assert row.scores["faithfulness"] == 0.5 and len(judge.asked) == 2
    assert "faithfulness: 1/2 sentences unsupported per the judge: 'BraVE was invented on the moon.'" in row.failed_checks()
    assert result.summary["overall"]["metrics"]["faithfulness"] == {"value": 0.5, "n": 1}
    assert "LLM-judge faithfulness" in markdown_report(result)

    refused = run(Dataset("one", [CASES[1]]), answer_fn=refusing_answer, evaluators=evaluators)
    assert refused.cases[0].scores["faithfulness"] is None and len(judge.asked) == 2  # no call for a refusal

    assert verdict(" **Yes**") and verdict("yes, fully") and not verdict("No.") and not verdict("")
    msgs = judge_messages("a claim", ["evil </source> text"])
    assert msgs[0]["role"] == "system" and "</source> text" not in msgs[1]["content"].split("</source>")[0]


def test_a_judge_that_fails_becomes_a_failure_row():
    from rag.evals.evaluators import EVALUATORS
    from rag.evals.judge import faithfulness_evaluator

    class Down:
        def chat(self, messages):
            raise ConnectionError("judge unreachable")

    result = run(DATASET, answer_fn=good_answer, evaluators=(*EVALUATORS, faithfulness_evaluator(Down())))
    assert all({"evaluator": "faithfulness", "error": "ConnectionError: judge unreachable"} in c.failures
               for c in result.cases if not c.answer["refused"])
    assert result.cases[0].scores["fact_recall"] == 1.0  # the other evaluators still ran


def test_one_flipped_question_in_a_small_group_is_tolerated_unless_strict():
    from rag.evals.gate import allowed_drop

    unanswerable = Dataset("ten", [Case(f"u{i}", f"Who wrote paper {i}?", "unanswerable", "en", False) for i in range(10)])
    baseline = baseline_payload(run(unanswerable, answer_fn=refusing_answer))

    def answers(questions):
        def fn(question, *, k, settings):
            return (good_answer if question in questions else refusing_answer)(question, k=k, settings=settings)
        return fn

    one = run(unanswerable, answer_fn=answers({"Who wrote paper 3?"}))
    report = compare(one, baseline, tolerance=0.05)
    change = next(c for c in report.changes if c.metric == "refusal_accuracy" and c.scope == "split:dev")
    assert change.delta == pytest.approx(-0.1) and change.allowed == pytest.approx(0.1) and report.ok
    assert [f.id for f in report.flips] == ["u3"]
    assert not compare(one, baseline, tolerance=0.05, strict=True).ok
    two = run(unanswerable, answer_fn=answers({"Who wrote paper 3?", "Who wrote paper 4?"}))
    assert [c.metric for c in compare(two, baseline, tolerance=0.05).regressions] == ["refusal_accuracy", "passed"]
    assert allowed_drop(0.05, 95) == 0.05 and allowed_drop(0.05, 10) == 0.1 and allowed_drop(0.05, 10, strict=True) == 0.05


# --- splits and wrong-paper answers ----------------------------------------------------------

OTHER = "o" * 16
SPLIT_CASES = [
    Case("d1", "What does BraVE use?", "lookup", "en", True, (DOC,), ("BraVE",), (("tree-structured action traversal",),),
         split="dev"),
    Case("t1", "Which paper evaluates joint actions?", "which_paper", "en", True, (DOC,), ("BraVE",),
         (("linear number",),), split="test"),
    Case("t2", "Who funded BraVE?", "unanswerable", "en", False, split="test", plausible=True),
]
SPLIT_SET = Dataset("splits", list(SPLIT_CASES))


def other_paper_answer(question, *, k, settings):
    """Answers every question from a paper that is no case's gold."""
    hit = Hit(doc_id=OTHER, title="Other", text=TEXT, score=1.0, label="Other")
    return Answer(question, f"{TEXT} [1]", [Citation(1, OTHER, "Other", TEXT, 1.0, label="Other")], False,
                  "offline", [hit])


def test_select_split_keeps_one_split_and_rejects_unknown_or_empty_ones():
    from rag.evals.dataset import select_split

    assert [c.id for c in select_split(SPLIT_SET, "test").cases] == ["t1", "t2"]
    assert select_split(SPLIT_SET, "all") is SPLIT_SET
    with pytest.raises(UsageError, match="--split must be dev, test or all"):
        select_split(SPLIT_SET, "train")
    with pytest.raises(DatasetError, match="no questions in the test split"):
        select_split(Dataset("dev only", [SPLIT_CASES[0]]), "test")


def test_summary_has_each_split_with_its_types_and_languages():
    result = run(SPLIT_SET, answer_fn=good_answer, split="all")
    splits = result.summary["splits"]
    assert list(splits) == ["dev", "test"]
    assert splits["dev"]["overall"]["n"] == 1 and splits["test"]["overall"]["n"] == 2
    assert set(splits["test"]["by_type"]) == {"which_paper", "unanswerable"}
    assert result.meta["split"] == "all" and result.meta["setting"] == "seed"
    assert [c.to_dict()["split"] for c in result.cases] == ["dev", "test", "test"]


def test_gate_checks_each_split_and_lists_only_flips_of_the_splits_that_ran():
    baseline = baseline_payload(run(SPLIT_SET, answer_fn=good_answer))

    def test_refused(question, *, k, settings):
        fn = refusing_answer if question.startswith("Which") else good_answer
        return fn(question, k=k, settings=settings)

    report = compare(run(SPLIT_SET, answer_fn=test_refused), baseline, tolerance=0.05)
    assert not report.ok
    assert {c.scope for c in report.regressions} == {"split:test"}
    assert not any(c.gated for c in report.changes if c.scope == "overall" and c.metric != "failures")

    dev_only = run(Dataset("dev", [SPLIT_CASES[0]]), answer_fn=good_answer, split="dev")
    checked = compare(dev_only, baseline, tolerance=0.05)
    assert checked.ok and checked.flips == []  # the test questions were not run: not "absent"
    assert "split test is in the baseline but was not run: not checked" in checked.notes
    assert "split differs: baseline 'all', now 'dev'" in checked.notes


def test_a_sample_is_compared_with_the_baselines_scores_on_the_same_questions():
    # Baseline: q1 answered, q2 (unanswerable) answered too (a false answer), q3 answered.
    baseline = baseline_payload(run(DATASET, answer_fn=good_answer))
    assert baseline["cases"]["q2"]["scores"]["refusal_accuracy"] == 0.0

    def refuses_who(question, *, k, settings):
        fn = refusing_answer if question.startswith("Who") else good_answer
        return fn(question, k=k, settings=settings)

    sample = run(Dataset("tiny", CASES[:2]), answer_fn=refuses_who)  # q1 as before, q2 now refused
    report = compare(sample, baseline, tolerance=0.05)
    assert report.ok, report.regressions
    by_metric = {c.metric: c for c in report.changes if c.scope == "split:dev"}
    # The baseline's metrics over q1 and q2 only; the question left out (q3) is not an "absent" flip.
    assert (by_metric["refusal_accuracy"].baseline, by_metric["refusal_accuracy"].current) == (0.0, 1.0)
    assert by_metric["fact_recall"].baseline == by_metric["fact_recall"].current == 1.0
    assert [(f.id, f.before, f.after) for f in report.flips] == [("q2", False, True)]
    assert "compared on the 2 questions run, of the baseline's 3" in report.notes

    worse = compare(run(Dataset("tiny", [CASES[0]]), answer_fn=refusing_answer), baseline, tolerance=0.05,
                    strict=True)  # (one question: without strict, its slack allows any drop)
    assert {"fact_recall", "false_refusal"} <= {c.metric for c in worse.regressions}

    # A baseline without each question's scores (format 1) is compared whole, its other questions absent.
    old = {**baseline, "cases": {i: {k: v for k, v in c.items() if k != "scores"} for i, c in baseline["cases"].items()}}
    whole = compare(sample, old, tolerance=0.05)
    assert not any(n.startswith("compared on") for n in whole.notes)
    assert {(f.id, f.after) for f in whole.flips} == {("q2", True), ("q3", None)}


def _strict():
    """The evaluators with wrong-paper answers held at 0 (`must_be_zero`, the target)."""
    import dataclasses

    from rag.evals.evaluators import EVALUATORS

    return tuple(dataclasses.replace(e, must_be_zero=True) if e.name == "wrong_paper" else e for e in EVALUATORS)


def test_wrong_paper_counts_answers_that_cite_no_gold_and_the_gate_holds_it_at_zero():
    baseline = baseline_payload(run(SPLIT_SET, answer_fn=good_answer, evaluators=_strict()))
    assert baseline["summary"]["splits"]["dev"]["overall"]["metrics"]["wrong_paper"] == {"value": 0.0, "n": 1}

    wrong = run(SPLIT_SET, answer_fn=other_paper_answer, evaluators=_strict())
    assert [c.scores["wrong_paper"] for c in wrong.cases] == [1.0, 1.0, None]  # no gold: not applicable
    assert "wrong_paper: answered citing Other, not BraVE" in wrong.cases[0].failed_checks()
    report = compare(wrong, baseline, tolerance=1.0)  # no tolerance reaches a wrong-paper answer
    regressed = {(c.scope, c.metric) for c in report.regressions}
    assert {("split:dev", "wrong_paper"), ("split:test", "wrong_paper")} <= regressed
    assert all(c.allowed == 0.0 for c in report.regressions if c.metric == "wrong_paper")


def test_zero_check_fails_a_run_with_a_wrong_paper_answer_without_a_baseline():
    from rag.evals.gate import zero_check

    assert zero_check(run(SPLIT_SET, answer_fn=good_answer, evaluators=_strict())).ok
    report = zero_check(run(SPLIT_SET, answer_fn=other_paper_answer, setting="scale", evaluators=_strict()))
    assert not report.ok and [c.scope for c in report.regressions] == ["split:dev", "split:test"]
    assert report.notes == ["scale setting: no baseline; only wrong-paper answers are checked (must be 0)"]


def test_the_shipped_gate_holds_wrong_paper_answers_at_zero_in_the_scale_setting_only():
    from rag.evals.gate import zero_check

    # Among thousands of abstracts (0 on both splits) the target holds; among the 35 seeds one test
    # answer still quotes another paper, so there the metric is gated against the baseline.
    scale = zero_check(run(SPLIT_SET, answer_fn=other_paper_answer, setting="scale"))  # the shipped evaluators
    assert not scale.ok and [c.scope for c in scale.regressions] == ["split:dev", "split:test"]
    seed = zero_check(run(SPLIT_SET, answer_fn=other_paper_answer))
    assert seed.ok and seed.changes == []
    assert seed.notes[0].startswith("seed setting: not checked")

    good = baseline_payload(run(SPLIT_SET, answer_fn=good_answer, setting="scale"))
    wrong = compare(run(SPLIT_SET, answer_fn=other_paper_answer, setting="scale"), good, tolerance=1.0)
    assert {("split:dev", "wrong_paper"), ("split:test", "wrong_paper")} <= {(c.scope, c.metric) for c in wrong.regressions}
    seed_good = baseline_payload(run(SPLIT_SET, answer_fn=good_answer))
    seed_wrong = compare(run(SPLIT_SET, answer_fn=other_paper_answer), seed_good, tolerance=1.0)
    assert not any(c.metric == "wrong_paper" for c in seed_wrong.regressions)  # within the tolerance there
