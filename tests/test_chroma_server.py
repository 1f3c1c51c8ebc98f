"""Chroma client/server: a real `chroma run` on 127.0.0.1 gives the same hits and answers.

The server is the `chroma` binary shipped with the chromadb package; it starts once for this
module with a temporary path and a free port, is waited for (bounded) and always stopped.
"""
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rag
from rag.cli import app
from rag.config import Settings
from rag.index.paths import CACHE_FILE
from rag import ingest
from rag.index import Index
from rag.index.paths import IndexPaths
from rag.index.store import Store
from rag.index import lexical

from conftest import seed_paragraphs

CHROMA = Path(sys.executable).parent / "chroma"
STARTUP_SECONDS = 30
QUESTIONS = [
    "Which method evaluates joint actions with tree-structured traversal?",
    "How do spiking neural networks make decisions on neuromorphic hardware?",
    "What is early exit in deep neural networks?",
    "What is the recommended dosage of ibuprofen for children?",  # refused in both
]


def _chroma_binary() -> str | None:
    if CHROMA.is_file():
        return str(CHROMA)
    return shutil.which("chroma")


pytestmark = pytest.mark.skipif(_chroma_binary() is None, reason="the chroma CLI is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory):
    """Start `chroma run` with a temp path; yield its URL; stop it (bounded waits)."""
    root = tmp_path_factory.mktemp("chroma-server")
    port = _free_port()
    log = open(root / "server.log", "wb")
    proc = subprocess.Popen(
        [_chroma_binary(), "run", "--path", str(root / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (root / "server.log").read_bytes()[-2000:].decode(errors="replace")
                pytest.fail(f"chroma server did not start on {url} (exit {proc.poll()}):\n{tail}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Four seed abstracts (BraVE among them) in one file."""
    paras = sorted(seed_paragraphs(), key=lambda p: "BraVE" not in p)[:4]
    data = tmp_path_factory.mktemp("server-data")
    (data / "abstracts.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    return data


@pytest.fixture(scope="module")
def embedded(corpus, tmp_path_factory) -> Settings:
    settings = Settings(data_dir=str(corpus), index_dir=str(tmp_path_factory.mktemp("embedded") / "index"))
    assert ingest(settings=settings).documents == 4
    return settings


def _server_settings(embedded: Settings, url: str, index_dir: Path) -> Settings:
    """Server settings whose local folder starts with the embedded run's embedding cache."""
    index_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(IndexPaths.of(embedded).root / CACHE_FILE, index_dir / CACHE_FILE)
    return Settings(data_dir=embedded.data_dir, index_dir=str(index_dir), chroma_url=url)


def test_server_store_gives_the_embedded_hits_and_answers(embedded, chroma_url, tmp_path):
    settings = _server_settings(embedded, chroma_url, tmp_path / "server-index")
    report = ingest(settings=settings, rebuild=True)
    assert (report.documents, report.chunks_embedded, report.chunks_cached) == (4, 0, 4)
    assert not IndexPaths.of(settings).chroma.exists()  # nothing stored locally but BM25 + cache
    assert Store(settings).count() == Store(embedded).count()

    local, remote = Index.open(embedded), Index.open(settings)
    for q in QUESTIONS:
        a = local.retrieve(q, k=3).hits
        b = remote.retrieve(q, k=3).hits
        assert [h.chunk_id for h in b] == [h.chunk_id for h in a], q
        assert [h.score for h in b] == pytest.approx([h.score for h in a], abs=1e-6)
        ans_a, ans_b = rag.answer(q, settings=embedded), rag.answer(q, settings=settings)
        assert (ans_b.text, ans_b.refused) == (ans_a.text, ans_a.refused), q
        assert [c.doc_id for c in ans_b.citations] == [c.doc_id for c in ans_a.citations]
    assert rag.answer(QUESTIONS[0], settings=settings).citations[0].label == "BraVE"


def test_cli_commands_use_the_server(embedded, chroma_url, tmp_path, monkeypatch):
    settings = _server_settings(embedded, chroma_url, tmp_path / "cli-index")
    monkeypatch.setenv("RAG_CHROMA_URL", chroma_url)
    monkeypatch.setenv("RAG_INDEX_DIR", settings.index_dir)
    monkeypatch.setenv("RAG_DATA_DIR", settings.data_dir)
    runner = CliRunner()
    out = runner.invoke(app, ["ingest", "-q", "--json", "--rebuild"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["documents"] == 4
    out = runner.invoke(app, ["ask", "--json", QUESTIONS[0]])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert not payload["refused"] and payload["citations"][0]["label"] == "BraVE"
    out = runner.invoke(app, ["sources", "--json"])
    assert out.exit_code == 0 and len(json.loads(out.stdout)) == 4
    assert not (Path(settings.index_dir) / "chroma").exists()


def test_local_lexical_index_is_rebuilt_from_the_server(embedded, chroma_url, tmp_path, corpus):
    """A missing BM25 index is rebuilt from the server; a changed collection is noticed."""
    first = _server_settings(embedded, chroma_url, tmp_path / "machine-a")
    ingest(settings=first, rebuild=True)
    other = Settings(data_dir=first.data_dir, index_dir=str(tmp_path / "machine-b"), chroma_url=chroma_url)

    # Machine B has never ingested: its first question rebuilds BM25 from the server.
    assert not IndexPaths.of(other).lexical.exists()
    hits = Index.open(other).retrieve("tree-structured traversal", k=2).hits
    assert hits[0].label == "BraVE" and hits[0].lexical_score is not None
    server_ids = sorted(Store(other).collection.get(include=[])["ids"])
    assert sorted(lexical.load(IndexPaths.of(other).lexical).chunk_ids) == server_ids

    # Machine A adds a document from a folder B does not have; B's index notices and keeps up.
    extra = tmp_path / "extra.jsonl"
    new = sorted(seed_paragraphs(), key=lambda p: "BraVE" not in p)[6]
    extra.write_text(json.dumps({"abstract": new, "title": "Extra paper"}) + "\n", encoding="utf-8")
    assert ingest([extra], settings=first).documents == 5
    hits = Index.open(other).retrieve(new[:200], k=1).hits
    assert hits[0].title == "Extra paper" and hits[0].lexical_score is not None
    assert len(lexical.load(IndexPaths.of(other).lexical).chunk_ids) == 5

    # B ingests its own data folder: A's extra document is kept although B cannot see its file.
    extra.unlink()
    report = ingest(settings=other)
    assert (report.removed, report.documents) == (0, 5)
