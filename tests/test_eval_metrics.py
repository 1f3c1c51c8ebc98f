"""Every eval metric and evaluator on small hand-made cases, edge cases included."""
from __future__ import annotations

import pytest

from rag.evals import metrics as m
from rag.markers import find_markers, split_claims
from rag.evals.dataset import Case
from rag.evals.evaluators import EVALUATORS, Evaluator
from rag.evals.runner import score_case, summarize
from rag.types import Answer, Citation, Hit

A = "aaaaaaaaaaaaaaaa"
B = "bbbbbbbbbbbbbbbb"
C = "cccccccccccccccc"
CHUNKS = {
    A: "BraVE uses tree-structured action traversal to evaluate a linear number of joint actions.",
    B: "SoLS is evaluated on the AndroidWorld benchmark with a 17% relative increase.",
    C: "DualFocus estimates depth from a focal stack.",
}
REFUSAL = "I can't answer that from the indexed abstracts."


def hit(doc: str, label: str = "") -> Hit:
    return Hit(doc_id=doc, title=label or doc[:4], text=CHUNKS[doc], score=1.0, label=label or doc[:4])


def make_answer(text: str, sources: list[str], cited: list[int], *, refused: bool = False) -> Answer:
    hits = [hit(d) for d in sources]
    cites = [Citation(n=n, doc_id=hits[n - 1].doc_id, title=hits[n - 1].title, text=hits[n - 1].text, score=1.0)
             for n in cited]
    return Answer(question="q", text=text, citations=cites, refused=refused, mode="offline", sources=hits)


def case(type_="lookup", gold=(A,), facts=(("tree-structured action traversal",),), answerable=True) -> Case:
    return Case("c1", "q?", type_, "en", answerable, tuple(gold), tuple(g[:4] for g in gold), tuple(facts))


def scores(c: Case, a: Answer, k: int = 5) -> dict:
    return score_case(c, a, k=k).scores


# --- pure functions -------------------------------------------------------------------------

def test_markers_in_every_shape_keep_duplicates():
    assert find_markers("x [1] y [2, 3] z [1][4-5] w [2;1]") == [1, 2, 3, 1, 4, 5, 2, 1]
    assert find_markers("no markers, just [brackets]") == []


def test_citation_validity_counts_each_marker_occurrence():
    assert m.citation_validity([1, 1, 7], {1, 2}) == pytest.approx(2 / 3)
    assert m.citation_validity([], {1}) is None


def test_retrieval_recall_and_mrr_with_multi_gold():
    assert m.retrieval_recall([C, A, B], [A, B], k=2) == 0.5
    assert m.retrieval_recall([C, A, B], [A, B], k=3) == 1.0
    assert m.retrieval_recall([C], []) is None
    assert m.reciprocal_rank([C, A, B], [B, A]) == 0.5
    assert m.reciprocal_rank([C], [A]) == 0.0
    assert m.reciprocal_rank([C], []) is None


def test_fact_recall_any_spelling_after_cleaning_and_case_folding():
    facts = [["mixed-integer linear program", "MILP"], ["74.5%"], ["absent"]]
    text = "SPOT solves a milp; the gap shrinks by 74.5\\% [1]."
    assert m.facts_found(text, facts) == [True, True, False]
    assert m.fact_recall(text, facts) == pytest.approx(2 / 3)
    assert m.fact_recall(text, []) is None


def test_citation_precision_and_recall_on_distinct_documents():
    assert m.citation_precision([A, A, C], [A, B]) == 0.5
    assert m.citation_recall([A, A, C], [A, B]) == 0.5
    assert m.citation_precision([], [A]) is None
    assert m.citation_recall([], [A]) == 0.0
    assert m.citation_recall([A], []) is None


def test_split_claims_is_the_runtime_grammar():
    # Sentences own their markers; a marker run opening a sentence belongs to the one before
    # (the citation check and the eval split answers the same way).
    claims = split_claims("One thing [1]. Two things [2][3] Three. Four is uncited. Five. [4]")
    assert [(c.text, c.cites) for c in claims] == [
        ("One thing [1].", [1]), ("Two things [2][3] Three.", [2, 3]), ("Four is uncited.", []),
        ("Five. [4]", [4])]
    assert claims[1].body == "Two things Three."


def test_groundedness_measures_token_overlap_with_the_cited_chunk():
    chunks = {1: CHUNKS[A], 2: CHUNKS[B]}
    good = "BraVE uses tree-structured action traversal [1]."
    assert m.groundedness(good, chunks).score == 1.0
    wrong_source = "BraVE uses tree-structured action traversal [2]."
    g = m.groundedness(wrong_source, chunks)
    assert g.score == 0.0 and g.unsupported == ["BraVE uses tree-structured action traversal."]
    mixed = good + " It also cures cancer in mice quickly. [1]"
    assert m.groundedness(mixed, chunks).score == 0.5
    assert m.groundedness("An uncited sentence about BraVE.", chunks).score == 0.0
    assert m.groundedness("BraVE uses tree-structured action traversal [9].", chunks).score == 0.0
    assert m.groundedness("", chunks).score is None


def test_percentile_and_mean():
    assert m.percentile([10, 20, 30, 40], 50) == 25
    assert m.percentile([5.0], 95) == 5.0
    assert m.percentile([], 50) is None
    assert m.mean([1.0, None, 0.0]) == 0.5
    assert m.mean([None]) is None


# --- evaluators on answers ------------------------------------------------------------------

def test_correct_single_fact_answer_scores_perfectly():
    a = make_answer("BraVE uses tree-structured action traversal to evaluate joint actions [1].", [A, B], [1])
    s = scores(case(), a)
    assert s["recall_at_k"] == 1.0 and s["mrr"] == 1.0
    assert s["fact_recall"] == 1.0 and s["all_facts"] == 1.0
    assert s["citation_validity"] == 1.0 and s["citation_precision"] == 1.0 and s["citation_recall"] == 1.0
    assert s["groundedness"] == 1.0 and s["false_refusal"] == 0.0 and s["passed"] == 1.0
    assert s["refusal_accuracy"] is None and s["premise_handled"] is None


def test_the_papers_label_before_a_quote_is_supported_by_its_citation():
    label = "Where to Diffuse, How to Diffuse, and How to Get Back: Automated Learning for Multivariate Diffusions"
    a = make_answer(f"{label}: BraVE uses tree-structured action traversal [1].", [A], [1])
    assert scores(case(), a)["groundedness"] == 0.0  # the label is not in the chunk
    a.citations[0].label = label
    assert scores(case(), a)["groundedness"] == 1.0


def test_answer_without_citations_is_uncited_and_ungrounded():
    a = make_answer("BraVE uses tree-structured action traversal.", [A], [])
    r = score_case(case(), a, k=5)
    assert r.scores["citation_validity"] is None  # no marker to validate
    assert r.scores["citation_precision"] is None and r.scores["citation_recall"] == 0.0
    assert r.scores["groundedness"] == 0.0 and r.scores["fact_recall"] == 1.0
    assert r.scores["passed"] == 0.0 and "no gold document cited" in r.reasons["passed"]


def test_duplicate_and_invalid_markers():
    a = make_answer("BraVE uses tree-structured action traversal [1][1]. Evaluate joint actions [1] [4].", [A], [1])
    r = score_case(case(), a, k=5)
    assert r.scores["citation_validity"] == 0.75
    assert r.scores["citation_precision"] == 1.0  # distinct documents: the duplicate counts once
    assert "[4]" in r.reasons["citation_validity"]
    assert r.scores["passed"] == 0.0


def test_multi_gold_question_partial_credit():
    c = case("multi_doc", gold=(A, B), facts=(("BraVE",), ("SoLS",)))
    a = make_answer("BraVE uses tree-structured action traversal [1]. DualFocus estimates depth [2].", [A, C, B], [1, 2])
    s = scores(c, a, k=3)
    assert s["recall_at_k"] == 1.0 and s["mrr"] == 1.0
    assert s["fact_recall"] == 0.5 and s["all_facts"] == 0.0
    assert s["citation_precision"] == 0.5 and s["citation_recall"] == 0.5
    assert scores(c, a, k=1)["recall_at_k"] == 0.5  # only the first source counts at k=1


def test_refusal_on_unanswerable_is_right_and_on_answerable_is_a_false_refusal():
    refusal = make_answer(REFUSAL, [A], [], refused=True)
    un = case("unanswerable", gold=(), facts=(), answerable=False)
    s = scores(un, refusal)
    assert s["refusal_accuracy"] == 1.0 and s["passed"] == 1.0 and s["false_refusal"] is None
    assert s["groundedness"] is None and s["fact_recall"] is None
    s = scores(case(), refusal)
    assert s["false_refusal"] == 1.0 and s["fact_recall"] == 0.0 and s["citation_recall"] == 0.0
    assert s["passed"] == 0.0 and s["groundedness"] is None


def test_answering_an_unanswerable_question_fails_refusal_accuracy():
    un = case("unanswerable", gold=(), facts=(), answerable=False)
    s = scores(un, make_answer("BraVE uses tree-structured action traversal [1].", [A], [1]))
    assert s["refusal_accuracy"] == 0.0 and s["passed"] == 0.0 and s["citation_precision"] is None


def test_false_premise_passes_on_refusal_or_on_a_cited_correction():
    fp = case("false_premise", facts=(("linear number of joint actions",),))
    refused = scores(fp, make_answer(REFUSAL, [A], [], refused=True))
    assert refused["premise_handled"] == 1.0 and refused["passed"] == 1.0
    assert refused["false_refusal"] is None and refused["fact_recall"] is None
    corrected = scores(fp, make_answer("BraVE evaluates a linear number of joint actions [1].", [A], [1]))
    assert corrected["premise_handled"] == 1.0
    wrong_cite = scores(fp, make_answer("BraVE evaluates a linear number of joint actions [1].", [B, A], [1]))
    assert wrong_cite["premise_handled"] == 0.0


def test_an_evaluator_that_raises_becomes_a_failure_row_and_others_still_run():
    def broken(ctx):
        raise ValueError("boom")

    evaluators = (Evaluator("broken", "broken", broken), *EVALUATORS)
    r = score_case(case(), make_answer("BraVE uses tree-structured action traversal [1].", [A], [1]), k=5,
                   evaluators=evaluators)
    assert r.failures == [{"evaluator": "broken", "error": "ValueError: boom"}]
    assert r.scores["broken"] is None and r.scores["fact_recall"] == 1.0
    assert not r.passed and "broken raised: ValueError: boom" in r.failed_checks(evaluators)


def test_summary_groups_by_type_and_language_and_skips_not_applicable():
    good = score_case(case(), make_answer("BraVE uses tree-structured action traversal [1].", [A], [1]), k=5)
    un = score_case(case("unanswerable", (), (), False), make_answer(REFUSAL, [A], [], refused=True), k=5)
    good.latency_ms, un.latency_ms = 10.0, 30.0
    s = summarize([good, un])
    assert s["overall"]["metrics"]["fact_recall"] == {"value": 1.0, "n": 1}
    assert s["overall"]["metrics"]["passed"] == {"value": 1.0, "n": 2}
    assert s["by_type"]["unanswerable"]["metrics"]["refusal_accuracy"]["value"] == 1.0
    assert s["by_lang"]["en"]["n"] == 2
    assert s["overall"]["latency_ms"] == {"p50": 20.0, "p95": 29.0}
    assert s["tokens"]["total"] == 0 and s["cost_usd"] is None


def test_llm_usage_is_summed_and_priced_for_known_models():
    a = make_answer("BraVE uses tree-structured action traversal [1].", [A], [1])
    a.usage = {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}
    s = summarize([score_case(case(), a, k=5)], model="gpt-4o-mini")
    assert s["tokens"] == {"prompt": 1_000_000, "completion": 1_000_000, "total": 2_000_000}
    assert s["cost_usd"] == pytest.approx(0.75)
    assert summarize([score_case(case(), a, k=5)], model="some-local-model")["cost_usd"] is None


def test_wrong_paper_is_an_answer_citing_no_gold_document():
    right = make_answer("BraVE uses tree-structured action traversal [1].", [A], [1])
    other = make_answer("SoLS is evaluated on the AndroidWorld benchmark [1].", [B, A], [1])
    uncited = make_answer("BraVE uses tree-structured action traversal.", [A], [])
    refused = make_answer(REFUSAL, [A], [], refused=True)
    assert scores(case(), right)["wrong_paper"] == 0.0
    assert scores(case(), other)["wrong_paper"] == 1.0
    assert scores(case(), uncited)["wrong_paper"] == 1.0  # answered without citing the gold abstract
    assert scores(case(), refused)["wrong_paper"] is None
    assert scores(case("unanswerable", (), (), False), other)["wrong_paper"] is None  # no gold
    fp = case("false_premise", facts=(("linear number of joint actions",),))
    assert scores(fp, other)["wrong_paper"] == 1.0
    r = score_case(case(), other, k=5)
    assert r.reasons["wrong_paper"] == "answered citing bbbb, not aaaa"


def test_at_scale_a_case_a_distractor_may_answer_is_excused_from_wrong_paper_checks():
    from dataclasses import replace

    other = make_answer("SoLS is evaluated on the AndroidWorld benchmark [1].", [B, A], [1])
    generic = replace(case(), distractor_may_answer=True)
    seed = score_case(generic, other, k=5).scores
    assert seed["wrong_paper"] == 1.0 and seed["citation_precision"] == 0.0  # the seed corpus has no distractors
    scale = score_case(generic, other, k=5, setting="scale").scores
    assert scale["wrong_paper"] is None and scale["citation_precision"] is None
    assert scale["passed"] == 0.0 and scale["citation_recall"] == 0.0  # the gold paper is still expected
    assert score_case(case(), other, k=5, setting="scale").scores["wrong_paper"] == 1.0  # unmarked: still wrong

    un = replace(case("unanswerable", (), (), False), distractor_may_answer=True)
    answered = score_case(un, other, k=5, setting="scale").scores
    assert answered["refusal_accuracy"] is None and answered["passed"] is None
    assert score_case(un, other, k=5).scores["refusal_accuracy"] == 0.0
