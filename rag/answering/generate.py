"""Answer with an LLM: prompt with numbered sources, check the citations, repair once.

The transport (retries, errors, redaction) is `rag.llm`; this module decides what is asked
and whether the reply is a valid, cited answer.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from rag.answering.check import CitationCheck, check_citations
from rag.answering.prompt import Prompts, build_messages, build_repair
from rag.answering.refusal import REFUSAL
from rag.config import Settings
from rag.llm import CUT_SHORT, ChatClient, Completion, TokenSink
from rag.types import Hit


@dataclass
class LLMResult:
    """What the model said, validated: the pieces `answer()` turns into an `Answer`."""

    text: str
    raw_text: str
    cited: list[int]  # 0-based hit indices
    refused: bool
    model: str | None
    warnings: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    repair: dict[str, Any] | None = None  # why a repair call was made, and the first reply


def answer_hash(settings: Settings, prompts: Prompts) -> str:
    """Hash of the retrieval and model settings plus the prompt texts."""
    spec = {"settings": settings.hash(), "prompts": prompts.digest(), "model": settings.llm_model}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _add_usage(total: dict[str, int], more: dict[str, int]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0) + value


def generate(
    question: str,
    hits: list[Hit],
    *,
    client: ChatClient,
    prompts: Prompts,
    on_token: TokenSink | None = None,
) -> LLMResult:
    """Ask the model about `hits`, enforce citations, and make one repair call if they fail.

    Only the first call is streamed to `on_token`; the repair reply replaces it afterwards.
    """
    if not hits:
        return LLMResult(
            text=REFUSAL, raw_text="", cited=[], refused=True, model=client.model,
            warnings=["no sources were retrieved, so the LLM was not asked"],
        )
    k = len(hits)
    messages = build_messages(question, hits, prompts)
    first: Completion = client.chat(messages, on_token=on_token)
    usage: dict[str, int] = {}
    _add_usage(usage, first.usage)
    timings = {"llm": round(first.latency_ms, 2)}
    check: CitationCheck = check_citations(first.text, k)
    final, final_check, repair = first, check, None

    if not check.ok and not check.refused:
        problems = check.problems()
        follow_up = messages + [
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": build_repair(problems, k, prompts)},
        ]
        final = client.chat(follow_up)
        _add_usage(usage, final.usage)
        timings["llm_repair"] = round(final.latency_ms, 2)
        final_check = check_citations(final.text, k)
        repair = {"problems": problems, "raw_text": first.text, "fixed": final_check.ok}

    warnings = [f"citation check: {p}" for p in final_check.problems()]
    if final.finish_reason in CUT_SHORT:
        warnings.append(f"the answer is incomplete: the provider cut the reply short "
                        f"(finish reason {final.finish_reason})")
    return LLMResult(
        text=final_check.text,
        raw_text=final.text,
        cited=[] if final_check.refused else [n - 1 for n in final_check.cited],
        refused=final_check.refused,
        model=final.model or first.model or client.model,
        warnings=warnings,
        usage=usage,
        timings_ms=timings,
        repair=repair,
    )
