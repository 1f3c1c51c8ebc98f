"""The committed question set is well-formed and every gold reference and fact is in the corpus."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from rag.corpus import doc_id, parse_txt
from rag.evals.dataset import TYPES, check_against_corpus, load_dataset

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "questions.jsonl"


def _corpus() -> dict[str, str]:
    docs: dict[str, str] = {}
    for f in sorted((ROOT / "data").glob("*.txt")):
        for rec in parse_txt(f.read_text(encoding="utf-8"), str(f)):
            docs[doc_id(rec.text)] = rec.text
    return docs


def test_question_set_size_and_spread():
    ds = load_dataset(QUESTIONS)
    assert len(ds) >= 80
    types = Counter(c.type for c in ds.cases)
    assert set(types) == set(TYPES)
    assert all(n >= 8 for n in types.values()), types
    assert sum(c.lang == "zh" for c in ds.cases) >= 8
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
