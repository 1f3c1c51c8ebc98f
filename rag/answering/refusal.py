"""The refusal: its one sentence, how to recognise it, and the policy rules that lead to it.

Prompts, the citation check, the offline answerer and the tests share this sentence.
"""
from __future__ import annotations

import re

from rag.markers import strip_markers

REFUSAL = "I can't answer that from the indexed abstracts."

_QUOTES = "\"'\u201c\u201d\u2018\u2019`*"


def _normal(text: str) -> str:
    text = strip_markers(text).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split()).strip(_QUOTES + " ").rstrip(".").strip(_QUOTES + " ").lower()


def is_refusal(text: str) -> bool:
    """True when the text is the refusal sentence (ignoring quotes, case, markers, final period)."""
    return _normal(text) == _normal(REFUSAL)


# Details abstracts rarely state (people, licences, training set-up, prices). A question asking
# for one needs evidence that mentions it, however well the rest of the question matches: the
# English and Chinese wording of the question, and what the evidence must contain.
_DETAILS = [
    (r"\bwho(?:m|se)?\b|\bauthors?\b|作者|谁", r"\bauthor"),
    (r"\baffiliat|\buniversit|\binstitution|大学|机构", r"\baffiliat|\buniversit|\binstitut"),
    (r"\blicen[cs]e|许可|授权", r"\blicen[cs]"),
    (r"\blearning rates?\b|学习率", r"\blearning rates?\b"),
    (r"\bbatch sizes?\b|批量大小|批大小", r"\bbatch size"),
    (r"\bGPUs?\b|显卡", r"\bGPU"),
    (r"\bepochs?\b|轮数", r"\bepoch"),
    (r"\bhyper-?parameters?\b|超参数", r"\bhyper-?parameter"),
    (r"\bhow many parameters\b|参数量", r"\bparameters\b"),
    (r"\bprice\b|价格|多少钱", r"\bprice|\$\s?\d"),
    (r"\barxiv\b|posted|发布", r"\barxiv|\bposted"),
    (r"\bfund(?:ed|ing)\b|经费|资助", r"\bfund"),
]
_DETAILS_RE = [(re.compile(q, re.I), re.compile(e, re.I)) for q, e in _DETAILS]


def asks_unstated_detail(question: str, evidence: str) -> bool:
    """True when the question asks for a detail abstracts rarely state and the evidence lacks it."""
    return any(q.search(question) and not e.search(evidence) for q, e in _DETAILS_RE)
