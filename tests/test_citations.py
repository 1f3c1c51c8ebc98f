"""Citation markers are parsed in every common shape and checked against the given sources."""
import pytest

from rag.answering.check import check_citations
from rag.answering.refusal import is_refusal
from rag.markers import parse_marker
from rag.answering import REFUSAL


@pytest.mark.parametrize(
    "text, cited",
    [
        ("Alpha is a method [1].", [1]),
        ("Alpha is a method [1, 2].", [1, 2]),
        ("Alpha is a method [1][3].", [1, 3]),
        ("Alpha is a method [1-2].", [1, 2]),
        ("Alpha is a method [1\u20133].", [1, 2, 3]),
        ("Alpha is a method [ 2 ; 1 ].", [2, 1]),
        ("Alpha is a method [3]. Beta is another [1].", [3, 1]),
    ],
)
def test_valid_marker_shapes_are_kept_and_cited(text, cited):
    check = check_citations(text, 3)
    assert check.ok
    assert check.text == text
    assert check.cited == cited
    assert not check.refused


def test_invented_marker_is_removed_and_recorded():
    check = check_citations("Alpha is a method [7]. Beta is fast [2].", 3)
    assert check.text == "Alpha is a method. Beta is fast [2]."
    assert check.cited == [2]
    assert check.invalid == [("[7]", ["7"])]
    # The sentence that lost its only marker is now uncited, too.
    assert check.uncited == ["Alpha is a method."]
    problems = check.problems()
    assert "citation [7] names source 7, which was not given (only sources 1 to 3 exist)" in problems
    assert any("Alpha is a method." in p for p in problems)


def test_mixed_marker_keeps_only_given_sources():
    check = check_citations("Alpha is a method [1, 4][2].", 3)
    assert check.text == "Alpha is a method [1][2]."
    assert check.cited == [1, 2]
    assert check.invalid == [("[1, 4]", ["4"])]
    assert check.uncited == []


def test_range_past_the_sources_is_clipped_without_expanding_it():
    valid, invalid = parse_marker("2-999999", 3)
    assert valid == [2, 3]
    assert invalid == ["2-999999"]
    assert parse_marker("0", 3) == ([], ["0"])
    assert parse_marker("3-1", 3) == ([1, 2, 3], [])


def test_uncited_sentences_are_flagged():
    check = check_citations("Alpha is a method [1]. It is also fast. Beta exists [2].", 2)
    assert check.uncited == ["It is also fast."]
    assert not check.ok
    assert check.problems() == ['this sentence has no [n] citation: "It is also fast."']


def test_marker_after_the_full_stop_belongs_to_the_sentence_before():
    check = check_citations("Alpha is a method. [1] Beta is fast. [2]", 2)
    assert check.uncited == []
    assert check.cited == [1, 2]


def test_each_line_of_a_list_needs_a_citation():
    check = check_citations("- Alpha uses trees [1]\n- Beta uses graphs", 2)
    assert check.uncited == ["- Beta uses graphs"]


@pytest.mark.parametrize(
    "text",
    [
        REFUSAL,
        f"  {REFUSAL}  ",
        REFUSAL.replace("'", "\u2019"),
        f'"{REFUSAL}"',
        REFUSAL.rstrip("."),
        f"{REFUSAL} [2]",
        REFUSAL.upper(),
    ],
)
def test_refusal_sentence_means_refused_with_no_citations(text):
    check = check_citations(text, 3)
    assert check.refused
    assert check.text == REFUSAL
    assert check.cited == []
    assert is_refusal(text)


def test_refusal_with_an_invented_marker_still_records_it():
    check = check_citations(f"{REFUSAL} [9]", 3)
    assert check.refused and check.invalid == [("[9]", ["9"])]


def test_refusal_inside_a_longer_answer_is_not_a_refusal():
    text = f"Alpha is a method [1]. {REFUSAL}"
    check = check_citations(text, 2)
    assert not check.refused
    assert check.cited == [1]
    assert check.uncited == []  # the refusal sentence itself needs no citation


def test_empty_answer_is_a_problem():
    check = check_citations("   ", 2)
    assert check.empty and not check.ok
    assert check.problems() == ["the answer was empty"]


def test_no_sources_means_every_marker_is_invalid():
    check = check_citations("Alpha [1].", 0)
    assert check.cited == [] and check.text == "Alpha."
    assert "no sources were given" in check.problems()[0]


# -- a marker is evidence only after a claim ------------------------------------------------------
LABELS = ["DynamicRAG", "RoboRefer", "For continuous systems modeled by dynamical\u2026"]


@pytest.mark.parametrize("text", [
    "The authors of the DynamicRAG paper are [1].",
    "DynamicRAG [1] and RoboRefer [2] [3].",
    "The authors are mentioned in the paper [1].",
    "DynamicRAG 论文的作者是 [1]。",
])
def test_a_sentence_that_only_restates_the_question_and_names_sources_is_marker_only(text):
    for question in ("Who are the authors of the DynamicRAG paper?", "DynamicRAG 论文的作者是谁？"):
        check = check_citations(text, 3, question=question, labels=LABELS)
        if any("\u4e00" <= ch <= "\u9fff" for ch in text) != any("\u4e00" <= ch <= "\u9fff" for ch in question):
            continue
        assert check.marker_only == [text] and not check.ok, question
        assert "its marker stands in for the answer" in check.problems()[0]


@pytest.mark.parametrize("text", [
    "The sources state that DynamicRAG was trained on a GPU [2].",  # recorded from the local model
    "This is stated in the first source [2][3].",
])
def test_a_sentence_reporting_what_a_source_says_without_a_new_word_is_marker_only(text):
    check = check_citations(text, 3, question="How many GPUs were used to train DynamicRAG?", labels=LABELS)
    assert check.marker_only == [text]


@pytest.mark.parametrize("question, text", [
    ("Who are the authors of the DynamicRAG paper?", "The authors are Ada Lovelace and Alan Turing [1]."),
    ("How does DynamicRAG train its reranker?", "DynamicRAG trains its reranker with reinforcement learning [1]."),
    ("Which paper introduces a reranker trained with RL?", "DynamicRAG [1]."),
    ("哪篇论文提出了动态重排序器？", "DynamicRAG [1]。"),
    ("", "DynamicRAG [1]."),  # no question given: a name is a word
])
def test_a_sentence_that_adds_words_or_names_the_paper_asked_for_is_a_claim(question, text):
    check = check_citations(text, 3, question=question, labels=LABELS if question else ())
    assert check.ok and check.marker_only == []


def test_a_sentence_saying_the_sources_do_not_tell_needs_no_citation():
    check = check_citations("The abstracts do not mention the authors. DynamicRAG uses RL [1].", 3,
                            question="Who wrote DynamicRAG?", labels=LABELS)
    assert check.ok and check.absent == ["The abstracts do not mention the authors."] and not check.refused


@pytest.mark.parametrize("text", [
    "The provided sources do not mention the authors of DynamicRAG.",
    "I'm sorry, but the authors are not mentioned in the sources. There is no information about them.",
    "资料中没有提到作者。",
])
def test_an_answer_that_only_says_the_sources_do_not_tell_is_a_refusal(text):
    check = check_citations(text, 3, question="Who wrote DynamicRAG?", labels=LABELS)
    assert check.refused and check.text == REFUSAL and check.cited == []


def test_a_premise_correction_is_not_an_absence():
    from rag.answering.check import is_absence

    assert not is_absence("BraVE does not evaluate every joint action; it evaluates a linear number of them.")
    assert not is_absence("SnapViT requires no labeled data.")


def test_the_eval_splits_answers_into_the_same_claims_as_the_check():
    """Groundedness (rag.evals.metrics) and the runtime check share rag.markers.split_claims."""
    from rag.evals import metrics

    text = "Alpha is a method. [1] Beta is fast [2].\n- Gamma uses graphs"
    g = metrics.groundedness(text, {1: "Alpha is a method.", 2: "Beta is fast."})
    check = check_citations(text, 2)
    assert g.sentences == len(check.claims) == 3
    assert g.unsupported == ["- Gamma uses graphs"] and check.uncited == ["- Gamma uses graphs"]


def test_the_refusal_next_to_uncited_text_is_the_refusal():
    check = check_citations(f"T2I-R1, XVerse, DynamicRAG. {REFUSAL}", 3, question="哪些论文研究文本生成图像？",
                            labels=LABELS)
    assert check.refused and check.text == REFUSAL


def test_a_cited_claim_must_be_held_by_the_source_it_cites():
    sources = ["DynamicRAG trains its reranker with reinforcement learning.", "RoboRefer uses RefSpatial."]
    q = "What learning rate does DynamicRAG use?"
    bad = check_citations("DynamicRAG uses a learning rate of 0.0001 [1].", 2, question=q, labels=LABELS[:2],
                          sources=sources)
    assert bad.unsupported == ["DynamicRAG uses a learning rate of 0.0001 [1]."] and not bad.ok
    good = check_citations("DynamicRAG trains its reranker with reinforcement learning [1].", 2,
                           question="How is DynamicRAG's reranker trained?", labels=LABELS[:2], sources=sources)
    assert good.ok
    # In a Chinese sentence only the Latin names, terms and numbers are compared.
    zh = check_citations("DynamicRAG 的代码使用 Apache License 2.0 [1]。", 2, question="DynamicRAG 的许可证是什么？",
                         labels=LABELS[:2], sources=sources)
    assert zh.unsupported and not check_citations("DynamicRAG 用强化学习训练 [1]。", 2, question="DynamicRAG 怎么训练？",
                                                   labels=LABELS[:2], sources=sources).unsupported


def test_numbers_match_whether_written_in_words_or_digits():
    sources = ["SnapViT generates elastic models in less than five minutes on a single A100 GPU."]
    check = check_citations("SnapViT takes less than 5 minutes [1].", 1,
                            question="How long does SnapViT take on a single A100 GPU?", sources=sources)
    assert not check.unsupported


def test_words_the_question_asked_count_in_any_inflection():
    from rag.answering.check import added_words

    q = "How long does SnapViT take on a single A100 GPU to generate elastic models?"
    assert added_words("SnapViT takes about 5 minutes on a single A100 GPU to generate elastic models [1].", q) == \
        ["about", "5", "minutes"]
    assert added_words("It introduced RoTO [1].", "Which paper introduces a benchmark?") == ["roto"]


def test_a_compound_in_the_source_holds_its_parts():
    check = check_citations("BraVE uses trees [1].", 1, question="What does BraVE use?", labels=["BraVE"],
                            sources=["BraVE uses tree-structured action traversal."])
    assert check.ok
