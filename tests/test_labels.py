"""Labels of untitled abstracts: general rules on made-up abstracts, then the seed corpus."""
import pytest

from rag.clean import clean
from rag.corpus import read_corpus
from rag.labels import MAX_PHRASE_WORDS, make_label
from rag.text import split_sentences

from conftest import SEED_DATA


@pytest.mark.parametrize(
    "text, label",
    [
        # the contribution's noun phrase: article, praise, adverbs and the relative clause go
        ("We propose a simple yet effective contrastive objective for long-tailed recognition that balances "
         "head and tail classes across many benchmarks.", "Contrastive objective for long-tailed recognition"),
        ("In this work, we present a new dataset of 10k annotated chest X-rays collected from three hospitals "
         "over five years.", "Dataset of 10k annotated chest X-rays"),
        ("We introduce a benchmark for evaluating tool use in language agents, which contains 1,000 tasks drawn "
         "from real software projects.", "Benchmark for evaluating tool use in language agents"),
        ("Sorting networks are old. This paper presents a learned comparator network, aiming to sort faster on "
         "GPUs than bitonic sort.", "Learned comparator network"),
        # the topic the opening sentence declares
        ("This paper studies the problem of learning sparse graphs from noisy samples. We give tight bounds on "
         "the sample complexity of the task.", "Learning sparse graphs from noisy samples"),
        ("We consider online learning with delayed feedback in adversarial bandits. We show a regret bound that "
         "matches the lower bound.", "Online learning with delayed feedback in adversarial bandits"),
        ("We study how transformers learn in-context linear regression, and show that they implement gradient "
         "descent.", "How transformers learn in-context linear regression"),
        ("We investigate whether large language models can plan multi-step tasks without external tools, using "
         "a suite of puzzles.", "Whether large language models can plan multi-step tasks"),
        # "this <modifiers> method" when nothing is proposed in so many words
        ("Planning under uncertainty is hard. We therefore approach it by sampling futures. It turns out that "
         "this scenario tree based strategy is both fast and sound.", "Scenario tree based strategy"),
        # a phrase a reader would not recognise is no label: the first words remain
        ("Graph neural networks are widely used in chemistry. They suffer from oversmoothing in deep layers. "
         "Experiments confirm this on many datasets.", "Graph neural networks are widely used…"),
        ("Deep models overfit. We propose a novel framework that fixes this on many benchmarks and tasks.",
         "Deep models overfit. We propose a…"),
    ],
)
def test_untitled_abstracts_get_a_noun_phrase_not_their_first_words(text, label):
    assert make_label(text) == label


@pytest.mark.parametrize(
    "text, label",
    [
        ("Image classifiers are slow. We present Fast FooNet, a pruned network for mobile devices. Experiments "
         "show Fast FooNet beats prior pruned networks on ImageNet.", "Fast FooNet"),
        # a word that precedes the name only sometimes is not part of it
        ("We propose FooNet for sorting. Moreover, FooNet is fast. SFT-trained FooNet beats all baselines.",
         "FooNet"),
        # nor is a word that opens the sentence
        ("Robots need touch. Using BarNet, robots sort widgets. We propose BarNet, a tactile policy.", "BarNet"),
        ("Diffusion models are expressive. Our method, called GuideX, steers sampling with a learned critic. "
         "GuideX improves FID on three datasets.", "GuideX"),
    ],
)
def test_introduced_names_keep_the_qualifiers_they_always_carry(text, label):
    assert make_label(text) == label


def test_titles_win_and_are_tidied():
    text = "We propose a simple yet effective contrastive objective for long-tailed recognition."
    assert make_label(text, title="  Balanced   Contrast\n") == "Balanced Contrast"


def _seed_labels():
    return {d.id: (d.label, d.text) for d in read_corpus([SEED_DATA]).documents}


def test_seed_labels_are_names_or_short_phrases_never_the_quoted_opening():
    for label, text in _seed_labels().values():
        assert not label.endswith("…"), label
        assert len(label.split()) <= MAX_PHRASE_WORDS, label
        s, e = split_sentences(clean(text))[0]
        assert not clean(text)[s:e].startswith(label), label  # not the sentence an answer quotes


@pytest.mark.parametrize(
    "needle, label",
    [
        ("the Safe RLHF-V --", "Safe RLHF-V"),  # not RLHF-V, another paper
        ("purely value-based framework", "Value-based framework for continuous control"),
        ("We study the value of stochastic predictions", "Value of stochastic predictions in online optimal control"),
        ("We analyze the global convergence", "Global convergence of the single-timescale actor-critic algorithm"),
        ("This paper presents a physics-based humanoid", "Physics-based humanoid control framework"),
        ("a novel proxy target framework", "Proxy target framework"),
        ("this trust region based strategy", "Trust region based strategy"),
        ("tree-structured action traversal", "BraVE"),
        ("(OMiSO)", "OMiSO"),
        ("we propose RoboRefer", "RoboRefer"),
    ],
)
def test_seed_examples(needle, label):
    (found,) = [lbl for lbl, text in _seed_labels().values() if needle in text]
    assert found == label
