"""The answering stage: offline extraction or LLM generation, citations checked, refusals decided."""
from __future__ import annotations

from rag.answering.answer import answer_from, cite, resolve_mode
from rag.answering.refusal import REFUSAL, is_refusal

__all__ = ["answer_from", "cite", "resolve_mode", "REFUSAL", "is_refusal"]
