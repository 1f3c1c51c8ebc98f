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
