"""The CLI: exit codes, JSON contracts, errors without tracebacks."""
import json

import pytest
from typer.testing import CliRunner

from rag.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, list(args))


def test_ask_json_contract(seed_settings):
    res = _run("ask", "Which paper introduces a tactile manipulation benchmark?", "--json", "-k", "3")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    for key in ("question", "answer", "mode", "refused", "citations", "sources", "timings_ms"):
        assert key in out
    assert out["mode"] == "offline" and out["refused"] is False and len(out["sources"]) == 3
    cite = out["citations"][0]
    assert set(cite) >= {"n", "doc_id", "title", "text", "score"}
    assert set(out["sources"][0]) >= {"doc_id", "title", "text", "score"}
    assert f"[{cite['n']}]" in out["answer"]


def test_ask_prints_answer_and_sources(seed_settings):
    res = _run("ask", "What does RoboRefer do?")
    assert res.exit_code == 0
    assert "RoboRefer" in res.stdout and "Sources:" in res.stdout and "offline mode" in res.stdout


def test_search_and_sources_json(seed_settings):
    hits = json.loads(_run("search", "spiking neural network", "--json", "-k", "2").stdout)
    assert len(hits) == 2 and {"doc_id", "title", "text", "score"} <= set(hits[0])
    docs = json.loads(_run("sources", "--json").stdout)
    assert len(docs) == 35 and {"id", "label", "files"} <= set(docs[0])
    assert sum(len(d["files"]) == 2 for d in docs) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (("ask", ""), "question is empty"),
        (("ask", "   "), "question is empty"),
        (("ask", "x", "-k", "0"), "-k must be at least 1"),
        (("search", "x", "-k", "-3"), "-k must be at least 1"),
        (("ingest", "/definitely/missing"), "no such file"),
    ],
)
def test_usage_errors_are_one_line_exit_2(seed_settings, args, message):
    res = _run(*args)
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_ingest_reports_and_skips_bad_files(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    from conftest import seed_paragraphs

    (data / "good.txt").write_text(seed_paragraphs()[0], encoding="utf-8")
    (data / "bad.jsonl").write_text("{broken\n", encoding="utf-8")
    res = _run("ingest", "--json", str(data))
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["added"] == 1 and report["documents"] == 1
    assert any("bad.jsonl:1" in s for s in report["skipped"])


def test_missing_index_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_INDEX_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "no-data"))
    res = _run("sources")
    assert res.exit_code == 4 and "rag ingest" in res.stderr


def test_bad_config_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("RAG_K", "many")
    res = _run("search", "x")
    assert res.exit_code == 5 and "RAG_K" in res.stderr and "Traceback" not in res.output


def test_index_folder_that_cannot_be_created_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("RAG_INDEX_DIR", str(blocker / "index"))
    for args in (("ingest", "-q"), ("ask", "What does BraVE do?")):
        res = _run(*args)
        assert res.exit_code == 4, res.output
        assert "which is a file, not a folder" in res.stderr and "RAG_INDEX_DIR" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["ask", "search", "sources", "chat"])
def test_help_shows_no_type_placeholders(command):
    res = _run(command, "--help")
    assert res.exit_code == 0 and "--where FIELD=VALUE" in res.stdout
    assert "<bool>" not in res.stdout and "<list" not in res.stdout


def test_ask_prints_readable_text_and_similarity_json_keeps_the_original(seed_settings):
    question = "What is the sample complexity of the single-timescale actor-critic algorithm?"
    shown = _run("ask", question).stdout
    assert "O(ε^-3)" in shown and "\\epsilon" not in shown and "\\textbf" not in shown
    assert "similarity 0." in shown and "(score" not in shown
    assert "Global convergence of the single-timescale actor-critic algorithm" in shown  # its label
    out = json.loads(_run("ask", question, "--json").stdout)
    assert "\\epsilon" in out["answer"] and out["raw_text"] == out["answer"]
    cite = out["citations"][0]
    assert {"authors", "year", "venue", "dense_score", "score"} <= set(cite)
    assert 0 < cite["score"] < 1 and cite["score"] != cite["dense_score"]  # the ranking's score, not the similarity
    assert {"authors", "year", "venue"} <= set(out["sources"][0])


def test_search_shows_similarity_not_the_fused_score(seed_settings):
    res = _run("search", "spiking neural networks", "-k", "2")
    assert res.exit_code == 0 and res.stdout.count("similarity 0.") == 2 and "score" not in res.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("ask", "x", "--where", "year"), "--where takes FIELD=VALUE"),
        (("search", "x", "--where", "color=red"), "unknown filter field 'color'"),
        (("search", "x", "--where", "year=next"), "four digits"),
        (("sources", "--where", "venue="), "--where takes FIELD=VALUE"),
        (("chat", "--where", "year=1"), "four digits"),
        (("ask", "What does BraVE do?", "--where", "year=2031"), "no indexed abstract matches year=2031"),
        (("search", "BraVE", "--where", "author=Nobody"), "no indexed abstract matches author=Nobody"),
        (("chat", "--where", "venue=Nowhere"), "no indexed abstract matches venue=Nowhere"),
    ],
)
def test_bad_or_empty_filters_are_one_line_exit_2(seed_settings, args, message):
    res = _run(*args)
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_sources_json_gains_metadata_fields(seed_settings):
    docs = json.loads(_run("sources", "--json").stdout)
    assert {"id", "label", "title", "files", "authors", "year", "venue", "url"} <= set(docs[0])
    assert "Safe RLHF-V" in {d["label"] for d in docs}
