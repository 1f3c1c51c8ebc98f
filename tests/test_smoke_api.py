"""The public API answers a seed question with a citation to the right abstract."""
import rag


def test_answer_cites_the_gold_abstract(seed_settings):
    ans = rag.answer("Which method uses tree-structured action traversal?", settings=seed_settings)
    assert not ans.refused
    assert ans.mode == "offline"
    assert ans.citations and ans.citations[0].label == "BraVE"
    assert "[1]" in ans.text
