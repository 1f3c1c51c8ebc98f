"""Parsing, cleaning, de-duplication and labels."""
import json
from pathlib import Path

import pytest

from rag.clean import clean
from rag.corpus import doc_id, first_author, is_header, read_corpus
from rag.errors import UsageError
from rag.labels import make_label

from conftest import SEED_DATA

ABSTRACT = (
    "We propose \\textbf{Bra}nch \\textbf{V}alue \\textbf{E}stimation (BraVE), a value-based method that "
    "uses tree-structured action traversal. BraVE outperforms prior methods by up to $20\\times$."
)


def test_seed_corpus_has_35_unique_documents_and_remembers_both_files():
    corpus = read_corpus([SEED_DATA])
    assert len(corpus.documents) == 35
    assert corpus.problems == []
    shared = [d for d in corpus.documents if len(d.sources) == 2]
    assert len(shared) == 1
    assert {Path(s).name for s in shared[0].sources} == {p.name for p in SEED_DATA.glob("*.txt")}


def test_headers_are_not_abstracts():
    assert is_header("NeurIPS 2025 Papers")
    assert is_header("NeurIPS 2025 论文列表")
    assert not is_header(ABSTRACT)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("\\textbf{Bra}nch \\textbf{V}alue", "Branch Value"),
        ("$O(\\epsilon^{-3})$ samples", "O(epsilon^-3) samples"),
        ("a 5\\% gain", "a 5% gain"),
        ("up to $20\\times$ faster", "up to 20x faster"),
        ("**T2I-R1** and ***REO-RL***", "T2I-R1 and REO-RL"),
        ("\u201cquoted\u201d it\u2019s transition\u2013kernel", '"quoted" it\'s transition-kernel'),
        ("keeps a*b*c and snake_case", "keeps a*b*c and snake_case"),
    ],
)
def test_clean_removes_markup_but_keeps_words(raw, expected):
    assert clean(raw) == expected


def test_original_text_is_kept_for_display(tmp_path):
    (tmp_path / "a.txt").write_text("Header line\n\n" + ABSTRACT + "\n", encoding="utf-8")
    (doc,) = read_corpus([tmp_path]).documents
    assert "\\textbf{Bra}nch" in doc.text


def test_doc_id_is_a_stable_content_hash():
    assert doc_id(ABSTRACT) == doc_id("  " + ABSTRACT.replace(" ", "\n", 3) + "\n")
    assert doc_id(ABSTRACT) != doc_id(ABSTRACT + " More.")
    assert len(doc_id(ABSTRACT)) == 16


@pytest.mark.parametrize(
    "needle, label",
    [("tree-structured action traversal", "BraVE"), ("(OMiSO)", "OMiSO"), ("we propose RoboRefer", "RoboRefer")],
)
def test_labels_name_the_introduced_method(needle, label):
    text = next(d.text for d in read_corpus([SEED_DATA]).documents if needle in d.text)
    assert make_label(text) == label


def test_label_falls_back_to_first_words_and_prefers_titles():
    text = "Stochastic predictions are everywhere in control. They help. Nobody knows why, in general."
    assert make_label(text) == "Stochastic predictions are everywhere in control…"
    assert make_label(text, title="Stochastic predictions") == "Stochastic predictions"


def test_jsonl_json_csv_with_metadata(tmp_path):
    rec = {"abstract": ABSTRACT, "title": "BraVE paper", "authors": ["A. B", "C. D"], "url": "http://x", "year": 2025, "id": "p1"}
    (tmp_path / "a.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps([{"text": "Another abstract " * 5}]), encoding="utf-8")
    (tmp_path / "c.csv").write_text("title,abstract\nT3,\"Third abstract about graphs, trees and more words.\"\n", encoding="utf-8")
    corpus = read_corpus([tmp_path])
    by_title = {d.title: d for d in corpus.documents}
    assert set(by_title) == {"BraVE paper", None, "T3"}
    brave = by_title["BraVE paper"]
    assert (brave.label, brave.authors, brave.year, brave.external_id) == ("BraVE paper", "A. B, C. D", "2025", "p1")
    assert corpus.problems == []


def test_bad_files_and_lines_are_reported_and_good_ones_still_read(tmp_path):
    good = {"abstract": ABSTRACT}
    (tmp_path / "mixed.jsonl").write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"title": "x"}) + "\n", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02 binary")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 abstract text".encode("latin-1"))
    (tmp_path / "notes.md").write_text("ignored", encoding="utf-8")
    corpus = read_corpus([tmp_path])
    assert len(corpus.documents) == 1
    problems = {(Path(p.path).name, p.line): p.reason for p in corpus.problems}
    assert "malformed JSON" in problems[("mixed.jsonl", 2)]
    assert "no `abstract`" in problems[("mixed.jsonl", 3)]
    assert "binary" in problems[("binary.txt", None)]
    assert "UTF-8" in problems[("latin1.txt", None)]
    assert ("notes.md", None) not in problems  # unsupported files inside a folder are not scanned


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_corpus([tmp_path / "nope"])


BODY = ("We introduce a benchmark for robot cooking with 120 recipes and a simulator in which robots must chop, "
        "stir and plate dishes while keeping the kitchen safe.")


@pytest.mark.parametrize(
    "head, meta",
    [
        ("Title: Robot Cooking at Scale", {"title": "Robot Cooking at Scale"}),
        ("# Robot Cooking at Scale", {"title": "Robot Cooking at Scale"}),
        ("## Robot Cooking at Scale ##\nAuthors: Maria Rossi, Tom Lee\nYear: 2023\nVenue: CoRL\nURL: http://x.org/1",
         {"title": "Robot Cooking at Scale", "authors": "Maria Rossi, Tom Lee", "year": "2023", "venue": "CoRL",
          "url": "http://x.org/1"}),
        ("TITLE:  Robot   Cooking\nauthor: M. Rossi\nAbstract:", {"title": "Robot Cooking", "authors": "M. Rossi"}),
    ],
)
def test_txt_paragraph_may_open_with_a_title_and_metadata(tmp_path, head, meta):
    (tmp_path / "a.txt").write_text("Papers\n\n" + head + "\n" + BODY + "\n", encoding="utf-8")
    (doc,) = read_corpus([tmp_path]).documents
    assert doc.text == BODY and doc.id == doc_id(BODY)  # adding a title keeps the document id
    assert {k: getattr(doc, k) for k in meta} == meta
    assert doc.label == meta["title"]


def test_a_file_title_naming_a_venue_and_year_dates_its_abstracts(tmp_path):
    (tmp_path / "a.txt").write_text("ICLR 2024 accepted papers\n\n" + BODY + "\n\n# Own\nVenue: CoRL\nYear: 2023\n"
                                    + ABSTRACT + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Reading list 2024\n\n" + BODY.replace("120", "90") + "\n", encoding="utf-8")
    docs = [(d.venue, d.year) for d in read_corpus([tmp_path]).documents]
    assert sorted(docs, key=str) == sorted([("ICLR", "2024"), ("CoRL", "2023"), (None, None)], key=str)
    # The seed files' titles ("NeurIPS 2025 Papers", "NeurIPS 2025 论文列表") date the 35 seed abstracts.
    assert {(d.venue, d.year) for d in read_corpus([SEED_DATA]).documents} == {("NeurIPS", "2025")}


def test_metadata_lines_only_count_after_a_title(tmp_path):
    para = "Year: 2025 was a good one for robots. " + BODY
    (tmp_path / "a.txt").write_text(para + "\n\n# Only a heading\n", encoding="utf-8")
    (doc,) = read_corpus([tmp_path]).documents
    assert doc.text == para and doc.year is None and doc.title is None


@pytest.mark.parametrize(
    "record, expected",
    [
        ({"authors": ["A. Smith", {"name": "B. Müller"}, " "], "year": 2025.0},
         {"authors": "A. Smith, B. Müller", "year": "2025"}),
        ({"authors": "A.  Smith and B. Jones", "year": "2025-06-01", "venue": " NeurIPS  2025 "},
         {"authors": "A. Smith and B. Jones", "year": "2025", "venue": "NeurIPS 2025"}),
        ({"authors": [], "year": "", "venue": None}, {"authors": None, "year": None, "venue": None}),
    ],
)
def test_record_metadata_is_normalised(tmp_path, record, expected):
    (tmp_path / "a.jsonl").write_text(json.dumps({"abstract": BODY, **record}) + "\n", encoding="utf-8")
    (doc,) = read_corpus([tmp_path]).documents
    assert {k: getattr(doc, k) for k in expected} == expected


def test_csv_metadata_columns(tmp_path):
    (tmp_path / "a.csv").write_text(
        "Title,Authors,Year,Venue,URL,Abstract\n"
        f"Robot Cooking,\"Rossi, M.; Lee, T.\",2023,CoRL,http://x,\"{BODY}\"\n", encoding="utf-8")
    (doc,) = read_corpus([tmp_path]).documents
    assert (doc.title, doc.authors, doc.year, doc.venue, doc.url) == (
        "Robot Cooking", "Rossi, M.; Lee, T.", "2023", "CoRL", "http://x")


@pytest.mark.parametrize(
    "authors, first",
    [("A. Smith, B. Jones", "A. Smith"), ("Rossi, M.; Lee, T.", "Rossi, M."), ("A. Smith and B. Jones", "A. Smith"),
     ("Solo Author", "Solo Author"), ("", None), (None, None)],
)
def test_first_author(authors, first):
    assert first_author(authors) == first
