"""Hybrid retrieval over the seed index."""
import pytest

import rag
from rag.errors import UsageError
from rag.index.lexical import tokenize
from rag.api import default_index
from rag.index.search import fuse


def test_fusion_sums_reciprocal_ranks():
    scores = fuse([["a", "b"], ["b", "c"]], rrf_k=60)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61) and scores["c"] == pytest.approx(1 / 62)


def test_hits_are_distinct_documents_best_first(seed_settings):
    hits = rag.retrieve("offline reinforcement learning", k=8, settings=seed_settings)
    assert len(hits) == 8
    assert len({h.doc_id for h in hits}) == 8
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.text and h.title for h in hits)


def test_retrieval_is_deterministic(seed_settings):
    a = rag.retrieve("spiking neural networks for continuous control", k=5, settings=seed_settings)
    b = rag.retrieve("spiking neural networks for continuous control", k=5, settings=seed_settings)
    assert [(h.chunk_id, h.score) for h in a] == [(h.chunk_id, h.score) for h in b]


@pytest.mark.parametrize(
    "query, label",
    [
        ("Which paper introduces a tactile manipulation benchmark?", "RoTO"),
        ("quaternion spiking neural network", "QSHNN"),
        ("T2I-R1", "T2I-R1"),
        ("哪篇论文研究视频中的时间方向？", "ArrowRL"),  # Chinese: dense, and BM25 over its dictionary translation
    ],
)
def test_gold_document_is_found_first(seed_settings, query, label):
    assert rag.retrieve(query, k=3, settings=seed_settings)[0].label == label


def test_zero_score_bm25_results_never_enter_fusion(seed_settings):
    index = default_index(seed_settings)
    assert index.lexical().search("视频中的时间方向", 10) == []  # CJK bigrams match no English abstract
    res = index.retrieve("xyzzy plugh frobnicate", k=5)  # words no abstract has
    assert len(res.hits) == 5 and all(h.lexical_score is None for h in res.hits)


def test_a_word_only_one_abstract_uses_brings_it_into_the_hits(seed_settings):
    # "Utah" (array) is in OMiSO's abstract alone; the dense models do not see the word, and BM25 at its
    # usual weight could not lift the paper past their five hits. Off, and with no re-ordering by the
    # share of the question's words each abstract holds (which finds it too), it is not found.
    question = "Which paper uses a Utah array?"
    assert rag.retrieve(question, k=5, settings=seed_settings)[0].label == "OMiSO"
    assert rag.retrieve(question, k=5, settings=seed_settings.with_overrides(distinct_lexical_weight=0))[0].label == "OMiSO"
    off = seed_settings.with_overrides(distinct_lexical_weight=0, coverage_weight=0)
    assert "OMiSO" not in [h.label for h in rag.retrieve(question, k=5, settings=off)]


def test_a_chinese_question_gets_a_lexical_ranking_from_its_translation(seed_settings):
    res = default_index(seed_settings).retrieve("哪篇论文研究机器人操作中的触觉？", k=5)
    assert any(h.lexical_score for h in res.hits)
    assert res.hits[0].label == "RoTO"


def test_lexical_tokens_are_stemmed_without_stopwords():
    assert tokenize("The proposed methods") == ["propos", "method"]


def test_an_acronyms_plural_is_the_same_lexical_term_as_the_acronym():
    # The stemmer keeps the "s" of a word with no vowel before it: "LLMs" would miss "LLM".
    assert tokenize("LLMs on GPUs with ViTs") == tokenize("LLM on GPU with ViT") == ["llm", "gpu", "vit"]
    assert tokenize("Methods") == ["method"] and tokenize("iOS apps") == tokenize("iOS app")


@pytest.mark.parametrize("query", ["", "   \n"])
def test_blank_queries_are_usage_errors(seed_settings, query):
    with pytest.raises(UsageError):
        rag.retrieve(query, settings=seed_settings)


def test_k_zero_is_a_usage_error(seed_settings):
    with pytest.raises(UsageError):
        rag.retrieve("anything", k=0, settings=seed_settings)


@pytest.mark.parametrize(
    "typed",
    [
        "What does Robo\u00adRefer do?",  # soft hyphen (pasted from a PDF)
        "What does Robo\u200dRefer do?",  # zero-width joiner
        "What does Robo\u200bRefer\ufeff do?",  # zero-width space, BOM
        "What does \uff32\uff4f\uff42\uff4f\uff32\uff45\uff46\uff45\uff52 do?",  # full-width letters
    ],
)
def test_invisible_and_compatibility_characters_do_not_change_the_answer(seed_settings, typed):
    ans = rag.answer(typed, settings=seed_settings)
    assert ans.question == "What does RoboRefer do?"
    assert not ans.refused and ans.citations[0].label == "RoboRefer"


def test_normalize_question_rules():
    from rag.text import normalize_question

    assert normalize_question("  a\u00adb\u200c c\u202e\x07d \n") == "ab c d"
    assert normalize_question("\ufb01ne-tuning\u3000(SFT)") == "fine-tuning (SFT)"  # ligature, ideographic space
    assert normalize_question("\u200b\u200d") == ""
    from rag.index.search import check_query

    with pytest.raises(UsageError, match="empty"):
        check_query("\u00ad\u200b")


class _Store:
    """Chroma's part in hybrid_search, in memory: `gone` chunks are listed by BM25 but no longer stored."""

    def __init__(self, chunks, gone=()):
        self.chunks, self.gone, self.fetched = chunks, set(gone), []

    def query(self, qvec, n, *, where=None, ids=None):
        return []  # the dense ranking proposes nothing: every hit must be fetched

    def get(self, ids):
        self.fetched.append(list(ids))
        return {cid: self.chunks[cid] for cid in ids if cid in self.chunks and cid not in self.gone}

    def document_chunks(self, doc_id):
        return [c for cid, c in self.chunks.items() if c.doc_id == doc_id and cid not in self.gone]


class _Lexical:
    def __init__(self, ranking, shares=None):
        self.ranking, self.shares = ranking, shares or {}

    def search(self, query, n, *, only=None):
        return [(cid, 10.0 - i) for i, cid in enumerate(self.ranking)][:n]

    def coverage(self, query, doc_ids):
        return {d: self.shares.get(d, 0.0) for d in doc_ids}


class _Embedder:
    def embed_query(self, text):
        import numpy as np

        return np.ones(4, np.float32) / 2


def _chunk(cid):
    from rag.index.records import StoredChunk

    return StoredChunk(id=cid, doc_id=cid.split(":")[0], n=int(cid.split(":")[1]), text=f"text of {cid}",
                       start=0, end=10, n_chunks=2)


def test_only_the_hits_are_read_from_the_store_and_deleted_chunks_drop_out():
    from rag.config import Settings
    from rag.index.search import hybrid_search

    ids = ["d1:0", "d1:1", "d2:0", "d3:0", "d4:0", "d5:0"]
    store = _Store({cid: _chunk(cid) for cid in ids}, gone={"d2:0"})
    res = hybrid_search("a question", 3, settings=Settings(lexical_min_ratio=0.0), store=store,
                        lexical=_Lexical(ids), embedder=_Embedder())
    # d1:1 is d1's second chunk (one hit per document); d2:0 was deleted after the BM25 build.
    assert [h.chunk_id for h in res.hits] == ["d1:0", "d3:0", "d4:0"]
    # Read: the first three documents' best chunks, then the next one in place of the deleted chunk.
    assert store.fetched == [["d1:0", "d2:0", "d3:0"], ["d4:0"]]


class _Paraphrase:
    """The paraphrase model's stored chunk vectors and the model, in memory: fixed cosines per chunk."""

    def __init__(self, cosines):
        self.cosines = cosines

    def embed(self, texts):
        import numpy as np

        return np.ones((len(texts), 2), np.float32)

    def rank(self, qvec, n, *, only=None):
        return []  # proposes nothing: only the fused order of BM25 counts

    def similarities(self, qvec, chunk_ids):
        return [self.cosines.get(c) for c in chunk_ids]


def test_an_abstract_holding_all_the_questions_words_moves_up_among_papers_equally_close_in_meaning():
    from rag.config import Settings
    from rag.index.search import hybrid_search

    ids = ["d1:0", "d2:0", "d3:0", "d4:0"]
    store = _Store({cid: _chunk(cid) for cid in ids})
    lexical = _Lexical(ids, shares={"d3": 0.9, "d4": 0.9, "d1": 0.1})

    def ask(question="a question", cosines=None, **kw):
        model = _Paraphrase(cosines or {"d1:0": 0.60, "d2:0": 0.58, "d3:0": 0.57, "d4:0": 0.40})
        hits = hybrid_search(question, 3, settings=Settings(lexical_min_ratio=0.0, **kw), store=store,
                             lexical=lexical, embedder=_Embedder(), paraphrase=(model, model)).hits
        return [h.doc_id for h in hits]

    # d3 holds the question's words and is about as close as d1; d4 holds them too, but is far.
    assert ask() == ["d3", "d1", "d2"]
    assert ask(coverage_weight=0) == ["d1", "d2", "d3"]  # the fused order
    assert ask(coverage_margin=0.01) == ["d1", "d2", "d3"]  # d3 is no longer close enough
    assert ask(coverage_depth=2) == ["d1", "d2", "d3"]  # d3 is past the depth re-ordered
    # The scores stay in the order of the hits.
    model = _Paraphrase({"d1:0": 0.6, "d3:0": 0.6})
    hits = hybrid_search("a question", 3, settings=Settings(lexical_min_ratio=0.0), store=store, lexical=lexical,
                         embedder=_Embedder(), paraphrase=(model, model)).hits
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_coverage_is_the_idf_weighted_share_of_question_terms_a_document_holds():
    from rag.index.lexical import index_texts

    lexical = index_texts(
        ["a:0", "b:0", "c:0", "c:1", "d:0"],
        ["Tactile sensing guides dexterous manipulation.", "Manipulation, manipulation and more manipulation.",
         "We study tactile signals.", "A second passage on dexterous hands.", "Regret bounds for bandits."])
    share = lexical.coverage("tactile dexterous manipulation", ["a", "b", "c", "d"])
    assert share["a"] == pytest.approx(1.0)
    assert share["d"] == 0.0
    # The rarer words weigh more than the one repeated word; a document's chunks count together.
    assert share["c"] > share["b"] > 0
    assert lexical.coverage("the of and", ["a"]) == {"a": 0.0}  # stopwords only: no terms
