"""What a question's form says it asks (rag.answering.asked), and how the offline answerer uses it.

Session 26's rules, each drawn from a fresh question the answerer failed and stated as a policy.
"""
import numpy as np

import rag
from rag.answering.parts import own_terms
from rag.answering.offline import compose
from rag.answering.quantity import asks_quantity
from rag.index.lexical import tokenize
from rag.types import Hit


def test_what_two_things_is_answered_by_what_the_paper_does(seed_settings):
    # Abstracts never write "thing": the sentence stating the two roles answers, without the word.
    ans = rag.answer("What two things do the value functions of VDT do to the Decision Transformer during "
                     "offline training?", settings=seed_settings)
    assert not ans.refused and "advantage-weighting" in ans.text, ans.text


def test_a_description_before_a_colon_says_which_paper_not_what_is_asked():
    question = "The humanoid controller that learns Kungfu from video: which robot was it deployed on?"
    assert own_terms(question) == set(tokenize("which robot was it deployed on?", compounds=False))
    assert own_terms("SnapViT - what GPU does it need?") == set(tokenize("what GPU does it need?", compounds=False))
    # no question clause after the colon or dash: nothing set off
    assert own_terms("proxy target framework for spiking nets - max performance gain reported?") is None
    assert own_terms("What is SnapViT: a pruning method?") is None
    # a clause asking only with framing words asks about what the lead names
    assert own_terms("Safe RLHF-V helpfulness gain - what's the number?", framing={"what", "number"}) is None


def test_a_paper_described_before_a_colon_is_answered_by_the_sentence_the_clause_asks_for(seed_settings):
    # (dev question s26a-lookup-06) The description finds the paper; the clause asks for the robot, so
    # the deployment sentence, not the one restating the description, answers.
    ans = rag.answer("The humanoid controller that learns Kungfu and dance moves from human video: which physical "
                     "robot was it deployed on, and what kind of actor-critic setup does it use?",
                     settings=seed_settings)
    assert not ans.refused and "Unitree G1" in ans.text and "asymmetric actor-critic" in ans.text, ans.text


def test_how_many_after_a_verb_of_deciding_describes_the_method_not_the_question():
    assert not asks_quantity("What was the RAG work whose reranker decides both the order and how many passages "
                             "to keep?")
    assert not asks_quantity("Which method learns how much to trust its critic?")
    assert asks_quantity("How many passages does DynamicRAG keep?")
    assert asks_quantity("Which method learns a threshold, and how many steps does it take?")


def test_which_works_asks_for_papers_as_which_papers_does(seed_settings):
    # Two abstracts write "G1" (one deploys on a Unitree G1, one runs on a G1 humanoid): "which works"
    # asks for every paper, as "which papers" does, not for the one paper a name would pick.
    ans = rag.answer("Which works in this corpus deploy something on a Unitree G1 robot?", settings=seed_settings)
    assert not ans.refused and {c.label for c in ans.citations} >= {"RoboRefer", "Physics-based humanoid control "
                                                                                  "framework"}, ans.text


def test_a_chinese_question_asking_which_llm_asks_for_a_name():
    from rag.answering.asked import asks_for_name

    assert asks_for_name("DynamicRAG 的重排序器是基于哪个LLM？", {"DynamicRAG": ["d"]}) is not None
    assert asks_for_name("SnapViT 用的是哪种GPU？", {"SnapViT": ["s"]}) is not None
    # before 哪 the acronym is the subject, not the thing asked for
    assert asks_for_name("LLM 在哪些任务上表现好？", {"X": ["x"]}) is None


def test_a_chinese_question_quoting_a_label_whole_names_that_paper(seed_settings):
    # An English question names a paper by its label's words; a Chinese one may quote the label whole.
    ans = rag.answer("请比较 BraVE 和 Value-based framework for continuous control：它们各自如何应对巨大的动作空间？",
                     settings=seed_settings)
    assert not ans.refused
    assert {c.label for c in ans.citations} == {"BraVE", "Value-based framework for continuous control"}, ans.text
    # written against the Chinese characters, with no space between
    ans = rag.answer("请比较BraVE和Value-based framework for continuous control各自如何应对巨大的动作空间？",
                     settings=seed_settings)
    assert {c.label for c in ans.citations} == {"BraVE", "Value-based framework for continuous control"}, ans.text


def test_the_phrases_either_side_of_or_are_alternatives():
    from rag.answering.parts import alternatives
    from rag.index.lexical import tokenize

    def stems(text):
        return set(tokenize(text, compounds=False))
    assert alternatives("Which papers propose offline reinforcement learning or offline imitation methods?") == [
        [stems("offline reinforcement learning"), stems("offline imitation methods")]]
    assert alternatives("Does it need labels or not?") == []  # "or not", "or both": no alternative offered


def _ask_alpha(question, text):
    """The offline answer to a question naming Alpha, whose abstract is `text` (every sentence equally
    close in meaning: the words decide)."""
    alpha = Hit(doc_id="alpha", title="Alpha", label="Alpha", score=0.03, chunk_id="alpha:0", dense_score=0.85,
                text=text)
    return compose(question, [alpha], named={"Alpha": ["alpha"]}, similarity=lambda t, q: np.full(len(t), 0.8))


def test_a_sentence_stating_either_alternative_states_what_is_asked():
    # "adapt or decompose": the sentence stating one of the two states all that is asked
    res = _ask_alpha("What does Alpha adapt or decompose?",
                     "Reward models overfit to prompts. We decompose the reward value into a prompt-free part and a "
                     "prompt-related part. Experiments on chat benchmarks show gains.")
    assert not res.refused and "prompt-free" in res.text, res.text


def test_what_quantity_does_it_make_adaptive_is_answered_by_the_quantity_named():
    # "make" is a light verb and "quantity" is answered by the quantity's name ("an adaptive KL penalty")
    res = _ask_alpha("What quantity does Alpha make adaptive?",
                     "DPO uses a static KL penalty. Alpha learns an adaptive KL penalty for each preference pair. "
                     "Experiments on chat benchmarks show gains.")
    assert not res.refused and "adaptive KL penalty" in res.text, res.text


def test_here_names_the_corpus_not_a_topic(seed_settings):
    # "which works here ...": "here" is the collection asked about, as "in this corpus" is
    ans = rag.answer("Which works here run their systems on a Unitree G1?", settings=seed_settings)
    assert not ans.refused and "Unitree G1" in ans.text, ans.text


# Session 27's rules.

def test_the_kind_asked_for_is_answered_by_an_instance_not_the_word():
    from rag.answering.asked import asked_kind_terms

    assert asked_kind_terms("and what RL algorithm drives the multi-step lookahead?") == {"rl", "algorithm"}
    assert asked_kind_terms("In X, which model gives local guidance?") == {"model"}
    assert asked_kind_terms("X: what property of the focal stack does it use?") == set(tokenize("property"))
    # a kind qualified by other words says which instance is meant, or asks for something else
    assert asked_kind_terms("Which spiking neuron models were tested with X?") == set()
    assert asked_kind_terms("What auxiliary model does X train?") == set()
    assert asked_kind_terms("What absolute task success rate does X reach?") == set()
    assert asked_kind_terms("What does X do?") == set()
    assert asked_kind_terms("and which two overheads of prior methods does it avoid?") == set()  # "overheads": no verb


def test_a_comparison_may_describe_the_paper_it_does_not_name(seed_settings):
    # The paper named is quoted for its part; the one described is the retrieved abstract closest to
    # the description (before, only the named paper was quoted, or the question refused).
    for question, labels in [
        ("Compare BraVE with the paper that learns humanoid skills from human videos: what does each learn from?",
         {"BraVE", "Physics-based humanoid control framework"}),
        ("RoboRefer and the work on reversing trajectories for robot manipulation: what does each use "
         "reinforcement fine-tuning or augmentation for?", {"RoboRefer", "TR-DRL"}),
    ]:
        ans = rag.answer(question, settings=seed_settings)
        assert {c.label for c in ans.citations} == labels, (question, ans.text)


def test_a_name_written_in_another_case_by_another_paper_is_not_that_paper():
    from rag.answering.named import as_spelled

    texts = {"a": "DISCO guides diffusion without gradients.", "b": "Disentanglement via Contrast (DisCo) ..."}
    assert as_spelled({"DISCO": ["a", "b"]}, texts) == {"DISCO": ["a"]}
    assert as_spelled({"disco": ["a", "b"]}, texts) == {"disco": ["a", "b"]}  # typed in lower case: either
    assert as_spelled({"Disco": ["a", "b"]}, texts) == {"Disco": ["a", "b"]}  # neither writes it so: both


def test_two_papers_named_after_a_word_counting_them_are_the_papers_asked_about(seed_settings):
    # "These two papers ...: X and Y" points at the papers it names; it does not ask for others
    # (before: the first refused, the second also quoted papers it did not name).
    for question, labels in [
        ("These two papers make deployed vision networks cheaper: SnapViT and UAT. How does each one decide "
         "how much compute to spend?", {"SnapViT", "UAT"}),
        ("Both papers learn from fixed datasets without new interaction: IOSTOM and VDT. What does each one "
         "learn from the data?", {"IOSTOM", "VDT"}),
    ]:
        ans = rag.answer(question, settings=seed_settings)
        assert {c.label for c in ans.citations} == labels, (question, ans.text)


def test_two_papers_described_without_names_are_each_answered_from(seed_settings):
    # Each description picks the retrieved abstract closest to it (a different one for each), and each
    # paper's part is answered on its own (before, both questions were refused).
    for question, labels, facts in [
        ("For the phone-app RL agent paper and the video arrow-of-time paper, which benchmark does each one "
         "evaluate on or release?", {"SoLS", "ArrowRL"}, ["AndroidWorld", "AoTBench"]),
        ("Take the humanoid kung fu paper and the spatial referring robot paper: on which robot does each one run?",
         {"Physics-based humanoid control framework", "RoboRefer"}, ["G1"]),
    ]:
        ans = rag.answer(question, settings=seed_settings)
        assert {c.label for c in ans.citations} == labels and all(f in ans.text for f in facts), ans.text


def test_a_refusal_about_papers_each_named_once_names_them_by_their_labels():
    from rag.answering.named import not_stated

    hits = [Hit(doc_id="a", title="", text="", score=1.0, chunk_id="a:0", label="RoTO"),
            Hit(doc_id="b", title="", text="", score=0.9, chunk_id="b:0", label="TR-DRL")]
    named = {"the tactile paper": ["a"], "the work on reversal": ["b"]}
    assert not_stated(hits, {"a", "b"}, named) == "The RoTO and TR-DRL abstracts do not state it."
    # a name two papers share still says what the question wrote
    assert not_stated(hits, {"a", "b"}, {"G1": ["a", "b"]}) == "No abstract that mentions G1 states it."


def test_clauses_opening_with_one_and_another_describe_papers_side_by_side():
    from rag.answering.named import one_and_another

    assert one_and_another("Two abstracts: one steers brain activity with stimulation, the other estimates "
                           "Jacobians. What do they use?") == ["one steers brain activity with stimulation",
                                                               "the other estimates Jacobians"]
    assert one_and_another("one modifies the KL penalty and another reweights samples") == [
        "one modifies the KL penalty", "another reweights samples"]
    assert len(one_and_another("有两篇：一篇做早退，另一篇做剪枝。")) == 2
    # "one ... the other" inside a clause describes one paper's topic, not two papers
    assert one_and_another("robot tasks where one undoes the other: which RL method reverses them?") == []
    assert one_and_another("Is one of them better than the other?") == []


def test_papers_described_one_and_another_are_each_answered_from(seed_settings):
    # (before: only the value-based paper, the best for the question as a whole)
    ans = rag.answer("One paper brings continuous-control RL to spiking neural networks, the other does value-based "
                     "continuous control without an actor. What does each propose?", settings=seed_settings)
    assert {c.label for c in ans.citations} == {"Proxy target framework",
                                                "Value-based framework for continuous control"}, ans.text


def test_a_number_of_papers_the_question_gives_is_how_many_its_answer_quotes(seed_settings):
    from rag.answering.asked_papers import papers_counted

    assert [papers_counted(q) for q in ["Two papers here ...", "Which two works ...?", "A couple of the abstracts",
                                        "哪两篇论文", "Which papers ...?", "What two objectives does each balance?",
                                        "two papers ... three papers"]] == [2, 2, 2, 2, None, None, None]
    # (before: a third and a fourth paper beside the two described, and two more beside the two asked for)
    for question, labels in [
        ("Two papers in the collection bring optimal control to learning: the HJB one and the trust-region one. "
         "What does each propose?", {"Model-free approach targeting the HJB equation", "Trust region based strategy"}),
        ("两篇论文分别研究：一篇用多臂老虎机调整早退阈值，另一篇给推理模型定义效率差距指标。它们各自叫什么？", {"UAT", "REO-RL"}),
    ]:
        ans = rag.answer(question, settings=seed_settings)
        assert {c.label for c in ans.citations} == labels, ans.text


def test_a_training_setting_asked_for_is_stated_only_by_a_sentence_naming_it(seed_settings):
    from rag.answering.asked import states_what_is_asked

    stated = states_what_is_asked("What batch size and learning rate did RoboRefer use?", {"RoboRefer": ["r"]})
    assert stated("We train with a batch size of 256 and a learning rate of 1e-5.")
    assert not stated("RoboRefer improves success by 17.4% over Gemini-2.5-Pro.")
    assert not stated("We use a learning rate of 1e-5.")  # (the batch size is asked too)
    # (before: answered by RoboRefer's sentences stating other numbers)
    ans = rag.answer("What batch size and learning rate did RoboRefer use for its reinforcement fine-tuning?",
                     settings=seed_settings)
    assert ans.refused, ans.text
