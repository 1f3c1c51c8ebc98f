"""The committed question set is well-formed and every gold reference and fact is in the corpus."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from rag.corpus import doc_id, parse_txt
from rag.evals.dataset import LANGS, SPLITS, TYPES, check_against_corpus, load_dataset

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "questions.jsonl"


def _corpus() -> dict[str, str]:
    docs: dict[str, str] = {}
    for f in sorted((ROOT / "data").glob("*.txt")):
        for rec in parse_txt(f.read_text(encoding="utf-8"), str(f)):
            docs[doc_id(rec.text)] = rec.text
    return docs


# The minimum size of each kind of question (issue: honest measurement).
MINIMUM = {"paraphrase": 30, "multi_doc": 25, "unanswerable": 25, "false_premise": 15}


def test_question_set_size_and_spread():
    ds = load_dataset(QUESTIONS)
    assert len(ds) >= 220
    types = Counter(c.type for c in ds.cases)
    assert set(types) == set(TYPES)
    assert all(n >= 8 for n in types.values()), types
    assert all(types[t] >= n for t, n in MINIMUM.items()), types
    assert sum(c.plausible for c in ds.cases) >= 10
    assert sum(c.lang == "zh" for c in ds.cases) >= 25
    corpus = _corpus()
    assert len(corpus) == 35
    covered = {g for c in ds.cases for g in c.gold_ids}
    assert covered == set(corpus), "every abstract is the gold of at least one question"


def test_every_gold_reference_and_fact_occurs_in_the_corpus():
    ds = load_dataset(QUESTIONS)
    assert check_against_corpus(ds.cases, _corpus()) == []


def test_unanswerable_questions_have_no_gold_and_multi_doc_have_several():
    ds = load_dataset(QUESTIONS)
    for c in ds.cases:
        if c.type == "unanswerable":
            assert not c.answerable and not c.gold_ids and not c.facts
        else:
            assert c.answerable and c.gold_ids and c.facts and len(c.gold_labels) == len(c.gold_ids)
        if c.type == "multi_doc":
            assert len(c.gold_ids) >= 2, c.id


def test_corpus_check_reports_missing_gold_and_absent_fact():
    from rag.evals.dataset import Case

    bad = [Case("x1", "q?", "lookup", "en", True, ("nope",), ("Nope",), (("anything",),)),
           Case("x2", "q?", "lookup", "en", True, ("d1",), ("D1",), (("absent fact",), ("Present",)))]
    problems = check_against_corpus(bad, {"d1": "A \\textbf{Pre}sent text."})
    assert problems == [
        "x1: gold document nope is not in the corpus",
        "x1: fact ['anything'] occurs in none of its gold abstracts",
        "x2: fact ['absent fact'] occurs in none of its gold abstracts",
    ]


def test_the_test_split_is_large_and_covers_every_type_and_language():
    ds = load_dataset(QUESTIONS)
    splits = Counter(c.split for c in ds.cases)
    assert set(splits) == set(SPLITS) and splits["test"] >= 110, splits
    for split in SPLITS:
        cases = [c for c in ds.cases if c.split == split]
        assert {c.type for c in cases} == set(TYPES), split
        assert {c.lang for c in cases} == set(LANGS), split
    test = [c for c in ds.cases if c.split == "test"]
    assert sum(c.plausible for c in test) >= 5 and sum(c.lang == "zh" for c in test) >= 10


def test_plausible_unanswerable_questions_name_a_paper_and_say_what_its_abstract_lacks():
    ds = load_dataset(QUESTIONS)
    text = " ".join(_corpus().values())
    corpus = text.casefold()
    name = re.compile(r"\w*[A-Z]\w*[A-Z\d][\w-]*")  # BraVE, T2I-R1, BeaverTails-V, G1
    known = {n.casefold() for n in name.findall(text)}
    for c in ds.cases:
        if c.plausible:
            assert c.type == "unanswerable", c.id
            names = name.findall(c.question)
            names += [w for w in re.findall(r"[\w-]+", c.question) if w.casefold() in known]  # "xverse code license?"
            assert any(n.casefold() in corpus for n in names), (c.id, names)
            if c.split == "test":
                assert c.note.startswith("plausible: "), c.id


def test_a_question_naming_its_paper_is_never_excused_at_scale():
    """`distractor_may_answer` is for questions that describe a topic, not ones naming the paper."""
    ds = load_dataset(QUESTIONS)
    naming = set()
    for c in ds.cases:
        named = [label for label in c.gold_labels if not label.endswith("…") and label in c.question]
        assert not (named and c.distractor_may_answer), (c.id, named)
        if named:
            naming.add(c.id)
    # "Which papers ...?" is always generic; "Compare X and Y ..." names its papers
    generic_multi = [c for c in ds.cases if c.type == "multi_doc" and c.id not in naming]
    assert generic_multi and all(c.distractor_may_answer for c in generic_multi)
    marked = Counter(c.type for c in ds.cases if c.distractor_may_answer)
    assert marked["false_premise"] == 0  # false premises name the paper they misquote
