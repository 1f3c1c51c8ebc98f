"""How a question is typed: contractions, slashes, adverbs and intensifiers (session 34's rules).

Each rule was drawn from a dev question the answerer failed (most from a fresh batch written before
any rule) and is stated as a policy; the sentences below are made up, not the corpus's, except where
a test asks the seed index.
"""
import rag
from rag.answering.asked import names_asked_kind
from rag.answering.framing import content_terms
from rag.answering.parts import question_parts
from rag.answering.quantity import asks_quantity
from rag.text import normalize_question


def test_a_question_words_contracted_is_is_spelled_out():
    # "what's the max gain?" is read as "what is the max gain?": every rule reading a question's form by
    # its words ("what is the <measure>" asks for a number) reads both (before, "what's" escaped them).
    assert normalize_question("BraVE: what’s the max improvement? How's it done?") == \
        "BraVE: what is the max improvement? How is it done?"
    assert asks_quantity(normalize_question("what's the max improvement over prior methods?"))
    # a name's possessive is no contraction
    assert normalize_question("What is SoLS's benchmark?") == "What is SoLS's benchmark?"


def test_an_adverb_between_and_and_the_question_word_still_divides_the_question():
    assert question_parts("What is the max improvement X reports, and roughly how large were the action spaces?") == \
        ["What is the max improvement X reports", "and roughly how large were the action spaces?"]
    # so it may before "in which ..."
    assert len(question_parts("What do X and Y use, and roughly in which order?")) == 2
    # without a question word after it, "and" joins words, not questions
    assert question_parts("How do X and Y compare, and roughly?") == ["How do X and Y compare, and roughly?"]


def test_a_family_or_kind_of_a_named_thing_is_asked_for_by_name():
    # "Which pretrained model families ...?", "What kind of electrode setup ...?": a sentence naming a model
    # or an array beside its kind word answers (before, such a sentence was no evidence and the named
    # paper's question was refused).
    families = names_asked_kind("Which pretrained model families did X run experiments on?", {"X": ["x"]})
    assert families is not None and families("Experiments on DINO, SigLIPv2 and AugReg models show gains.")
    kind = names_asked_kind("For X, what kind of stimulation / electrode setup did they test it with?", {"X": ["x"]})
    assert kind is not None and kind("We tested X using microstimulation with a ``Utah'' array.")
    assert not kind("We tested X in a simulated cortex.")
    # a kind of something that has no names is not a request for a name
    assert names_asked_kind("What kind of regularization does X add?", {"X": ["x"]}) is None


def test_an_intensifier_asks_about_no_topic():
    assert content_terms("What exactly does X make adaptive?") == content_terms("What does X make adaptive?")
    assert content_terms("How was X actually tested?") == content_terms("How was X tested?")


def test_a_casually_typed_question_is_answered_from_its_named_paper(seed_settings):
    # Each was refused before this session's rules (a fresh dev question), though the abstract states it.
    ans = rag.answer("For OMiSO, what kind of stimulation / electrode setup did they actually test it with?",
                     settings=seed_settings)
    assert not ans.refused and "Utah" in ans.text, ans.text
    ans = rag.answer("SnapViT pruning - which pretrained model families did they run experiments on?",
                     settings=seed_settings)
    assert not ans.refused and "SigLIPv2" in ans.text, ans.text


def test_an_all_capital_name_that_is_no_word_may_be_typed_in_lower_case():
    # "iostom" names IOSTOM as "snapvit" names SnapViT (before, all-capital names were case-sensitive);
    # "SPOT" and "DISCO" stay so: in lower case they are English words.
    from rag.index.names import NameIndex

    names = NameIndex.build([("a", "We propose IOSTOM for offline imitation."), ("b", "We propose SPOT and DISCO.")],
                            is_word=lambda w: w in {"spot", "disco"})
    assert names.lookup("how does iostom avoid a discriminator?")[0] == {"iostom": ["a"]}
    assert names.lookup("where do we spot a disco?")[0] == {}
    # a name the corpus also writes as a plain lower-case word is a word too
    both = NameIndex.build([("a", "We propose MARS."), ("b", "Rovers on mars.")])
    assert both.lookup("what does mars do?")[0] == {}


def test_a_part_pointing_back_asks_about_the_paper_named_before():
    # "t2i-r1 base model? and what is their GRPO variant called": "their" is T2I-R1; among thousands of
    # papers "GRPO" names the papers about GRPO, so the second part was asked of them (and refused).
    from rag.answering.offline import _part_options

    named = {"T2I-R1": ["t2i"], "GRPO": ["g1", "g2"]}
    assert _part_options("and what is their GRPO variant called", {"named": named},
                         "t2i-r1 base model? ")["named"] == {"T2I-R1": ["t2i"]}
    # a name written after the part is not pointed back at: "they" is the paper the part names
    assert _part_options("T2I-R1: what model do they build on", {"named": named})["named"] == {"T2I-R1": ["t2i"]}
    # a part writing its own paper's name and no pronoun asks about that paper
    assert _part_options("and which base model does GRPO use?", {"named": named})["named"] == {"GRPO": ["g1", "g2"]}


# Session 35's rules: papers named side by side, a description set off by a typed dash, a part that lost
# its question mark, and the asker's own framing words.

def test_papers_named_side_by_side_are_each_asked(seed_settings):
    # "what base models do X and Y fine-tune?" asks it of each, as "each" would say; judged whole, the
    # question quoted the paper whose sentence scored best and left the other out.
    from rag.answering.offline import _side_by_side

    papers = [["T2I-R1"], ["REO-RL", "REG"]]
    assert _side_by_side("what base models do T2I-R1 and REO-RL fine-tune?", papers)
    assert _side_by_side("T2I-R1, REO-RL: which base models?", papers)
    assert _side_by_side("T2I-R1 和 REO-RL 的基础模型是什么？", papers)
    assert not _side_by_side("How does T2I-R1 improve on REO-RL?", papers)
    assert not _side_by_side("What do REO-RL and REG measure?", papers)  # two names of one paper
    ans = rag.answer("what base models do T2I-R1 and REO-RL fine-tune?", settings=seed_settings)
    assert "Janus-Pro" in ans.text and "DeepSeek-R1-Distill" in ans.text, ans.text


def test_a_description_set_off_by_a_typed_dash_says_which_paper_is_meant():
    # " -- " is a dash as " - " and "—" are: the words after it ask, the description before it only names
    # the paper (before, its many words drowned the two the question asks with).
    from rag.answering.parts import own_terms

    asked = own_terms("the method that refits a brain model online -- which electrode array was it tested with?")
    assert asked is not None and {"electrod", "array"} <= asked and "brain" not in asked
    assert own_terms("the method that refits a brain model online --- which array?") is not None


def test_a_question_part_without_its_question_mark_still_asks():
    # "I saw a paper that X. What do they use to Y, and do they Z?" is cut before ", and": the first part
    # ends "What do they use to Y", which asks as the whole question would.
    from rag.answering.parts import own_terms

    asked = own_terms("I saw a paper that splits the reward in two. What do they use to rank the samples")
    assert asked is not None and "rank" in asked and "split" not in asked
    # a statement without a question word asks nothing of its own
    assert own_terms("I saw a paper that splits the reward in two. They rank the samples") is None


def test_the_askers_memory_and_a_light_verb_are_framing():
    assert content_terms("I remember a paper that prunes ViTs. Which examples get priority?") == \
        content_terms("A paper that prunes ViTs. Which examples priority?")


def test_a_part_of_a_method_asked_for_by_what_it_does_is_answered_by_its_coined_name():
    # "what is the extra replay mechanism they add?": abstracts coin a name for a part they add, with its
    # acronym ("Successful Transition Replay (STR)"); that sentence states it, though it shares one word.
    from rag.answering.asked import names_part

    asks = names_part("In X, what is the extra replay mechanism they bolt on?")
    assert asks is not None and asks("We augment X with Successful Transition Replay (STR), which helps.")
    assert not asks("We use experience replay (ER) as usual.")  # no coined name: lower case
    assert not asks("We add a Replay buffer to X.")  # no acronym given: no name coined
    assert names_part("What is the main idea of X?") is None
    memory = names_part("what's its memory module?")
    assert memory is not None and memory("A Gated Memory Unit (GMU) stores the past.")


def test_how_a_named_paper_was_tested_is_answered_by_its_report_of_the_test():
    from rag.answering.asked import reports_test

    check = reports_test("What stimulation setup was X tested with?")
    assert check is not None and check("We tested X using microstimulation with a Utah array.")
    assert check("Experiments on two benchmarks show gains.") and not check("X is a new framework.")
    assert reports_test("How was X actually tested?") is not None
    # a value asked for is not a setup: the report of the test need not state it
    assert reports_test("What learning rate was X tested with?") is None
    assert reports_test("What does X test?") is None


def test_recording_hardware_is_answered_by_the_device_named():
    # "which recording / stimulation hardware ...?" asks for an array, an electrode or an implant, as "which
    # robot hardware" asks for a robot (before, only robots and machines were hardware).
    kind = names_asked_kind("omiso -- which recording/stimulation hardware did they test it with?", {"omiso": ["o"]})
    assert kind is not None and kind("We tested OMiSO using microstimulation with a ``Utah'' array.")
    robot = names_asked_kind("Which robot hardware does X run on?", {"X": ["x"]})
    assert robot is not None and robot("We deploy X on the Unitree G1 humanoid.")


def test_a_part_pointing_back_at_what_nothing_answered_asks_about_nothing(seed_settings):
    # "Any papers on X? What epsilon did they use?": "they" are the papers the first part asked for; the
    # corpus has none, so the second part is not answered from a paper that only says "epsilon" (before, it
    # quoted ε-DPO).
    ans = rag.answer("any of these papers do federated learning with differential privacy for on-device keyboards? "
                     "what epsilon did they use?", settings=seed_settings)
    assert ans.refused, ans.text
    # a part pointing back at a part that was answered is still answered
    ans = rag.answer("Which paper adapts the KL penalty for each preference pair? What criterion does it use?",
                     settings=seed_settings)
    assert not ans.refused and "monotonicity" in ans.text, ans.text


def test_a_trick_is_framing_as_a_technique_is():
    assert content_terms("What is the key trick in X?") == content_terms("What is the key technique in X?")


def test_what_a_paper_tries_to_do_is_what_it_does():
    # "trying" would weigh as a rare word no abstract writes; "we propose", "aims to" state the same
    assert content_terms("What problem is each one trying to avoid?") == content_terms("What problem does each one avoid?")
    assert content_terms("What does X attempt to learn?") == content_terms("What does X learn?")


def test_a_chinese_question_may_write_a_label_partly_in_latin_script():
    # "代理目标网络（proxy target）框架" writes "Proxy target framework": two of its words in Latin script,
    # "framework" as 框架. Among 5,000 abstracts the question was answered from another paper's deployment
    # sentences (a wrong-paper answer); the label's words name the paper, as in an English question.
    from rag.answering.framing import QUESTION_WORDS
    from rag.answering.named import named_by_label_zh
    from rag.types import Hit

    hits = [Hit(doc_id="o", title="Once-for-all networks for deployment", text="...", score=1.0),
            Hit(doc_id="p", title="Proxy target framework", text="...", score=0.9)]
    asked = "代理目标网络（proxy target）框架在部署时的推理开销是多少？"
    assert named_by_label_zh(asked, hits, framing=QUESTION_WORDS) == {"Proxy target framework": ["p"]}
    # one Latin word is no label written
    assert named_by_label_zh("代理（proxy）目标框架的开销？", hits, framing=QUESTION_WORDS) == {}
    # every other word of the label must be glossed: 网络 is "network", not "framework"
    assert named_by_label_zh("proxy target 网络的开销？", hits, framing=QUESTION_WORDS) == {}


def test_a_query_typed_as_keywords_asks_for_each_thing_it_joins():
    assert question_parts("SoLS benchmark and the replay mechanism added to it") == \
        ["SoLS benchmark", "the replay mechanism added to it"]
    # a question word says how the question divides; so does a request; a long statement is a description
    assert question_parts("What are the SoLS benchmark and replay mechanism?") == \
        ["What are the SoLS benchmark and replay mechanism?"]
    assert question_parts("compare SoLS and REO-RL rewards") == ["compare SoLS and REO-RL rewards"]
    long = ("steering a diffusion model toward a condition without a classifier and without retraining the "
            "whole model by picking noise vectors")
    assert question_parts(long) == [long]


def test_a_keyword_query_is_answered_for_each_thing_it_asks(seed_settings):
    ans = rag.answer("t2i-r1 base model and the RL algorithm that trains it", settings=seed_settings)
    assert not ans.refused and "Janus-Pro" in ans.text and "BiCoT-GRPO" in ans.text, ans.text


def test_how_long_it_takes_and_on_what_hardware_is_answered_by_the_gpu_named(seed_settings):
    # "how long ... take" asks a duration whose words no abstract repeats; compute hardware is a GPU
    from rag.answering.framing import QUANTITY_WORDS

    q = "How long does X take to prune?"
    assert asks_quantity(q) and [x for x in content_terms(q) if x not in QUANTITY_WORDS] == ["prune"]
    kind = names_asked_kind("What hardware does X run on?", {"X": ["x"]})
    assert kind is not None and kind("It runs in five minutes on a single A100 GPU.")
    ans = rag.answer("How long does SnapViT take to prune and on what hardware?", settings=seed_settings)
    assert not ans.refused and "A100" in ans.text, ans.text


def test_a_kind_asked_for_may_join_two_things_with_and():
    kind = names_asked_kind("What kind of stimulation and electrode hardware was X tested with?", {"X": ["x"]})
    assert kind is not None and kind("We tested X using microstimulation with a ``Utah'' array.")


def test_running_ones_stuff_on_a_machine_is_framing(seed_settings):
    # "run their stuff on X" says what "deployed on X" or "use X" would: neither word is the topic
    assert content_terms("Which papers run their stuff on a Unitree G1?") == \
        content_terms("Which papers use a Unitree G1?")
    ans = rag.answer("which papers run their stuff on a Unitree G1?", settings=seed_settings)
    assert not ans.refused and {"RoboRefer", "Physics-based humanoid control framework"} <= \
        {c.label for c in ans.citations}, ans.text


def test_a_question_sentence_asking_with_framing_alone_asks_what_the_statement_names():
    from rag.answering.framing import QUANTITY_WORDS, QUESTION_WORDS
    from rag.answering.parts import own_terms

    framing = QUESTION_WORDS | QUANTITY_WORDS
    assert own_terms("X and Y each introduce a benchmark. What are they called?", framing) is None
    own = own_terms("X and Y both prune networks. What criterion does each use?", framing)
    assert own is not None and "criterion" in own and "prune" not in own  # a word of its own: asked with it


# Session 37's rules (drawn from a fresh dev batch after it was measured held out).

def test_a_count_of_the_answers_asked_for_and_ending_up_are_framing():
    # "Which two tasks ...?": the number counts the answers; a sentence listing them seldom writes it.
    # "did they end up beating ...?" asks whether they beat it.
    assert content_terms("On which two tasks did the agents end up beating humans?") == \
        content_terms("On which tasks did the agents beat humans?")
    # a number elsewhere, and "end" in other senses, are words of the question
    assert "two" in content_terms("Which method uses two critics?")
    assert "end" in content_terms("Which methods train end-to-end?")


def test_validating_a_method_is_testing_it():
    assert content_terms("X validated with what stimulation technique?") == \
        content_terms("X tested with what stimulation technique?")


def test_a_semicolon_between_two_asking_clauses_divides_the_question():
    assert question_parts("X applied to what trained model; Y validated with what technique") == \
        ["X applied to what trained model", "Y validated with what technique"]
    # a clause that does not ask is part of the question it stands in
    q = "Which benchmark does X use; it is a robotics paper"
    assert question_parts(q) == [q]


def test_papers_listed_by_name_and_by_description_are_each_answered(seed_settings):
    # A paper described beside two named ones ("ArrowRL, RoboRefer and the tactile sensing paper") is the
    # retrieved abstract closest to its description; "three" counts the benchmarks of the three papers
    # together, so no one paper's sentence must state it.
    ans = rag.answer("RoboRefer, ArrowRL and the tactile sensing RL paper each put out a new benchmark. "
                     "What are the three benchmarks called?", settings=seed_settings)
    assert not ans.refused, ans.text
    assert {"RoboRefer", "ArrowRL", "RoTO"} <= {c.label for c in ans.citations}, ans.text
    assert "AoTBench" in ans.text and "RefSpatial-Bench" in ans.text and "Robot Tactile Olympiad" in ans.text


def test_a_part_using_another_papers_label_words_asks_about_that_paper(seed_settings):
    # The second part names no paper by name and has no pronoun pointing back: its label words
    # ("single-timescale actor-critic") name the paper it asks about, not LTS-P named before.
    ans = rag.answer("What does the sample complexity of LTS-P scale with, and what sample complexity does the "
                     "global convergence analysis of single-timescale actor-critic reach?", settings=seed_settings)
    assert "Global convergence of the single-timescale actor-critic algorithm" in {c.label for c in ans.citations}, \
        ans.text
    assert "epsilon^{-3}" in ans.text, ans.text


def test_two_papers_described_one_by_its_label_words_are_each_answered(seed_settings):
    ans = rag.answer("Both the SNN proxy target paper and the actor-free value-based continuous control paper "
                     "tackle unstable training. What does each one introduce?", settings=seed_settings)
    assert {"Proxy target framework", "Value-based framework for continuous control"} <= \
        {c.label for c in ans.citations}, ans.text


def test_what_a_paper_says_or_claims_is_what_it_states():
    assert content_terms("Which overheads does X say it avoids?") == content_terms("Which overheads does X avoid?")
    assert content_terms("What property does X claim?") == content_terms("What property does X have?")


def test_a_description_may_quote_its_words(seed_settings):
    # "the 'prediction power' online control paper" describes the paper as its unquoted words would
    ans = rag.answer("compare LTS-P and the 'predictive power' online control paper: what kind of system does "
                     "each one study?", settings=seed_settings)
    assert {"LTS-P", "Value of stochastic predictions in online optimal control"} <= \
        {c.label for c in ans.citations}, ans.text


def test_a_paper_described_in_a_list_of_named_ones_is_asked_about_without_each(seed_settings):
    ans = rag.answer("list the benchmarks put out by RoboRefer, ArrowRL and the tactile sensing RL paper",
                     settings=seed_settings)
    assert {"RoboRefer", "ArrowRL", "RoTO"} <= {c.label for c in ans.citations}, ans.text


def test_a_part_describing_another_paper_asks_about_it(seed_settings):
    ans = rag.answer("Which robots is RoboRefer integrated with, and which robot was the kung fu humanoid "
                     "imitation paper deployed on?", settings=seed_settings)
    assert {"RoboRefer", "Physics-based humanoid control framework"} <= {c.label for c in ans.citations}, ans.text
    assert "Unitree G1" in ans.text, ans.text
    # a description the named paper answers best is that paper's, not another's
    ans = rag.answer("What benchmark does SoLS use, and how does the successful transition replay method help?",
                     settings=seed_settings)
    assert {c.label for c in ans.citations} == {"SoLS"}, ans.text


def test_a_hyphen_typed_as_a_dash_ends_a_description():
    from rag.answering.named import _DESCRIBES_PAPER

    m = _DESCRIBES_PAPER.search("TR-DRL and the paper on android app control - which benchmark does each use")
    assert m is not None and m.group().strip() == "the paper on android app control"
    # a hyphen inside a word is no dash
    m = _DESCRIBES_PAPER.search("X and the paper on app-control agents: which benchmark?")
    assert m is not None and m.group().strip() == "the paper on app-control agents"


def test_a_term_a_chinese_question_quotes_must_be_stated_in_order():
    # "反向奖励" glosses to reverse / opposite + reward: a paper writing "reverse reward" states it, one that
    # only writes "the opposite problem" and, elsewhere, "reward" does not
    from rag.answering.glosses import gloss_groups as _gloss_groups, states_in_order as _states_in_order

    groups = _gloss_groups("反向奖励", set())
    assert len(groups) == 2
    assert _states_in_order("We introduce a training strategy with an innovative reverse reward.", groups)
    assert not _states_in_order("Such methods suffer the opposite problem, and the reward is sparse.", groups)


def test_only_papers_stating_a_quoted_chinese_term_are_quoted():
    from rag.answering.candidates import Candidate
    from rag.answering.glosses import stating_quoted_term as _stating_quoted_term

    def cand(i, text):
        return Candidate(hit_index=i, start=0, end=len(text), text=text, terms=set())

    pool = [cand(0, "Learning reward functions from videos is promising."),
            cand(1, "We introduce ArrowRL, with an innovative reverse reward."),
            cand(1, "ArrowRL improves temporal perception.")]
    kept = _stating_quoted_term(pool, "哪篇论文引入了“反向奖励”？")
    assert [c.hit_index for c in kept] == [1, 1]
    # no paper states it: nothing is dropped; no quoted term: nothing either
    assert _stating_quoted_term(pool[:1], "哪篇论文引入了“反向奖励”？") == pool[:1]
    assert _stating_quoted_term(pool, "哪篇论文引入了反向奖励？") == pool
