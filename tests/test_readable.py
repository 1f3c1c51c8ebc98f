"""Readable terminal text: LaTeX and Markdown rendered by pylatexenc, markers untouched, never a crash."""
import pytest
from hypothesis import given, settings, strategies as st

from rag.markers import MARKER_TOKEN
from rag.readable import readable, readable_latex
from rag.render import byline, format_answer, format_report, plural, similarity
from rag.types import Answer, Citation, Hit, IngestReport


@pytest.mark.parametrize(
    "raw, shown",
    [
        (r"a sample complexity of $ O(\epsilon^{-3}) $. [1]", "a sample complexity of O(ε^-3). [1]"),
        (r"\textbf{Bra}nch \textbf{V}alue \textbf{E}stimation", "Branch Value Estimation"),
        (r"an average success rate of 74.5\%", "an average success rate of 74.5%"),
        (r"We release the Robot Tactile Olympiad ($\texttt{RoTO}$) benchmark", "We release the Robot Tactile Olympiad (RoTO) benchmark"),
        (r"$\varepsilon$-DPO and a $4\times 4$ block", "ε-DPO and a 4×4 block"),
        (r"steps decay as $ O(k^{-\frac{2}{3}}) $", "steps decay as O(k^-2/3)"),
        (r"$\mathcal{O}(\sqrt{T})$ regret, $\mathbb{R}^d$", "O(√(T)) regret, ℝ^d"),
        ("It works **well** and `fast` [2]", "It works well and fast [2]"),
    ],
)
def test_markup_becomes_readable_text(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize(
    "raw",
    [
        "up to 32% higher ~10x faster, A & B #1, snake_case",  # no LaTeX: left exactly as it is
        "costs $5 and 7% more [1]",  # an unpaired $ is not math
        "[1] [2, 3] [4-6] [1][3]",
    ],
)
def test_plain_text_is_left_alone(raw):
    assert readable(raw) == raw


def test_latex_specials_inside_converted_pieces_survive():
    assert readable(r"up to $32$% higher on ~half") == "up to 32% higher on ~half"
    assert readable(r"\textbf{A} & B with 5% [1]") == "A & B with 5% [1]"


def test_citation_markers_are_never_eaten():
    assert readable(r"\cite[1]{x} and \textbf{X}[2]. Next \emph{y} [3, 4]") == "<cit.>[1]x and X[2]. Next y [3, 4]"
    assert readable("Line one \\textbf{a} [1]\nline two [2]") == "Line one a [1]\nline two [2]"


@pytest.mark.parametrize("raw", [r"\href{http://x}{text} fine", "\\textbf" + "{" * 3000 + "x", "\\", "$$", "\\begin{itemize}"])
def test_converter_failures_fall_back_to_the_original(raw):
    assert isinstance(readable(raw), str)


def test_removing_markup_never_makes_a_citation_marker():
    # Found by the property test below: "\\textbf{]}" rendered as "]" turned "[1" into a marker.
    assert readable("[1\\textbf{]") == "[1\\textbf{]"


def test_markdown_is_kept_for_markdown_renderers():
    assert readable_latex(r"It is **$O(\epsilon^{-3})$** [1]") == "It is **O(ε^-3)** [1]"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("ab $\\{}[]%&~#^_12,-\n") + ["\\textbf{", "\\frac", "[1]", "[2, 3]", "\\epsilon"]),
                max_size=40).map("".join))
def test_never_crashes_and_keeps_every_marker(text):
    out = readable(text)
    assert [m.group(0) for m in MARKER_TOKEN.finditer(out)] == [m.group(0) for m in MARKER_TOKEN.finditer(text)]
    assert out.count("\n") == text.count("\n")


# -- the terminal rendering around it ---------------------------------------------------------------
def test_byline_similarity_and_plurals():
    assert byline("A. Smith, B. Jones", "2025", "NeurIPS") == "A. Smith et al., NeurIPS 2025"
    assert byline("A. Smith", "2025", "NeurIPS 2025") == "A. Smith, NeurIPS 2025"
    assert byline(None, "2024", None) == "2024" and byline(None, None, None) == ""
    assert similarity(0.8567) == "similarity 0.86" and similarity(None) == "keyword match"
    assert (plural(1, "chunk"), plural(2, "chunk"), plural(0, "document")) == ("1 chunk", "2 chunks", "0 documents")
    report = format_report(IngestReport(documents=1, added=1, chunks_embedded=1))
    assert "Indexed 1 document:" in report and "1 chunk embedded" in report


def test_answer_shows_readable_text_byline_and_similarity_not_the_fusion_score():
    body = r"We reach $O(\epsilon^{-3})$ samples with \textbf{Bra}nch."
    hit = Hit(doc_id="d", title="T", text=body, score=0.0245, label="BraVE", dense_score=0.871,
              authors="A. Smith, B. Jones", year="2025", venue="NeurIPS")
    ans = Answer(question="q", text=body + " [1]", citations=[Citation.from_hit(1, hit)], refused=False,
                 mode="offline", sources=[hit])
    shown = format_answer(ans)
    assert "We reach O(ε^-3) samples with Branch. [1]" in shown
    assert "[1] BraVE (A. Smith et al., NeurIPS 2025) · similarity 0.87 — We reach O(ε^-3)" in shown
    assert "0.024" not in shown and "\\epsilon" not in shown
    assert ans.to_dict()["answer"] == body + " [1]"  # JSON keeps the original
