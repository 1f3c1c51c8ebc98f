"""Crash safety and concurrency: SIGKILLed ingests, parallel ingests, corrupt indexes."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rag
from rag.cli import app
from rag.config import Settings
from rag.corpus import read_corpus
from rag import ingest
from rag.index import lexical
from rag.index.paths import IndexPaths
from rag.index.store import Store

from conftest import ROOT, seed_paragraphs

# A child process runs a real ingest and SIGKILLs itself at the named point. Progress stages
# are the pipeline's own: parse (files being read), embed (after a batch was written to
# Chroma), lexical (every chunk written, BM25 not yet rebuilt); "write" dies inside a Chroma
# write, after half of a batch reached the store.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from rag.config import Settings
    from rag import ingest
    from rag.index.store import Store

    settings = Settings(data_dir=sys.argv[1], index_dir=sys.argv[2])
    point = sys.argv[3]

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def progress(stage, done, total):
        if stage == point and (stage != "embed" or done > 0):
            die()

    if point == "write":
        real_add = Store.add
        def add(self, docs, chunks, vectors, *args, **kwargs):
            real_add(self, docs, chunks[:1], vectors[:1], *args, **kwargs)
            die()
        Store.add = add
    ingest(settings=settings, progress=progress)
    """
)


@pytest.fixture
def corpus_dir(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    paras = seed_paragraphs()
    (data / "a.txt").write_text("\n\n".join(paras[:6]), encoding="utf-8")
    (data / "b.txt").write_text("\n\n".join(paras[5:11]), encoding="utf-8")  # paragraph 5 in both
    return data


def _assert_exactly_once(settings: Settings, data: Path) -> None:
    wanted = {d.id for d in read_corpus([data]).documents}
    store = Store(settings)
    docs = store.documents()
    assert set(docs) == wanted  # every document, and no orphans
    chunk_ids = [cid for d in docs.values() for cid in d.chunk_ids]
    assert len(chunk_ids) == len(set(chunk_ids)) == store.count()
    for d in docs.values():
        assert len(d.chunk_ids) == d.n_chunks  # no half-written document
    assert sorted(lexical.load(IndexPaths.of(settings).lexical).chunk_ids) == sorted(chunk_ids)


@pytest.mark.parametrize("point", ["parse", "embed", "write", "lexical"])
def test_sigkilled_ingest_then_rerun_holds_every_document_once(tmp_path, corpus_dir, point):
    index = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", CHILD, str(corpus_dir), str(index), point],
                           env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr
    settings = Settings(data_dir=str(corpus_dir), index_dir=str(index))
    ingest(settings=settings)
    _assert_exactly_once(settings, corpus_dir)
    again = ingest(settings=settings)
    assert again.chunks_embedded == 0 and again.added == 0


# Children that open a new store at the same moment: each imports chromadb, says it is ready,
# then waits for the `go` file, so their opens overlap (imports alone spread them over seconds).
OPENER = textwrap.dedent(
    """
    import os, sys, time
    import chromadb
    from rag.config import Settings
    from rag.index.store import Store

    go = sys.argv[2]
    open(go + "." + str(os.getpid()), "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)
    Store(Settings(data_dir=sys.argv[1], index_dir=sys.argv[1]), create=True)
    """
)


def test_processes_opening_a_new_index_at_once_all_succeed(tmp_path):
    # chromadb creates its tables when a client opens; unserialized, one of two simultaneous
    # openers failed ("table collections already exists", "database is locked"). That made
    # `rag ingest` fail when a second one started while the first was creating the index.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for trial in range(5):
        folder, go = tmp_path / f"index{trial}", tmp_path / f"go{trial}"
        children = [subprocess.Popen([sys.executable, "-c", OPENER, str(folder), str(go)], env=env,
                                     stderr=subprocess.PIPE, text=True) for _ in range(4)]
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob(f"go{trial}.*"))) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()
        errors = [c.communicate(timeout=120)[1] for c in children]
        assert [c.returncode for c in children] == [0] * 4, "\n".join(errors)
        assert len(Store(Settings(data_dir=str(folder), index_dir=str(folder))).documents()) == 0


def test_a_file_system_without_locks_still_opens_the_index(tmp_path, monkeypatch):
    # Some network mounts refuse flock (ENOLCK): the open lock is a guard against a race, so there the
    # store opens unguarded, as before the lock, rather than failing every question.
    import errno

    from rag.index import lock

    def no_locks(fh, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lock.fcntl, "flock", no_locks)
    settings = Settings(data_dir=str(tmp_path), index_dir=str(tmp_path / "index"))
    Store(settings, create=True)
    assert len(Store(settings).documents()) == 0


def test_two_ingests_at_once_are_serialized(tmp_path, corpus_dir):
    index = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAG_INDEX_DIR": str(index), "RAG_DATA_DIR": str(corpus_dir)}
    cmd = [sys.executable, "-m", "rag.cli", "ingest", "--json"]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    second = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out1, err1 = first.communicate(timeout=300)
    out2, err2 = second.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, err1 + err2
    reports = [json.loads(out1), json.loads(out2)]
    # One of them did the work; the other said so, waited for the lock and found nothing left to do.
    assert "another `rag ingest` is running" in err1 + err2 and "waiting" in err1 + err2
    n_docs = len(read_corpus([corpus_dir]).documents)
    assert sorted(r["added"] for r in reports) == [0, n_docs]
    assert sorted(r["chunks_embedded"] for r in reports)[0] == 0
    _assert_exactly_once(Settings(data_dir=str(corpus_dir), index_dir=str(index)), corpus_dir)


def test_no_wait_exits_6_while_an_ingest_holds_the_lock(tmp_path, corpus_dir, monkeypatch):
    from rag.index.lock import ingest_lock

    settings = Settings(data_dir=str(corpus_dir), index_dir=str(tmp_path / "index"))
    monkeypatch.setenv("RAG_INDEX_DIR", settings.index_dir)
    with ingest_lock(IndexPaths.of(settings)):
        res = CliRunner().invoke(app, ["ingest", "--no-wait"])
    assert res.exit_code == 6 and "another `rag ingest` is running" in res.stderr


def test_questions_during_an_ingest_see_a_consistent_index(tmp_path, corpus_dir):
    settings = Settings(data_dir=str(corpus_dir), index_dir=str(tmp_path / "index"))
    paras = seed_paragraphs()
    (corpus_dir / "b.txt").write_text("\n\n".join(paras[5:7]), encoding="utf-8")
    ingest(settings=settings)
    (corpus_dir / "c.txt").write_text("\n\n".join(paras[11:20]), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAG_INDEX_DIR": settings.index_dir, "RAG_DATA_DIR": str(corpus_dir)}
    writer = subprocess.Popen([sys.executable, "-m", "rag.cli", "ingest", "-q"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    asked = 0
    try:
        while writer.poll() is None and asked < 40:
            ans = rag.answer("Which paper proposes a model-free temporal difference method targeting the HJB equation?",
                             settings=settings)
            assert not ans.refused
            assert {c.n for c in ans.citations} <= set(range(1, len(ans.sources) + 1))
            assert len({h.doc_id for h in ans.sources}) == len(ans.sources)
            asked += 1
    finally:
        _, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    assert asked > 0


def test_corrupt_index_is_one_line_naming_rebuild_which_fixes_it(tmp_path, corpus_dir, monkeypatch):
    index = tmp_path / "index"
    monkeypatch.setenv("RAG_INDEX_DIR", str(index))
    monkeypatch.setenv("RAG_DATA_DIR", str(corpus_dir))
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", "-q"]).exit_code == 0
    sqlite = index / "chroma" / "chroma.sqlite3"
    sqlite.write_bytes(b"this is not a database" * 100)
    res = runner.invoke(app, ["ask", "What does BraVE do?"])
    assert res.exit_code == 4, res.output
    assert "rag ingest --rebuild" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    fixed = runner.invoke(app, ["ingest", "--rebuild", "-q"])
    assert fixed.exit_code == 0, fixed.output
    assert runner.invoke(app, ["ask", "What does BraVE do?"]).exit_code == 0


def test_a_lexical_index_of_an_older_format_is_rebuilt_on_first_read(tmp_path, corpus_dir):
    """An index saved by an older `tokenize` holds other terms than queries ask for."""
    settings = Settings(data_dir=str(corpus_dir), index_dir=str(tmp_path / "index"))
    ingest(settings=settings)
    folder = IndexPaths.of(settings).lexical
    assert lexical.current(folder)
    (folder / lexical.FORMAT_FILE).unlink()  # as saved before the format was recorded
    index = rag.Index.open(settings)
    assert index.stale_extras()
    assert index.retrieve("Hamilton-Jacobi-Bellman temporal difference", k=3).hits[0].lexical_score
    assert lexical.current(folder) and not index.stale_extras()
    _assert_exactly_once(settings, corpus_dir)


def test_corrupt_lexical_index_is_rebuilt_from_the_store(tmp_path, corpus_dir, monkeypatch):
    """BM25 is derived data: a reader that finds it damaged rebuilds it from Chroma."""
    settings = Settings(data_dir=str(corpus_dir), index_dir=str(tmp_path / "index"))
    ingest(settings=settings)
    (IndexPaths.of(settings).lexical / "chunk_ids.json").write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("RAG_INDEX_DIR", settings.index_dir)
    monkeypatch.setenv("RAG_DATA_DIR", str(corpus_dir))
    res = CliRunner().invoke(app, ["search", "--json", "Hamilton-Jacobi-Bellman temporal difference"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[0]["lexical_score"] > 0
    _assert_exactly_once(settings, corpus_dir)
