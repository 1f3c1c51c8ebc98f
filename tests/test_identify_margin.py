"""A paper standing out far from every other retrieved abstract is the one a question describes (session 41).

An English question naming no paper that asks for a number is answered from the first abstract when it stands
out by `identify_margin` (wider than `abstract_margin`, which vouches only for questions asking for no number,
name or paper), by its sentences stating a number; a question asking for a name is not vouched for so, since any
name in a sentence passes for one.
"""
import rag


def test_seed_a_reworded_question_for_a_quantity_is_answered_from_the_paper_it_describes(seed_settings):
    # (before: refused, no single sentence restating the question)
    ans = rag.answer("If forecasts of the random shocks hitting my plant are statistically tied to the shocks, how "
                     "much can they lower my control cost?", settings=seed_settings)
    assert not ans.refused
    assert {c.label for c in ans.citations} == {"Value of stochastic predictions in online optimal control"}
    assert "prediction power" in ans.text
    off = seed_settings.model_copy(update={"offline": seed_settings.offline.model_copy(update={"identify_margin": None})})
    assert rag.answer("If forecasts of the random shocks hitting my plant are statistically tied to the shocks, how "
                      "much can they lower my control cost?", settings=off).refused


def test_seed_a_name_asked_for_is_not_vouched_for_by_standing_out(seed_settings):
    # the optimal-control Transformers abstract names no point cloud dataset, though it names nanoGPT
    ans = rag.answer("Which point cloud dataset does the optimal-control study of Transformers report results on?",
                     settings=seed_settings)
    assert ans.refused
