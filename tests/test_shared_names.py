"""Session 42's rules: papers asked for by a name they share, the sentence saying what is done instead, and a
Chinese question naming one paper and describing another.

- "Which papers deploy their method on the G1 humanoid?" is answered by the papers writing G1, each quoted
  where it writes it, not by papers only close in meaning (`rag.answering.named.shared_names`).
- A quoted sentence followed by one beginning "Instead" gets it too (`rag.answering.quoting.with_followers`).
- "ε-DPO 和那篇把奖励拆成两部分的论文，分别 ...": the paper described beside the one named is asked about too
  (`rag.answering.asked_papers`), and "这两篇论文" points at them, asking for no others.

Drawn from fresh held-out questions the answerer failed. The unit tests use made-up hits; the seed tests
ask the seed index, reworded from the questions that showed the rule (each fails on the code before the
rule, checked against a snapshot of it).
"""
import pytest

import rag
from rag.answering.named import shared_names
from rag.types import Hit

HITS = [
    Hit(doc_id="walk", title="Walker", label="Walker", score=1.0,
        text="We train a humanoid to dance and deploy it on the Unitree G1 robot. We use LLMs to plan."),
    Hit(doc_id="point", title="Pointer", label="Pointer", score=0.9,
        text="Pointer runs on various robots (e.g., UR5, G1 humanoid). LLMs describe the scene."),
    Hit(doc_id="touch", title="Toucher", label="Toucher", score=0.8,
        text="We learn dexterous manipulation from touch alone."),
]


def test_a_name_no_paper_is_labelled_by_is_what_the_papers_asked_for_share():
    named = {"G1": ["walk", "point"]}
    assert shared_names(named, HITS, "Which papers deploy their method on the G1 humanoid?") == named


@pytest.mark.parametrize("question, named", [
    # a paper's own name: the question asks about that paper, or others besides it
    ("Which papers besides Walker use a humanoid?", {"Walker": ["walk"]}),
    # a term of the field, which papers write whatever their topic
    ("Which papers use LLMs for robots?", {"LLMs": ["walk", "point"]}),
    # a name given only as an example of what is asked
    ("Which papers use a humanoid robot (e.g. G1)?", {"G1": ["walk", "point"]}),
])
def test_names_that_do_not_decide_which_papers_answer(question, named):
    assert shared_names(named, HITS, question) == {}


def test_seed_papers_sharing_a_name_are_those_writing_it(seed_settings):
    ans = rag.answer("哪几篇论文的方法在 G1 人形机器人上跑过？", settings=seed_settings)
    assert not ans.refused
    assert {c.label for c in ans.citations} == {"Physics-based humanoid control framework", "RoboRefer"}
    assert "Unitree G1" in ans.text and "G1 humanoid" in ans.text  # each quoted where it writes the name


def test_seed_what_a_paper_does_instead_follows_what_it_rules_out(seed_settings):
    ans = rag.answer("What is the key distinction of IOSTOM's training objective?", settings=seed_settings)
    assert [c.label for c in ans.citations] == ["IOSTOM"]
    assert "excludes actions entirely" in ans.text
    assert "implicit policy" in ans.text


@pytest.mark.parametrize("question, papers", [
    # one paper named, the other described beside it and both asked 各自 / 分别: the old answer also quoted
    # papers neither named nor described
    ("LTS-P 和那篇证明单时间尺度 actor-critic 全局收敛的论文，各自的样本复杂度结论是什么？",
     {"LTS-P", "Global convergence of the single-timescale actor-critic algorithm"}),
    # the description begins after the conjunction, not at it (the old answer lost the described paper)
    ("ε-DPO 和按样本优先级学习奖励模型的那篇论文，两者分别改动了训练中的哪个部分？",
     {"ε-DPO", "Reward learning algorithm by prioritizing data samples"}),
    # "这两篇 ... 论文" points at the two papers named, it asks for no others
    ("JacobianODE 和 OMiSO 这两篇跟神经科学有关的论文，分别在什么对象上验证方法？", {"JacobianODE", "OMiSO"}),
])
def test_seed_chinese_paper_named_beside_one_described(seed_settings, question, papers):
    ans = rag.answer(question, settings=seed_settings)
    assert {c.label for c in ans.citations} == papers
