"""What every bundled English encoder (rag.index.encoder.SentenceEncoder) must do, checked on each.

The reference vectors in tests/fixtures/*_reference.json were computed by sentence-transformers
(torch) from the same weights: scripts/minilm_reference.py and scripts/mpnet_reference.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag.index import minilm_onnx, mpnet_onnx

FIXTURES = Path(__file__).parent / "fixtures"
ENGINES = {"minilm": (minilm_onnx, minilm_onnx.MiniLMOnnx), "mpnet": (mpnet_onnx, mpnet_onnx.MPNetOnnx)}


@pytest.fixture(scope="module", params=sorted(ENGINES))
def encoder(request):
    module, engine = ENGINES[request.param]
    return request.param, module, engine()


def test_vectors_match_sentence_transformers(encoder):
    name, module, model = encoder
    ref = json.loads((FIXTURES / f"{name}_reference.json").read_text(encoding="utf-8"))
    assert ref["max_seq_length"] == module.MAX_TOKENS
    got = model.embed(ref["texts"])
    want = np.asarray(ref["vectors"], dtype=np.float32)
    cosines = (got * want).sum(1)
    assert cosines.min() > 0.9999, list(zip(ref["texts"], cosines))


def test_vectors_are_unit_length_and_in_the_callers_order(encoder):
    _, module, model = encoder
    texts = ["a much longer text about retrieval of abstracts by meaning", "short", "mid length text here"]
    together = model.embed(texts)
    alone = np.stack([model.embed([t])[0] for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose(together, alone, atol=1e-5)
    assert model.embed([]).shape == (0, module.HIDDEN)


def test_long_texts_are_cut_to_the_models_window(encoder):
    _, module, model = encoder
    ids = model.token_ids([" ".join(["word"] * 1000)])[0]
    assert len(ids) == module.MAX_TOKENS
    assert ids[-1] == model.token_ids([""])[0][-1]  # still ends with the closing token ([SEP], </s>)


def test_a_string_is_not_a_list(encoder):
    with pytest.raises(TypeError):
        encoder[2].embed("one text")
