"""The ML glossary's wider vocabulary (session 44): linear algebra, optimisation, training, robotics and speech
terms a Chinese question writes now reach English through the field's wording, and a field term the retrieved
abstracts lack marks a topic the corpus does not hold (`rag.answering.field_terms.missing_field_terms`).
A Chinese question's words are checked one at a time, through all their senses, and a field term no retrieved
abstract writes weighs more against its answer than in English (`missing_term_factor_zh`): it is the only word
of the question checked word by word.

The glossary was extended from knowledge of the field by a helper that saw only the glossary, not the
questions. The seed tests ask the seed index about topics none of its 35 abstracts covers; each question was
answered from unrelated papers before the extension (checked against a snapshot of the code before it).
"""
import pytest

import rag
from rag.answering.field_terms import missing_field_terms


@pytest.mark.parametrize("question", [
    "哪篇论文研究语音识别的低延迟流式解码？",  # speech recognition
    "有没有论文用主成分分析给特征降维？",  # principal component analysis
])
def test_a_chinese_question_on_a_technique_no_abstract_mentions_is_refused(seed_settings, question):
    answer = rag.answer(question, settings=seed_settings)
    assert answer.refused, answer.text


def test_a_term_with_a_lone_letter_is_not_read_into_another_phrase():
    # "deep Q-network" loses its Q to the tokenizer; "leave a deep network early" does not use the term.
    question = "Which paper decides when an input may leave a deep network early?"
    texts = ["Early-exit networks let an input leave at an intermediate layer."]
    assert "deep Q-network" not in missing_field_terms(question, texts)
    # a term whose words all survive is still checked
    assert missing_field_terms("How does gradient checkpointing save memory?", texts) == ["gradient checkpointing"]


def test_a_chinese_word_is_missing_only_when_no_text_writes_any_of_its_senses():
    texts = ["We achieve superhuman dexterity in contact-rich in-hand manipulation with a large language model."]
    assert missing_field_terms("有没有论文用图神经网络做推荐系统？", texts) == ["graph neural network"]
    # a translation gives one wording: "dexterity ... manipulation" writes 灵巧操作's sense's words
    assert missing_field_terms("哪篇论文研究灵巧操作？", texts) == []
    # 大模型 has a sense naming no topic ("large model"), so no abstract need write "foundation model"
    assert missing_field_terms("哪篇论文研究大模型？", ["We study video understanding."]) == []


@pytest.mark.parametrize("question", [
    "有没有论文用图神经网络做推荐系统？",  # graph neural network
    "联邦学习中如何在客户端之间分配差分隐私预算？",  # federated learning, differential privacy
])
def test_a_chinese_question_built_on_a_field_term_no_abstract_writes_is_refused(seed_settings, question):
    answer = rag.answer(question, settings=seed_settings)
    assert answer.refused, answer.text
