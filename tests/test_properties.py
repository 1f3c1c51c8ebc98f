"""Property-based tests: hostile bytes and text never crash the parsers or the question path."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import rag
from rag.clean import clean
from rag.corpus import read_corpus
from rag.errors import UsageError
from rag.index.lexical import tokenize
from rag.labels import make_label
from rag.render import safe
from rag.text import split_sentences

GOOD = ("We propose GoodNet, a graph model for molecules that reduces memory by forty percent "
        "on standard benchmarks while keeping accuracy.")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(st.binary(max_size=2000), st.sampled_from([".txt", ".jsonl", ".json", ".csv"]))
def test_random_bytes_never_crash_ingest_parsing_and_good_files_survive(tmp_path_factory, data, suffix):
    folder = tmp_path_factory.mktemp("p")
    (folder / f"random{suffix}").write_bytes(data)
    (folder / "good.txt").write_text(GOOD, encoding="utf-8")
    corpus = read_corpus([folder])
    assert any(d.text == GOOD for d in corpus.documents)
    for p in corpus.problems:
        assert p.path.endswith(suffix) and p.reason


@FAST
@given(st.text(max_size=3000))
def test_random_unicode_text_files_parse(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("u")
    (folder / "u.txt").write_text(text, encoding="utf-8", errors="surrogatepass") if not any(
        0xD800 <= ord(c) <= 0xDFFF for c in text) else (folder / "u.txt").write_bytes(b"")
    corpus = read_corpus([folder])
    for doc in corpus.documents:
        assert doc.text.strip() and doc.label and len(doc.id) == 16


@FAST
@given(st.lists(st.one_of(st.text(max_size=200), st.integers(), st.none(), st.dictionaries(st.text(max_size=10), st.text(max_size=50))), max_size=8))
def test_random_jsonl_lines(tmp_path_factory, items):
    folder = tmp_path_factory.mktemp("j")
    lines = [json.dumps(x) for x in items] + [json.dumps({"abstract": GOOD})]
    (folder / "x.jsonl").write_text("\n".join(lines), encoding="utf-8")
    corpus = read_corpus([folder])
    assert GOOD in {d.text for d in corpus.documents}


@FAST
@given(st.text(max_size=2000))
def test_text_helpers_are_total(text):
    clean(text)
    tokenize(text)
    make_label(text or "x")
    for s, e in split_sentences(text):
        assert 0 <= s <= e <= len(text)
    out = safe(text)
    assert "\x1b" not in out and "\x07" not in out


def test_huge_lines_and_empty_files(tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "huge.txt").write_text("word " * 400_000, encoding="utf-8")  # one 2 MB paragraph
    (tmp_path / "good.txt").write_text(GOOD, encoding="utf-8")
    corpus = read_corpus([tmp_path])
    assert len(corpus.documents) == 2 and corpus.problems == []


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300))
def test_random_questions_get_an_answer_or_a_usage_error(seed_settings, question):
    try:
        ans = rag.answer(question, settings=seed_settings)
    except UsageError:
        from rag.text import normalize_question

        assert not normalize_question(question)  # blank, or only control and format characters
        return
    assert ans.refused or ans.citations
    assert ans.refused == ans.text.startswith(rag.REFUSAL)


@pytest.mark.parametrize("question", ["x" * 100_000, "\x00\x1b[31mred\x07 " * 1000, "?" * 5000, "数" * 20_000])
def test_extreme_questions(seed_settings, question):
    ans = rag.answer(question, settings=seed_settings)
    assert ans.mode == "offline" and (ans.refused or ans.citations)
    assert len(ans.question) <= 4000
