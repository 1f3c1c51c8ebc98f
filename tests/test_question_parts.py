"""Questions asking two things, and the quantities and things they ask for (session 32's rules).

Each rule was drawn from a fresh dev question the answerer failed and is stated as a policy; the
sentences below are made up, not the corpus's, except where a test asks the seed index.
"""
import rag
from rag.answering.parts import question_parts
from rag.answering.offline import content_terms
from rag.answering.quantity import states_duration, states_quantity


def test_a_second_question_after_and_plus_a_preposition_is_a_part_of_its_own():
    assert question_parts("what is the depth encoder in X for, and in which training stage does it get integrated") \
        == ["what is the depth encoder in X for", "and in which training stage does it get integrated"]
    assert len(question_parts("Which benchmark does X use, and on which robot does it run?")) == 2
    # "and in how many steps" asks how the first part's claim was reached: one question
    assert len(question_parts("How much memory does Alpha save on QM9, and in how many steps?")) == 1
    # "and" joining two things asked of one clause divides nothing
    assert question_parts("What does X train on and in which stage?") == ["What does X train on and in which stage?"]


def test_a_factor_written_with_times_states_a_speedup():
    # "\times" reads "times": a multiplier after a number, not a count of "times" (before, no sentence
    # stated "how much speedup", and the question was refused).
    speedup = states_quantity("How much speedup does X get?")
    assert speedup("X improves speedup $(1.70-2.10\\times)$ with a small drop.")
    assert speedup("X gives a 3 times speedup.")
    assert not speedup("X improves speed on four tasks.")


def test_a_count_joined_to_its_noun_by_a_hyphen_counts_it():
    # "a one-step bias" says how many steps ahead (before, no sentence stated a count of steps)
    steps = states_quantity("X suffers from a bias tied to looking how many steps ahead?")
    assert steps("These methods suffer from a significant one-step bias.")
    assert not steps("We use multi-step lookahead.")
    layers = states_quantity("How many layers does the network have?")
    assert layers("We train a 5-layer network.") and not layers("We train for a five-minute run.")


def test_how_long_asks_for_a_duration():
    # A number of something else ("dual constraints", "four datasets") does not say how long it takes.
    took = states_quantity("单张 focal stack 推理要多长时间?")
    assert took is states_duration
    assert not took("Our approach introduces a variational formulation with dual constraints.")
    assert not took("Experiments on four public datasets show gains.")
    assert took("It produces the models in less than five minutes on one GPU.")
    assert states_quantity("How long does training take?")("Training took 200 H100 GPU hours.")
    assert states_duration("Inference takes 3.2s per image.")
    assert not states_duration("We train on 4 GPUs.")
    # a length, not a duration: any number answers as before
    assert states_quantity("How long are the sequences?") is not states_duration


def test_what_percentage_asks_for_a_percentage():
    # "two major categories" states a number, not by what percent something fell
    for question in ("DISCO 相比基于分类器的引导方法，训练资源消耗降低了百分之多少？",
                     "By what percentages does X improve safety and helpfulness?"):
        percent = states_quantity(question)
        assert not percent("Existing methods fall into two major categories.")
        assert percent("X enhances safety by 34.2\\% and helpfulness by 34.3\\%."), question
    assert states_quantity("What fraction of the compute is left?")("About a half of it.")  # a rate in words


def test_core_asks_for_the_main_one_as_main_and_key_do():
    assert "core" not in content_terms("What is the core technique of X?")
    assert content_terms("What is the core technique of X?") == content_terms("What is the main technique of X?")


def test_a_comparison_may_describe_the_other_paper_by_a_few_words_before_paper(seed_settings):
    # "the trust-region stochastic optimal control paper" (no "that ..." after it) describes the paper
    # compared with the one named; before, only the named paper was asked, and the question refused.
    ans = rag.answer("model-free HJB paper and the trust-region stochastic optimal control paper - what is each "
                     "one's core technique and what do they show", settings=seed_settings)
    assert not ans.refused
    assert {c.label for c in ans.citations} >= {"Model-free approach targeting the HJB equation",
                                                "Trust region based strategy"}, ans.text


def test_a_description_beside_the_name_it_describes_is_not_another_paper():
    from rag.answering.named import _PAPER_DESCRIBED, _beside_name

    for question in ("For the symmetry paper Spot, which benchmark does each use?",
                     "Spot, the symmetry paper, and which benchmark does each use?"):
        m = _PAPER_DESCRIBED.search(question)
        assert m and _beside_name(question, m, {"Spot": ["spot"]}), question
    question = "Compare Spot and the symmetry paper: which benchmark does each use?"
    assert not _beside_name(question, _PAPER_DESCRIBED.search(question), {"Spot": ["spot"]})


def test_a_setup_of_a_named_thing_asks_for_that_thing():
    from rag.answering.asked import asks_for_name

    # "What GPU setup ...?" asks which GPUs, as "What GPU ...?" does (before, any sentence about the
    # paper's training answered it)
    asks = asks_for_name("What GPU setup and training time did X need?", {"X": ["x"]})
    assert asks is not None and asks("X trains on eight A100 GPUs.") and not asks("X trains a reranker with RL.")
    assert asks_for_name("What hardware configuration does X use?") is not None
    assert asks_for_name("What setup does X use?") is None  # a setup of nothing named: a description answers


def test_a_chinese_words_gloss_that_frames_the_question_is_no_evidence_to_state():
    # 测试 "test" frames the question as "tested" does in English; 数量 "amount" names the quantity asked
    # for, which a sentence states as a number (before, the sentence stating "over four million actions"
    # stated two of six glossed words, and the question was refused).
    from rag.answering.glosses import gloss_groups as _gloss_groups

    groups = _gloss_groups("BraVE 在动作数量超过多少的环境中进行了测试？", set())
    assert {"action"} <= set().union(*groups) and {"environ"} <= set().union(*groups)
    assert not any("test" in g or "amount" in g for g in groups)
    # not asking for a quantity, 数目 "amount; number" is a word like any other; 联合 "joint; combined" is
    # framed by neither sense first ("combined" frames English questions: "What does X combine?")
    groups = _gloss_groups("BraVE 如何减少要评估的联合动作数目？", set())
    assert any("amount" in g for g in groups) and any("joint" in g for g in groups)
    assert not any("amount" in g for g in _gloss_groups("BraVE 要评估的联合动作数目是多少？", set()))


def test_a_chinese_count_question_is_answered_by_the_sentence_stating_the_count(seed_settings):
    ans = rag.answer("BraVE 在动作数量超过多少的环境中进行了测试？", settings=seed_settings)
    assert not ans.refused and "four million" in ans.text, ans.text


def test_a_chinese_question_giving_examples_of_the_kind_asks_for_an_instance():
    # "哪种具体的物理系统，比如倒立摆？" asks which system, by name, as "which system, e.g. a pendulum?"
    # does: a sentence restating the paper's topic names none (before, it was quoted)
    from rag.answering.asked import states_what_is_asked

    asks = states_what_is_asked("LTS-P 的实验用的是哪种具体的物理系统，比如倒立摆？", {"LTS-P": ["x"]})
    assert asks is not None
    assert not asks("We study stabilizing an unknown partially observable linear time-invariant (LTI) system.")
    assert asks("We evaluate on the MuJoCo Hopper system.")
    solver = states_what_is_asked("SPOT 用的是哪款求解器，例如 Gurobi 还是 CPLEX？", {"SPOT": ["x"]})
    assert solver is not None and solver("We solve the program with Gurobi.")
