"""Chinese questions reach BM25 through a dictionary translation (rag.index.translate)."""
from rag.index import translate
from rag.index.lexical import index_texts


def test_chinese_content_words_become_their_english_glosses():
    q = translate.english_query("哪篇论文提出了用决策树求解的方法？")
    assert "decision tree" in q
    # Framing words ("which paper", "propose", "method") are not glossed.
    assert "thesis" not in q and "propose" not in q


def test_latin_names_are_kept_and_an_english_question_is_not_chinese():
    assert translate.english_query("BraVE 使用什么方法？").split()[0] == "BraVE"
    assert translate.is_chinese("哪篇论文研究触觉？")
    assert not translate.is_chinese("Which paper studies touch (触觉)?")


def test_segmentation_prefers_the_longest_dictionary_word():
    words = translate.dictionary()
    assert translate.segment("神经网络", words) == ["神经网络"]


def test_bm25_finds_the_english_abstract_for_a_chinese_question():
    lexical = index_texts(["a", "b"], ["We study tactile sensing for dexterous robot hands.",
                                       "We prove regret bounds for linear bandits."])
    assert lexical.search("哪篇论文研究机器人的触觉？", 2) == []  # the raw question matches nothing
    hits = lexical.search(translate.english_query("哪篇论文研究机器人的触觉？"), 2)
    assert hits and hits[0][0] == "a"


def test_one_definition_of_mostly_chinese_for_retrieval_answering_and_the_eval():
    from rag.answering.support import crosses_languages
    from rag.text import mostly_cjk

    for text, chinese in [("DynamicRAG 中的重排序器是用什么方法优化的？", True), ("RoTO 是什么？", True),
                          ("What does RoTO measure?", False), ("The term 触觉 means touch in this paper.", False)]:
        assert mostly_cjk(text) is chinese
        assert translate.is_chinese(text) is chinese
        assert crosses_languages(text, "An English abstract.") is chinese
