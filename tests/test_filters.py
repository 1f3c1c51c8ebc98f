"""Metadata filters (year, venue, author) in both retrievers, the API, and the refresh on re-ingest."""
import json
import shutil
from pathlib import Path

import pytest

import rag
from rag.config import Settings
from rag.errors import UsageError
from rag.index import Index
from rag.index.catalog import Catalog, load
from rag.index.filters import Where, scope_in_question
from rag.index.records import StoredDocument
from rag.index.sync import plan_sync
from rag.types import Document

from conftest import seed_paragraphs

# Six seed abstracts with made-up metadata: venues written three ways, authors with accents.
PAPERS = {
    "tree-structured action traversal": {"year": 2023, "venue": "ICML 2023", "authors": ["Ana Müller", "Bo Chen"]},
    "we propose RoboRefer": {"year": "2024", "venue": "NeurIPS 2024", "authors": "Carla Smith, Dan Wu"},
    "We propose SPOT": {"year": 2025, "venue": "NeurIPS", "authors": ["Eve Goldsmith"]},
    "(DISCO) guidance": {"year": 2025, "venue": "neurips 2025", "authors": ["Fay Ito", "Gus Lee"]},
    "Robot Tactile Olympiad": {"year": 2025, "venue": "ICLR", "authors": ["Hal Jones"]},
    "Value-Guided Decision Transformer": {"year": 2024, "venue": "ICML", "authors": ["Ivy Park", "Jo Smith"]},
}
NAMES = {"tree-structured action traversal": "BraVE", "we propose RoboRefer": "RoboRefer", "We propose SPOT": "SPOT",
         "(DISCO) guidance": "DISCO", "Robot Tactile Olympiad": "RoTO", "Value-Guided Decision Transformer": "VDT"}


def _records(changes=None):
    paras = seed_paragraphs()
    out = []
    for needle, meta in PAPERS.items():
        (text,) = [p for p in paras if needle in p]
        out.append({"abstract": text, **meta, **(changes or {}).get(needle, {})})
    return "\n".join(json.dumps(r) for r in out) + "\n"


@pytest.fixture(scope="module")
def meta_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("meta")
    (root / "data").mkdir()
    (root / "data" / "papers.jsonl").write_text(_records(), encoding="utf-8")
    settings = Settings(data_dir=str(root / "data"), index_dir=str(root / "index"))
    Index.create(settings).ingest()
    return settings


@pytest.fixture
def index(meta_index):
    return Index.open(meta_index)


def _labels(hits):
    return {h.label for h in hits}


# -- parsing ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, expected",
    [
        ({"year": 2025}, Where(year=2025)),
        ({"year": "2025", "venue": "NeurIPS", "author": "Smith"}, Where(2025, "NeurIPS", "Smith")),
        (["year=2025", "author=Smith"], Where(year=2025, author="Smith")),
        ("year=2025 venue=Neural Information Processing Systems", Where(2025, "Neural Information Processing Systems")),
        ("author = 'van der Berg', Year=2024", Where(year=2024, author="van der Berg")),
        ({"authors": "smith"}, Where(author="smith")),
        (None, None),
        ({}, None),
        ([], None),
    ],
)
def test_where_parses_mappings_and_field_value_strings(value, expected):
    assert Where.parse(value) == expected


@pytest.mark.parametrize(
    "value, message",
    [
        ("year", "FIELD=VALUE"),
        ("=2025", "FIELD=VALUE"),
        ("year=", "FIELD=VALUE"),
        ("title=Foo", "unknown filter field 'title'"),
        ("year=25", "four digits"),
        ("year=2025 year=2024", "given twice"),
    ],
)
def test_bad_filters_are_usage_errors(value, message):
    with pytest.raises(UsageError, match=message):
        Where.parse(value)


def test_matching_rules():
    assert Where(venue="NeurIPS").matches(year=None, venue="NeurIPS 2025", authors=None)
    assert Where(venue="neurips  2024").matches(year=None, venue="NeurIPS", authors=None)  # the year is not the venue
    assert not Where(venue="ICML").matches(year=None, venue="ICML Workshop", authors=None)
    assert Where(author="muller").matches(year=None, venue=None, authors="Ana Müller, Bo Chen")
    assert Where(author="SMITH").matches(year=None, venue=None, authors="Eve Goldsmith")  # a substring
    assert not Where(author="smith").matches(year=None, venue=None, authors=None)
    assert Where(year=2025).matches(year="2025", venue=None, authors=None)
    assert not Where(year=2025, author="x").matches(year="2025", venue=None, authors="Smith")  # AND


def test_chroma_where_matches_numeric_and_legacy_string_years():
    assert Where(year=2025).chroma_where() == {"$or": [{"year": 2025}, {"year": "2025"}]}
    assert Where(year=2025, venue="NeurIPS 2025").chroma_where() == {
        "$and": [{"$or": [{"year": 2025}, {"year": "2025"}]}, {"venue_key": "neurips"}]}
    assert Where(author="smith").chroma_where() is None  # a substring is tested outside Chroma


# -- both retrievers ------------------------------------------------------------------------------------
def test_year_filter_applies_to_dense_and_lexical_hits(index):
    res = index.retrieve("decision tree policies", k=5, where={"year": 2025})
    assert _labels(res.hits) == {"SPOT", "DISCO", "RoTO"}  # all three 2025 papers, and only they
    assert all(h.year == "2025" for h in res.hits)
    assert any(h.lexical_score is not None for h in res.hits)  # BM25 took part, filtered


def test_a_document_bm25_ranks_first_is_dropped_when_filtered_out(index):
    assert index.retrieve("BraVE branch value estimation", k=1).hits[0].label == "BraVE"
    hits = index.retrieve("BraVE branch value estimation", k=5, where="year=2025").hits
    assert "BraVE" not in _labels(hits) and all(h.year == "2025" for h in hits)


@pytest.mark.parametrize(
    "where, labels",
    [
        ({"venue": "NeurIPS"}, {"RoboRefer", "SPOT", "DISCO"}),
        ({"venue": "icml"}, {"BraVE", "VDT"}),
        ({"author": "smith"}, {"RoboRefer", "SPOT", "VDT"}),
        ({"author": "MÜLLER"}, {"BraVE"}),
        ({"author": "muller"}, {"BraVE"}),
        ({"year": 2024, "author": "smith"}, {"RoboRefer", "VDT"}),
    ],
)
def test_venue_and_author_filters(index, where, labels):
    hits = index.retrieve("a method for robots and control", k=5, where=where).hits
    assert _labels(hits) == labels


def test_an_irrelevant_paper_is_still_found_when_it_is_the_only_match(index):
    hits = index.retrieve("tactile sensing for robot manipulation", k=3, where={"author": "chen"}).hits
    assert _labels(hits) == {"BraVE"} and hits[0].dense_score is not None


def test_a_filter_nothing_matches_is_a_clear_usage_error(index):
    with pytest.raises(UsageError, match="no indexed abstract matches year=1999 author=Nobody"):
        index.retrieve("anything", where={"author": "Nobody", "year": 1999})


def test_python_api_takes_where(meta_index):
    hits = rag.retrieve("decision trees", k=5, settings=meta_index, where={"author": "goldsmith"})
    assert _labels(hits) == {"SPOT"}
    ans = rag.answer("How does SPOT compute decision tree policies?", settings=meta_index, where="venue=NeurIPS")
    assert {h.label for h in ans.sources} <= {"RoboRefer", "SPOT", "DISCO"}
    cite = ans.citations[0]
    assert (cite.label, cite.authors, cite.year, cite.venue) == ("SPOT", "Eve Goldsmith", "2025", "NeurIPS")
    assert cite.dense_score is not None
    with pytest.raises(UsageError):
        rag.answer("x", settings=meta_index, where="nonsense")


def test_years_are_stored_as_numbers_and_legacy_strings_still_match(index):
    got = index.store.collection.get(where={"doc_id": index.retrieve("SPOT decision tree", k=1).hits[0].doc_id},
                                     include=["metadatas"])
    meta = got["metadatas"][0]
    assert meta["year"] == 2025 and meta["venue_key"] == "neurips" and meta["authors_key"] == "eve goldsmith"
    from rag.index.embedders import get_embedder

    vec = get_embedder(index.settings).embed_query("decision tree policies")
    dense = index.store.query(vec, 10, where=Where(year=2025))
    assert {c.label for c, _ in dense} == {"SPOT", "DISCO", "RoTO"}


# -- the catalog and the refresh on re-ingest ------------------------------------------------------------
def test_catalog_is_saved_with_bm25_and_ignored_when_stale(index):
    cat = index.catalog()
    assert len(cat.ids) == index.store.count()
    assert load(index.paths.catalog, cat.version) is not None
    assert load(index.paths.catalog, (cat.version or 0) + 1) is None
    assert Catalog(1, ["a:0", "b:0"], [2025, None], ["neurips", ""], ["a smith", ""]).matching(
        Where(year=2025)) == frozenset({"a:0"})


def test_plan_refreshes_metadata_and_records_stored_before_filters():
    doc = Document(id="d", text="t", label="L", sources=["/x.txt"], year="2025", venue="NeurIPS", authors="A")
    same = StoredDocument(id="d", label="L", title=None, sources=["/x.txt"], chunk_ids=["d:0"], n_chunks=1,
                          year="2025", venue="NeurIPS", authors="A")
    plan = plan_sync([doc], {"d": same}, roots=[Path("/")], exists=lambda s: True)
    assert plan.changes == {} and plan.unchanged == 1
    old = StoredDocument(**{**same.__dict__, "keys_current": False})
    plan = plan_sync([doc], {"d": old}, roots=[Path("/")], exists=lambda s: True)
    assert plan.changes["d"].meta == {"authors": "A", "url": None, "year": "2025", "venue": "NeurIPS",
                                      "external_id": None}
    moved = StoredDocument(**{**same.__dict__, "year": "2024", "title": "Old title", "label": "Old title"})
    change = plan_sync([doc], {"d": moved}, roots=[Path("/")], exists=lambda s: True).changes["d"]
    assert (change.label, change.title, change.meta) == ("L", None, {"year": "2025"})


def test_changed_metadata_and_titles_refresh_in_place(meta_index, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(Path(meta_index.index_dir), root / "index")
    shutil.copytree(Path(meta_index.data_dir), root / "data")
    settings = Settings(data_dir=str(root / "data"), index_dir=str(root / "index"))
    index = Index.open(settings)
    index.ingest()  # the copied files are new sources of the same documents
    (root / "data" / "papers.jsonl").write_text(_records({
        "tree-structured action traversal": {"year": 2022, "authors": ["Ana Meyer"]},
        "Value-Guided Decision Transformer": {"title": "Value-Guided Decision Transformers Revisited"},
    }), encoding="utf-8")
    before = index.matching({"year": 2022})  # loads the catalog of the old version
    assert not before
    report = index.ingest()
    assert (report.updated, report.chunks_embedded, report.added) == (2, 0, 0)
    assert _labels(index.retrieve("branch value", k=5, where={"year": 2022}).hits) == {"BraVE"}
    assert not index.matching({"author": "muller"})
    docs = {d.label: d for d in index.documents().values()}
    assert "Value-Guided Decision Transformers Revisited" in docs and "VDT" not in docs
    assert index.retrieve("value-guided decision transformer", k=1).hits[0].title == \
        "Value-Guided Decision Transformers Revisited"


# -- the command line and the chat -------------------------------------------------------------------
def test_cli_where_in_ask_search_and_sources(meta_index, monkeypatch):
    from typer.testing import CliRunner

    from rag.cli import app

    monkeypatch.setenv("RAG_INDEX_DIR", meta_index.index_dir)
    monkeypatch.setenv("RAG_DATA_DIR", meta_index.data_dir)
    runner = CliRunner()
    hits = json.loads(runner.invoke(app, ["search", "robots", "--json", "--where", "author=smith",
                                          "--where", "year=2024"]).stdout)
    assert {h["label"] for h in hits} == {"RoboRefer", "VDT"} and {h["year"] for h in hits} == {"2024"}
    res = runner.invoke(app, ["ask", "How does SPOT compute decision tree policies?", "--where", "venue=neurips"])
    assert res.exit_code == 0 and "[1] SPOT (Eve Goldsmith, NeurIPS 2025) · similarity 0." in res.stdout
    res = runner.invoke(app, ["sources", "--where", "venue=ICML"])
    assert "BraVE — Ana Müller et al., ICML 2023" in res.stdout and res.stderr.strip() == "2 documents"


def test_chat_where_command_filters_every_question_and_clears(meta_index):
    import io

    from rich.console import Console

    from rag.chat import Chat, lines

    seen = []

    def answer_fn(question, **kwargs):
        seen.append(kwargs.get("where"))
        return rag.answer(question, **kwargs)

    out, err = (Console(file=io.StringIO(), width=120, highlight=False) for _ in range(2))
    chat = Chat(meta_index, read=lines(["/where author=smith year=2024", "What does the method do?",
                                        "/where author=nobody", "/where title=x", "Which robots?", "/where",
                                        "What is SPOT?"]),
                console=out, err_console=err, answer_fn=answer_fn, where="venue=ICML")
    assert chat.run() == 0
    text, errors = out.file.getvalue(), err.file.getvalue()
    assert "where venue=ICML" in text.splitlines()[0]  # the greeting names the starting filter
    assert "filter: year=2024 author=smith (2 papers)" in text and "filter cleared" in text
    assert "no indexed abstract matches author=nobody; the filter is unchanged" in errors
    assert "unknown filter field 'title'" in errors
    assert seen == [Where(year=2024, author="smith"), Where(year=2024, author="smith"), None]
    assert chat.last.sources[0].label == "SPOT"


def test_bm25_masks_chunks_outside_the_filter(tmp_path):
    from rag.index import lexical

    lexical.build(["a:0", "b:0", "c:0"], ["graph neural networks", "graph graph graph", "tactile robots"],
                  tmp_path / "lex")
    index = lexical.load(tmp_path / "lex")
    assert [cid for cid, _ in index.search("graph", 1)] == ["b:0"]
    assert [cid for cid, _ in index.search("graph", 1, only=frozenset({"a:0", "c:0"}))] == ["a:0"]
    assert index.search("graph", 5, only=frozenset({"c:0"})) == []  # no admitted chunk has the word


# -- a venue named in the question ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "question, rest, where",
    [
        ("Which NeurIPS 2025 paper proposes a tactile benchmark?", "Which paper proposes a tactile benchmark?",
         Where(2025, "NeurIPS")),
        ("Which paper at NeurIPS uses decision trees?", "Which paper uses decision trees?", Where(venue="NeurIPS")),
        ("Which ICML'24 papers study pruning?", "Which papers study pruning?", Where(2024, "ICML")),
        ("NeurIPS 2025 中哪篇论文提出了触觉基准？", "中哪篇论文提出了触觉基准？", Where(2025, "NeurIPS")),
        # A venue the corpus does not have, or a word written as a plain word, scopes nothing.
        ("Which ICLR 2024 paper uses LoRA?", "Which ICLR 2024 paper uses LoRA?", None),
        ("What is neurips about?", "What is neurips about?", None),
    ],
)
def test_a_venue_of_the_corpus_named_in_a_question_is_a_scope(question, rest, where):
    assert scope_in_question(question, {"neurips", "icml"}) == (rest, where)


def test_retrieval_is_scoped_to_the_venue_a_question_names(index):
    got = index.retrieve("Which NeurIPS 2025 paper computes decision tree policies?", k=5)
    assert got.scope == Where(2025, "NeurIPS") and got.query == "Which paper computes decision tree policies?"
    assert _labels(got.hits) == {"SPOT", "DISCO"}  # the NeurIPS papers of 2025, whatever they are about
    assert _labels(index.retrieve("Which ICML paper computes decision tree policies?", k=5).hits) == {"BraVE", "VDT"}
    # An explicit filter wins over the question's words.
    assert _labels(index.retrieve("Which NeurIPS paper computes decision tree policies?", k=5,
                                  where={"venue": "ICLR"}).hits) == {"RoTO"}


def test_an_answer_scoped_by_the_question_says_so_and_a_year_without_papers_is_refused(meta_index):
    ans = rag.answer("Which NeurIPS 2025 paper computes decision tree policies?", settings=meta_index, mode="offline")
    assert ans.citations and ans.citations[0].label == "SPOT"
    assert ans.warnings == ["searched only the papers of year=2025 venue=NeurIPS, as the question names it"]
    none = rag.answer("Which NeurIPS 2019 paper computes decision tree policies?", settings=meta_index, mode="offline")
    assert none.refused and none.text.endswith("No indexed abstract matches year=2019 venue=NeurIPS.")
