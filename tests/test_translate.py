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


def test_segmentation_reads_both_ways_and_keeps_the_cut_with_fewer_words():
    words = {w: ["x"] for w in ("最先", "先进", "最", "进", "上", "上进", "进行", "行", "深度学习", "深度", "学习")}
    # Left to right alone gives 最先 + 进 ("very first" + "advance"); the backward cut is kept on a tie.
    assert translate.segment("最先进", words) == ["最", "先进"]
    assert translate.segment("上进行", words) == ["上", "进行"]
    # Fewer words win whichever way they were read.
    assert translate.segment("深度学习", words) == ["深度学习"]
    # A character the dictionary lacks is dropped; runs are cut separately.
    assert translate.segment("深度X学习？最", words) == ["深度", "学习", "最"]


def test_the_technical_glossary_gives_the_fields_sense_first():
    terms = translate.technical_terms()
    assert len(terms) > 300 and all(terms.values())
    # Terms CC-CEDICT lacks or glosses in another sense: the field's wording comes first.
    assert translate.glosses("文生图")[0].startswith("text-to-image")
    assert translate.glosses("脉冲神经网络")[0].startswith("spiking neural network")
    assert translate.dictionary()["脉冲"][:2] == terms["脉冲"] == ["spike", "spiking"]
    # Common words whose first CC-CEDICT senses miss their sense in papers: 比 is not "Belgium" there,
    # 提升 not "to promote (to a higher-ranking position)".
    assert translate.dictionary()["比"][0] == "than" and translate.dictionary()["提升"][0] == "improve"
    assert "Belgium" not in translate.english_query("SoLS 比 GPT-4o 快多少？")
    # Words saying a question asks the same of each paper are no topic ("两者的奖励分别是怎么设计的").
    assert translate.glosses("两者的奖励分别是怎么设计的？") == translate.glosses("奖励是怎么设计的？")
    # Small words inside a hyphenated term are kept ("state-of-the-art" is not "state- - -art").
    assert "state-of-the-art" in translate.english_query("最先进的方法有哪些？")


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
