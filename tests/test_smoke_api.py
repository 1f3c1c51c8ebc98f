"""The public API answers a seed question with a citation to the right abstract."""
import rag


def test_answer_cites_the_gold_abstract(seed_settings):
    ans = rag.answer("Which method uses tree-structured action traversal?", settings=seed_settings)
    assert not ans.refused
    assert ans.mode == "offline"
    assert ans.citations and ans.citations[0].label == "BraVE"
    assert "[1]" in ans.text


def test_a_question_asking_which_papers_reads_more_abstracts_offline(seed_settings):
    # Among thousands of abstracts the papers asked for often rank just below the first k.
    k, wide = seed_settings.k, seed_settings.offline.several_papers_hits
    assert wide > k
    ans = rag.answer("Which papers use reinforcement learning for robots?", settings=seed_settings)
    assert len(ans.sources) == wide
    # A question naming its paper, or asking for one paper, keeps k.
    assert len(rag.answer("Which robot is used in the RoTO benchmark?", settings=seed_settings).sources) == k
    assert len(rag.answer("Which paper uses tree-structured action traversal?", settings=seed_settings).sources) == k
    narrow = seed_settings.with_overrides(offline={"several_papers_hits": 0})
    assert len(rag.answer("Which papers use reinforcement learning for robots?", settings=narrow).sources) == k
