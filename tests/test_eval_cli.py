"""`rag eval` end to end on the shared seed index: the CI gate, the -k 1 failure, bad input."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from conftest import small_question_set as _small_set
from rag.cli import app
from rag.evals.dataset import Dataset, load_dataset, select_split
from rag.evals.gate import DEFAULT_TOLERANCE, compare, load_baseline
from rag.evals.runner import run, select_cases

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "questions.jsonl"
BASELINE = ROOT / "eval" / "baseline.json"
runner = CliRunner()


# The CI gate asks every test question and a fixed sample of the dev questions, stratified by type and
# language, and compares with the baseline's scores on those same questions (rag.evals.gate). The whole
# set took 7 min of `make test`'s 12 on two cores and grows with every question added; `rag eval --check`
# still runs all of them.
GATE_DEV_SAMPLE = 1300


def gate_questions() -> Dataset:
    """Every test question and GATE_DEV_SAMPLE dev questions, in file order."""
    questions = load_dataset(QUESTIONS)
    dev = select_cases(select_split(questions, "dev").cases, limit=GATE_DEV_SAMPLE)
    chosen = {c.id for c in dev} | {c.id for c in select_split(questions, "test").cases}
    return replace(questions, cases=[c for c in questions.cases if c.id in chosen])


def test_offline_eval_stays_within_tolerance_of_the_committed_baseline(seed_index):
    """The CI gate: every overall metric within the tolerance of eval/baseline.json on the same questions."""
    result = run(gate_questions(), mode="offline", settings=seed_index)
    baseline = load_baseline(BASELINE)
    assert baseline["meta"]["mode"] == "offline" and baseline["meta"]["k"] == seed_index.k
    report = compare(result, baseline, tolerance=DEFAULT_TOLERANCE)
    # compared with the baseline's scores on the sampled questions, not with its whole-set metrics
    sampled = f"compared on the {len(result.cases)} questions run, of the baseline's {len(baseline['cases'])}"
    assert sampled in report.notes, report.notes
    lines = [f"{c.metric}: {c.baseline} -> {c.current}" for c in report.regressions]
    flips = [f"{f.id}: {f.before} -> {f.after}" for f in report.flips]
    assert report.ok, "offline eval regressed:\n" + "\n".join(lines + flips)
    assert result.summary["overall"]["failures"] == 0


def test_check_with_k1_fails_against_the_default_k_baseline(seed_settings, tmp_path):
    # Questions about two or more papers: with one hit each, recall@k and their answers must fall.
    small = _small_set(tmp_path, ("multi-02", "multi-07", "multi-08", "multi-09", "lookup-02"))
    base, out = tmp_path / "base.json", tmp_path / "results"
    args = ["eval", "--questions", str(small), "--baseline", str(base), "--out", str(out)]
    saved = runner.invoke(app, args + ["--save-baseline"])
    assert saved.exit_code == 0, saved.output
    res = runner.invoke(app, args + ["--check", "-k", "1"])
    assert res.exit_code == 1, res.output
    assert "REGRESSED" in res.output and "retrieval recall@k" in res.output
    assert "check FAILED" in res.output and "recall_at_k" in res.output
    assert "note: k differs: baseline 5, now 1" in res.output
    assert "question(s) flipped" in res.output


def test_save_baseline_then_check_then_json_on_a_small_set(seed_settings, tmp_path):
    small = _small_set(tmp_path, ("lookup-02", "num-02", "unans-01", "multi-08", "zh-02"))
    base, out = tmp_path / "base.json", tmp_path / "results"
    args = ["eval", "--questions", str(small), "--baseline", str(base), "--out", str(out)]
    saved = runner.invoke(app, args + ["--save-baseline"])
    assert saved.exit_code == 0, saved.output
    assert "fact recall" in saved.output and "baseline saved" in saved.output
    assert base.exists() and base.with_suffix(".md").exists()

    checked = runner.invoke(app, args + ["--check"])
    assert checked.exit_code == 0, checked.output
    assert "check passed" in checked.output and "no question flipped" in checked.output

    as_json = runner.invoke(app, args + ["--json"])
    assert as_json.exit_code == 0
    data = json.loads(as_json.stdout)
    assert data["meta"]["mode"] == "offline" and len(data["cases"]) == 5
    assert {c["id"] for c in data["cases"]} == {"lookup-02", "num-02", "unans-01", "multi-08", "zh-02"}
    reports = sorted(out.glob("*.md"))
    assert reports and "| lookup-02 | lookup | en |" in reports[-1].read_text(encoding="utf-8")


def test_bad_input_is_a_one_line_error(seed_settings, tmp_path):
    missing = runner.invoke(app, ["eval", "--questions", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and missing.output.strip().startswith("error: questions file not found")
    assert "Traceback" not in missing.output and len(missing.output.strip().splitlines()) == 1

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"\n', encoding="utf-8")
    res = runner.invoke(app, ["eval", "--questions", str(bad)])
    assert res.exit_code == 2 and f"{bad}:1: malformed JSON" in res.output

    for flags in (["--mode", "gpt"], ["-k", "0"], ["--tolerance", "-0.1"], ["--check", "--save-baseline"]):
        res = runner.invoke(app, ["eval", "--questions", str(QUESTIONS), *flags])
        assert res.exit_code == 2 and res.output.startswith("error: "), (flags, res.output)

    res = runner.invoke(app, ["eval", "--check", "--baseline", str(tmp_path / "none.json"), "--questions", str(QUESTIONS)])
    assert res.exit_code == 2 and "baseline not found" in res.output


def test_llm_mode_without_a_provider_or_cassette_says_so_and_prints_the_rerecord_command(tmp_path):
    small = _small_set(tmp_path, ("lookup-02",))
    res = runner.invoke(app, ["eval", "--mode", "llm", "--questions", str(small), "--out", str(tmp_path / "r"),
                              "--cassettes", str(tmp_path / "cassettes")])
    assert res.exit_code == 3, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: LLM mode: no LLM configured and no cassette")
    assert "re-record with: OPENAI_API_KEY=sk-... .venv/bin/rag eval --mode llm --record" in lines[0]


def test_llm_mode_with_a_failing_provider_stops_in_one_line(seed_settings, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on the discard port
    monkeypatch.setenv("RAG_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("RAG_LLM_TIMEOUT", "3")
    small = _small_set(tmp_path, ("lookup-02",))
    res = runner.invoke(app, ["eval", "--mode", "llm", "--questions", str(small), "--out", str(tmp_path / "r")])
    assert res.exit_code == 3, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: LLM answers unavailable:")
    assert "--mode llm --record" in lines[0]


def test_llm_mode_records_a_cassette_from_a_live_server_then_replays_it_offline(seed_settings, tmp_path, monkeypatch):
    import rag
    from openai_server import FakeOpenAI, Reply

    small = _small_set(tmp_path, ("lookup-02", "unans-01"))
    hits = rag.retrieve("On which benchmark is SoLS evaluated?", k=seed_settings.k, settings=seed_settings)
    n = next(i for i, h in enumerate(hits, start=1) if h.label == "SoLS")
    args = ["eval", "--mode", "llm", "--questions", str(small), "--cassettes", str(tmp_path / "cassettes"),
            "--out", str(tmp_path / "results"), "--json"]
    script = [Reply(f"SoLS is evaluated on the AndroidWorld benchmark [{n}]."), Reply(rag.REFUSAL)]
    with FakeOpenAI(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        live = runner.invoke(app, args + ["--record"])
    assert live.exit_code == 0, live.output
    data = json.loads(live.stdout)
    assert data["meta"]["mode"] == "llm" and data["meta"]["model"] == seed_settings.llm_model
    assert data["meta"]["prompt_hash"] and data["summary"]["tokens"]["total"] == 300
    assert data["summary"]["cost_usd"] is not None  # gpt-4o-mini is in the price table
    assert [(c["id"], c["passed"]) for c in data["cases"]] == [("lookup-02", True), ("unans-01", True)]
    assert len(server.requests) == 2 and "cassette saved" in live.stderr
    assert len(list((tmp_path / "cassettes").glob("llm-*.json"))) == 1

    monkeypatch.delenv("OPENAI_BASE_URL")
    replay = runner.invoke(app, args)
    assert replay.exit_code == 0, replay.output
    again = json.loads(replay.stdout)
    assert [c["scores"] for c in again["cases"]] == [c["scores"] for c in data["cases"]]
    assert again["summary"]["tokens"] == data["summary"]["tokens"]


def test_judge_without_an_llm_is_a_one_line_error(tmp_path):
    small = _small_set(tmp_path, ("lookup-02",))
    res = runner.invoke(app, ["eval", "--judge", "--questions", str(small), "--out", str(tmp_path / "r")])
    assert res.exit_code == 5, res.output
    assert res.output.startswith("error: LLM answers need OPENAI_API_KEY") and len(res.output.strip().splitlines()) == 1
