"""Keep llama-index from reaching the network: call before importing it.

llama-index uses its bundled tiktoken and NLTK caches only while TIKTOKEN_CACHE_DIR and
NLTK_DATA are unset; a user's environment pointing elsewhere would make it download.
"""
from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

_DONE = False


def offline_llama_index() -> None:
    """Point llama-index at its bundled caches and off OpenAI defaults (idempotent)."""
    global _DONE
    if _DONE:
        return
    spec = find_spec("llama_index.core")
    if spec and spec.origin:
        static = Path(spec.origin).parent / "_static"
        os.environ["NLTK_DATA"] = str(static / "nltk_cache")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(static / "tiktoken_cache")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from llama_index.core import MockEmbedding
    from llama_index.core import Settings as LlamaSettings
    from llama_index.core.llms import MockLLM

    # Never let llama-index fall back to OpenAI for a component we did not choose:
    # we embed and answer ourselves, so its global defaults are explicit mocks.
    LlamaSettings.llm = MockLLM()
    LlamaSettings.embed_model = MockEmbedding(embed_dim=1)
    _DONE = True
