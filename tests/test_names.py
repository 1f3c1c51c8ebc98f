"""Names the corpus knows: extraction, distinctiveness, and retrieval of the named paper first."""
from __future__ import annotations

import rag
from rag.index.names import NameIndex, extract_names, url_names


def test_names_are_mixed_case_acronyms_or_letters_with_digits():
    text = "We propose BraVE and RoboRefer, built on T2I-R1 and ε-DPO, run on a Unitree G1 with GPT-4 and LLMs."
    assert extract_names(text) == {"BraVE", "RoboRefer", "T2I-R1", "ε-DPO", "G1", "GPT-4", "LLMs"}


def test_a_versioned_name_is_one_name():
    text = "We compare Gemini-2.5-Pro, Qwen2.5-VL-7B and Llama-3.1 with Llama-3-8B at 2.5B scale; top-5 and Top-1."
    assert extract_names(text) == {"Gemini-2.5-Pro", "Qwen2.5-VL-7B", "Llama-3.1", "Llama-3-8B"}


def test_plain_words_measurements_and_chinese_are_not_names():
    assert extract_names("However, Kungfu and Transformers need 10B parameters and 3D scenes.") == set()
    assert extract_names("XVerse 论文的作者是谁？") == {"XVerse"}


def test_a_name_with_a_describing_word_hyphened_after_it_is_the_name_alone():
    assert extract_names("An LLM-based agent with SnapViT-style pruning and RL-trained policies.") == \
        {"LLM", "SnapViT", "RL"}
    # Hyphened parts that are names or variants stay: T2I-R1, GPT-4o-mini, BERT-base.
    assert extract_names("T2I-R1 beats GPT-4o-mini and BERT-base.") == {"T2I-R1", "GPT-4o-mini", "BERT-base"}
    docs = [(f"d{i}", "We use an LLM.") for i in range(20)] + [("a", "Our LLM-based reranker.")]
    assert NameIndex.build(docs).lookup("Which papers train an LLM-based agent?") == ({}, [])


def test_lookup_splits_distinctive_known_names_from_unknown_ones():
    docs = [(f"d{i}", "We use an LLM.") for i in range(20)] + [("a", "We propose SnapViT."), ("b", "SnapViT is fast.")]
    index = NameIndex.build(docs)
    named, unknown = index.lookup("Does SnapViT beat AlphaFold on LLMs?")
    assert named == {"SnapViT": ["a", "b"]}  # "LLM(s)": in 20 of 22 abstracts, not distinctive
    assert unknown == ["AlphaFold"]


def test_a_name_written_only_inside_a_hyphenated_name_is_known():
    index = NameIndex.build([("a", "We introduce BiCoT-GRPO for text-to-image models."), ("b", "We use PPO.")])
    assert index.lookup("Which papers use GRPO?") == ({"GRPO": ["a"]}, [])  # not "no abstract mentions GRPO"
    assert index.lookup("What is BiCoT?") == ({"BiCoT": ["a"]}, [])
    assert index.lookup("Does DAPO beat GRPO?") == ({"GRPO": ["a"]}, ["DAPO"])


def test_an_acronym_in_the_singular_or_the_plural_is_one_name():
    index = NameIndex.build([("a", "Diffusion Transformers (DiTs) lose coherence."), ("b", "We fine-tune VLMs."),
                             ("c", "We use PPO.")])
    assert index.lookup("Which paper modulates a DiT?") == ({"DiT": ["a"]}, [])  # not "no abstract mentions DiT"
    assert index.lookup("Which VLM is used?") == ({"VLM": ["b"]}, [])
    assert index.lookup("Which PPOs are used?") == ({"PPOs": ["c"]}, [])
    assert index.lookup("Which paper uses a DiTX?") == ({}, ["DiTX"])


def test_a_greek_prefix_spelled_out_finds_the_name_written_with_the_letter():
    index = NameIndex.build([("a", "We propose ε-DPO, an adaptive variant of DPO."), ("b", "We use PPO.")])
    assert index.lookup("What does epsilon-DPO adapt?") == ({"epsilon-DPO": ["a"]}, [])
    assert index.lookup("What does Epsilon-DPO adapt?") == ({"Epsilon-DPO": ["a"]}, [])
    assert index.lookup("What does alpha-DPO adapt?") == ({}, ["alpha-DPO"])  # another letter, another name
    assert index.lookup("What does eps-DPO adapt?") == ({"eps-DPO": ["a"]}, [])  # (session 41) epsilon's ASCII spelling


def test_a_project_link_names_its_project():
    assert url_names("Videos at https://kungfubot.github.io.") == {"kungfubot"}
    assert url_names("Code: https://github.com/xuzijie32/Proxy-Target.") == {"proxy-target", "proxytarget"}
    assert url_names("github.com/zli12321/VideoHallu.git") == {"videohallu"}
    assert url_names("https://huggingface.co/datasets/someone/BarQA") == {"barqa"}  # not the owner
    assert url_names("see https://elastic.ashita.nl/ and arXiv:2501.01234") == set()  # no code host: no name
    index = NameIndex.build([("k", "A humanoid framework. Videos: https://kungfubot.github.io"), ("o", "Other.")])
    assert index.lookup("Which robot was KungfuBot deployed on?") == ({"KungfuBot": ["k"]}, [])


def test_a_hyphenated_name_written_as_capitalised_words_is_that_name():
    index = NameIndex.build([("p", "A proxy target framework. Code: https://github.com/x/Proxy-Target."),
                             ("o", "Deep Learning for Other Things.")])
    assert index.lookup("Under what license is the Proxy Target code released?") == ({"Proxy Target": ["p"]}, [])
    assert index.lookup("What is Deep Learning for?") == ({}, [])  # no hyphenated name "deep-learning"


def test_a_paper_named_only_by_its_project_link_is_answered_from(seed_settings):
    # The KungfuBot abstract calls its method "a physics-based humanoid control framework"; only its
    # project page writes the name.
    ans = rag.answer("Which humanoid robot was KungfuBot deployed on?", settings=seed_settings)
    assert not ans.refused, ans.text
    assert {c.label for c in ans.citations} == {"Physics-based humanoid control framework"} and "G1" in ans.text


def test_an_index_without_names_judges_nothing():
    assert NameIndex().lookup("What does BraVE do?") == ({}, [])


def test_a_named_paper_ranks_first_even_when_another_is_closer(seed_settings):
    # Asked about RoboRefer's training cost: other abstracts talk more about GPU hours.
    hits = rag.retrieve("How many GPU hours were needed to train RoboRefer?", settings=seed_settings)
    assert hits[0].label == "RoboRefer"


def test_a_detail_the_named_abstract_lacks_is_refused_with_the_paper_named(seed_settings):
    ans = rag.answer("What learning rate was used to train T2I-R1?", settings=seed_settings)
    assert ans.refused and ans.citations == [] and "T2I-R1 abstract does not state" in ans.text


def test_a_label_or_title_quoted_whole_names_its_paper():
    docs = [("a", "We propose a proxy target framework for spiking networks."), ("b", "Proxies speed up selection.")]
    titles = [("a", "Proxy target framework"), ("b", "Selection via Proxy: Efficient Data Selection"),
              ("b", "Diffusion models")]  # two words: a topic, not a title to look for
    index = NameIndex.build(docs, titles)
    assert index.quoted_titles("By how much does the Proxy target framework raise performance?") == \
        {"proxy target framework": ["a"]}
    assert index.quoted_titles("Which proxy helps target selection in this framework?") == {}
    assert index.quoted_titles("What do diffusion models learn?") == {}
    assert NameIndex.build(docs).quoted_titles("the Proxy target framework") == {}
    # A Chinese question may write the title against its characters, with no space between.
    assert index.quoted_titles("论文Proxy target framework中的代理网络是什么？") == {"proxy target framework": ["a"]}


def test_titles_saved_by_an_older_version_are_keyed_as_questions_are(tmp_path):
    # Before, a key kept a hyphen standing alone and CJK characters: "foo - bar" is now "foo bar".
    (tmp_path / "names.json").write_text(
        '{"n_docs": 2, "docs": {}, "titles": {"proxy target framework - spiking": ["a"], "论文proxy target": ["b"]}}',
        encoding="utf-8")
    index = NameIndex.load(tmp_path)
    assert index.quoted_titles("the Proxy target framework: spiking nets") == {"proxy target framework spiking": ["a"]}
    assert "proxy target" not in index.titles  # two words: no longer a title to look for


def test_names_saved_in_an_older_format_are_stale(tmp_path):
    (tmp_path / "names.json").write_text('{"n_docs": 1, "docs": {"brave": ["a"]}}', encoding="utf-8")
    assert not NameIndex.current(tmp_path)
    assert NameIndex.load(tmp_path).lookup("What does BraVE do?") == ({"BraVE": ["a"]}, [])  # readers go on
    (tmp_path / "names.json").write_text(NameIndex.build([("a", "BraVE")], [("a", "Branch value estimation")]).to_json(),
                                         encoding="utf-8")
    assert NameIndex.current(tmp_path) and NameIndex.load(tmp_path).titles == {"branch value estimation": ["a"]}


def test_a_name_written_with_a_capital_inside_may_be_typed_in_lower_case(tmp_path):
    docs = [("a", "We introduce SnapViT, a pruning method."), ("b", "BraVE evaluates joint actions."),
            ("c", "SPOT searches trees."), ("d", "Online MicroStimulation Optimization (OMiSO) with intracortical "
                                                "microstimulation."), ("e", "DiT backbones")]
    index = NameIndex.build(docs, is_word=lambda w: w in {"brave", "spot"})
    assert index.lookup("snapvit pruning: gradient info gets combined with what?") == ({"snapvit": ["a"]}, [])
    assert index.lookup("what does omiso optimize?") == ({"omiso": ["d"]}, [])
    # An English word ("brave"), an acronym that is a word in lower case ("spot"), a name the corpus also
    # writes as a plain word ("microstimulation") and a short one ("dit") are words in a lower-case question.
    for question in ("a brave idea", "which spot?", "What is microstimulation?", "dit models"):
        assert index.lookup(question) == ({}, []), question
    assert index.lookup("What does SnapViT prune?") == ({"SnapViT": ["a"]}, [])  # as written, named once
    (tmp_path / "names.json").write_text(index.to_json(), encoding="utf-8")
    assert NameIndex.load(tmp_path).casual == index.casual == {"snapvit", "omiso"}
    # a names.json whose lower-case list holds a key without documents (edited by hand) names nothing
    assert NameIndex({"snap": ["a"]}, 1, {}, frozenset({"snapvit"})).lookup("snapvit?") == ({}, [])


def test_a_capital_before_a_capitalised_word_may_be_typed_in_lower_case():
    # (session 41) "XVerse" is no word in any case, as "SnapViT" is not ("t2i r1 vs xverse, what does each add?");
    # a plural acronym ("LLMs") ends in one small letter and stays case-sensitive: "llms" is typed as a word
    docs = [("a", "We present XVerse, multi-subject control."), ("b", "LLMs reason."), ("c", "LLMs plan.")]
    index = NameIndex.build(docs, is_word=lambda w: False)
    assert index.lookup("how does xverse control subjects?") == ({"xverse": ["a"]}, [])
    assert index.lookup("which llms plan?") == ({}, [])
    assert index.casual == {"xverse"}


def test_a_plain_word_hyphened_before_a_known_name_describes_it():
    # "a robot-RL method" is RL for robots, not a name no abstract mentions (which would refuse the question)
    index = NameIndex.build([("a", "We use RL for manipulation."), ("b", "We use PPO.")])
    assert index.lookup("Is there a robot-RL method exploiting symmetry?") == ({}, [])
    assert index.lookup("Does FooNet-RL beat it?") == ({}, ["FooNet-RL"])  # a part no document names
    assert index.lookup("What does alpha-RL adapt?") == ({}, ["alpha-RL"])  # a Greek letter: a variant's name
    assert index.lookup("Does PPO-RL help?") == ({}, ["PPO-RL"])  # known names alone: a name of its own
