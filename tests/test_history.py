"""The answer log: where it lives, what it keeps, `rag log`, `rag ask -c` and `rag ask -`."""
from __future__ import annotations

import json
import os
import sqlite3

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.errors import ConfigError
from rag.history import AnswerLog, log_path, to_markdown
from rag.types import Answer, Citation, Hit

runner = CliRunner()


def _answer(question: str, label: str = "RoboRefer", text: str = "RoboRefer is a VLM. [1]") -> Answer:
    hit = Hit(doc_id="d1", chunk_id="d1:0", title=None, text="…", score=0.02, label=label)
    return Answer(question=question, text=text, refused=False, mode="offline", sources=[hit], settings_hash="abc123",
                  citations=[Citation(n=1, doc_id="d1", title=None, text="…", score=0.02, label=label,
                                      url="https://example.org/p")],
                  timings_ms={"total": 12.5})


def test_default_path_is_under_the_state_folder_and_can_be_moved_or_turned_off(tmp_path):
    assert log_path({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "rag" / "log.db"
    assert log_path({"HOME": "/h"}).parts[-3:] == ("state", "rag", "log.db")  # ~/.local/state/rag/log.db
    assert log_path({"RAG_LOG": str(tmp_path / "x.db")}) == tmp_path / "x.db"
    assert log_path({"RAG_LOG": "off"}) is None and log_path({"RAG_LOG": ""}) is None


def test_tests_never_write_the_users_home(tmp_path):
    """The autouse fixture points XDG_STATE_HOME at the test's folder."""
    assert log_path() == tmp_path / "state" / "rag" / "log.db"


def test_record_keeps_every_field_and_search_finds_it(tmp_path):
    log = AnswerLog(tmp_path / "log.db")
    first = log.record(_answer("What does RoboRefer do?"), question="What does RoboRefer do?", conversation="c1")
    log.record(_answer("What dataset did RoboRefer use?", text="RefSpatial. [1]"), question="what did it use?",
               conversation="c1")
    log.record(_answer("What does BraVE do?", label="BraVE", text="BraVE estimates values. [1]"),
               question="What does BraVE do?", conversation="c2")
    assert first == 1
    entries = log.recent(10)
    assert [e.id for e in entries] == [1, 2, 3]  # oldest first
    e = entries[1]
    assert (e.question, e.searched, e.answer, e.mode) == ("what did it use?", "What dataset did RoboRefer use?",
                                                          "RefSpatial. [1]", "offline")
    assert e.rewritten and not entries[0].rewritten
    assert e.citations[0]["label"] == "RoboRefer" and e.citations[0]["url"] == "https://example.org/p"
    assert e.sources == ["RoboRefer"] and e.timings == {"total": 12.5} and e.settings_hash == "abc123"
    assert e.time.endswith("Z") and e.subject == "RoboRefer"
    assert [x.id for x in log.recent(10, search="refspatial")] == [2]
    assert [x.id for x in log.recent(10, search="100%_")] == []  # LIKE wildcards are literal
    assert [x.id for x in log.recent(2)] == [2, 3]
    assert [x.conversation for x in log.last_conversation()] == ["c2"]


def test_markdown_has_each_answer_and_its_references(tmp_path):
    log = AnswerLog(tmp_path / "log.db")
    log.record(_answer("What dataset did RoboRefer use?"), question="what did it use?", conversation="c")
    md = to_markdown(log.recent(0))
    assert "## what did it use?" in md and "Searched as: What dataset did RoboRefer use?" in md
    assert "RoboRefer is a VLM. [1]" in md
    assert "References:" in md and "- [1] **RoboRefer** — `d1` — <https://example.org/p>" in md


def test_a_broken_log_warns_once_and_never_raises(tmp_path):
    bad = tmp_path / "log.db"
    bad.write_text("this is not a database " * 100, encoding="utf-8")
    warnings: list[str] = []
    log = AnswerLog(bad, warn=warnings.append)
    assert log.record(_answer("q"), question="q", conversation="c") is None
    assert log.record(_answer("q"), question="q", conversation="c") is None
    assert len(warnings) == 1 and str(bad) in warnings[0] and "RAG_LOG=off" in warnings[0]
    with pytest.raises(ConfigError, match="cannot read the answer log"):
        log.recent()


def test_a_log_in_a_folder_that_cannot_be_created_warns_once(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    warnings: list[str] = []
    log = AnswerLog(blocker / "rag" / "log.db", warn=warnings.append)
    log.record(_answer("q"), question="q", conversation="c")
    assert len(warnings) == 1 and "cannot write the answer log" in warnings[0]
    assert log.recent() == []  # nothing there to read


def test_reading_never_creates_the_log(tmp_path):
    log = AnswerLog(tmp_path / "none" / "log.db")
    assert log.recent() == [] and log.last_conversation() == []
    assert not (tmp_path / "none").exists()


# -- the CLI ----------------------------------------------------------------------------------
def test_ask_logs_and_rag_log_lists_searches_and_exports(seed_settings, tmp_path):
    assert runner.invoke(app, ["ask", "What does RoboRefer do?"]).exit_code == 0
    assert runner.invoke(app, ["ask", "Which paper introduces a tactile manipulation benchmark?"]).exit_code == 0
    assert (tmp_path / "state" / "rag" / "log.db").is_file()

    res = runner.invoke(app, ["log"])
    assert res.exit_code == 0
    assert "#1" in res.stdout and "Q: What does RoboRefer do?" in res.stdout and "cites: [1] RoboRefer" in res.stdout
    assert "#2" in res.stdout and "offline" in res.stdout

    res = runner.invoke(app, ["log", "-q", "tactile"])
    assert "#2" in res.stdout and "#1 " not in res.stdout

    res = runner.invoke(app, ["log", "--markdown", "-n", "1"])
    assert res.stdout.startswith("# rag answers") and "## Which paper introduces" in res.stdout
    assert "References:" in res.stdout and "## What does RoboRefer do?" not in res.stdout  # -n 1: the last only

    entries = json.loads(runner.invoke(app, ["log", "--json"]).stdout)
    assert [e["question"] for e in entries] == ["What does RoboRefer do?",
                                                "Which paper introduces a tactile manipulation benchmark?"]
    assert {"citations", "mode", "model", "timings", "settings_hash", "conversation"} <= set(entries[0])
    assert entries[0]["conversation"] != entries[1]["conversation"]  # each `rag ask` is its own conversation


def test_ask_continue_rewrites_from_the_last_conversation(seed_settings):
    assert runner.invoke(app, ["ask", "What does RoboRefer do?"]).exit_code == 0
    res = runner.invoke(app, ["ask", "-c", "what dataset did it use?", "--json"])
    assert res.exit_code == 0, res.output
    assert "↳ searching: What dataset did RoboRefer use?" in res.stderr
    out = json.loads(res.stdout)
    assert out["question"] == "What dataset did RoboRefer use?" and out["asked"] == "what dataset did it use?"
    assert "RefSpatial" in out["answer"]
    entries = json.loads(runner.invoke(app, ["log", "--json"]).stdout)
    assert entries[0]["conversation"] == entries[1]["conversation"] == out["conversation"]
    # without -c the same follow-up is not tied to anything
    res = runner.invoke(app, ["ask", "what dataset did it use?", "--json"])
    assert json.loads(res.stdout)["question"] == "what dataset did it use?"


def test_ask_continue_with_an_empty_or_disabled_log(seed_settings, monkeypatch):
    res = runner.invoke(app, ["ask", "-c", "What does BraVE do?"])
    assert res.exit_code == 0 and "starts a new conversation" in res.stderr
    monkeypatch.setenv("RAG_LOG", "off")
    res = runner.invoke(app, ["ask", "-c", "What does BraVE do?"])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "RAG_LOG=off" in res.stderr and "hint:" in res.stderr


def test_ask_dash_reads_the_question_from_stdin(seed_settings):
    res = runner.invoke(app, ["ask", "-", "--json"], input="What does\nRoboRefer do?\n")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["question"] == "What does RoboRefer do?"
    res = runner.invoke(app, ["ask", "-"], input="  \n")
    assert res.exit_code == 2 and "question is empty" in res.stderr


def test_a_broken_log_never_breaks_answering(seed_settings, tmp_path, monkeypatch):
    bad = tmp_path / "broken.db"
    bad.write_bytes(b"\x00junk" * 200)
    monkeypatch.setenv("RAG_LOG", str(bad))
    res = runner.invoke(app, ["ask", "What does RoboRefer do?"])
    assert res.exit_code == 0 and "we propose RoboRefer" in res.stdout
    assert res.stderr.count("cannot write the answer log") == 1 and "hint:" in res.stderr
    res = runner.invoke(app, ["ask", "-c", "what dataset did it use?"])
    assert res.exit_code == 0 and "answering without the conversation" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1  # one warning, not one per use of the log
    res = runner.invoke(app, ["log"])
    assert res.exit_code == 5 and "cannot read the answer log" in res.stderr and "hint:" in res.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files")
def test_a_read_only_log_never_breaks_answering(seed_settings, tmp_path, monkeypatch):
    path = tmp_path / "ro.db"
    sqlite3.connect(path).close()
    path.chmod(0o444)
    monkeypatch.setenv("RAG_LOG", str(path))
    res = runner.invoke(app, ["ask", "What does RoboRefer do?"])
    assert res.exit_code == 0 and res.stderr.count("cannot write the answer log") == 1


def test_log_off_and_path(monkeypatch, tmp_path):
    res = runner.invoke(app, ["log", "--path"])
    assert res.stdout.strip() == str(tmp_path / "state" / "rag" / "log.db")
    res = runner.invoke(app, ["log"])
    assert res.exit_code == 0 and "no answers logged yet" in res.stderr
    monkeypatch.setenv("RAG_LOG", "off")
    res = runner.invoke(app, ["log"])
    assert res.exit_code == 0 and "off" in res.stderr


def test_chat_logs_each_answer_in_one_conversation(seed_settings, tmp_path):
    res = runner.invoke(app, ["chat"], input="What does RoboRefer do?\nwhat dataset did it use?\n/reset\n"
                                              "What does BraVE do?\n/exit\n")
    assert res.exit_code == 0, res.output
    entries = AnswerLog(tmp_path / "state" / "rag" / "log.db").recent(0)
    assert [e.question for e in entries] == ["What does RoboRefer do?", "what dataset did it use?",
                                             "What does BraVE do?"]
    assert entries[1].searched == "What dataset did RoboRefer use?"
    assert entries[0].conversation == entries[1].conversation != entries[2].conversation  # /reset starts anew
