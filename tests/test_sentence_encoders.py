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
# name -> (module, engine, the engine computing exactly what sentence-transformers computes)
ENGINES = {"minilm": (minilm_onnx, minilm_onnx.MiniLMOnnx, minilm_onnx.MiniLMOnnx),
           "mpnet": (mpnet_onnx, mpnet_onnx.MPNetOnnx, lambda: mpnet_onnx.MPNetOnnx(int8=False))}


@pytest.fixture(scope="module", params=sorted(ENGINES))
def encoder(request):
    module, engine, _ = ENGINES[request.param]
    return request.param, module, engine()


def _reference(name: str, module) -> tuple[list[str], np.ndarray]:
    ref = json.loads((FIXTURES / f"{name}_reference.json").read_text(encoding="utf-8"))
    assert ref["max_seq_length"] == module.MAX_TOKENS
    return ref["texts"], np.asarray(ref["vectors"], dtype=np.float32)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_float32_vectors_match_sentence_transformers(name):
    module, _, exact = ENGINES[name]
    texts, want = _reference(name, module)
    cosines = (exact().embed(texts) * want).sum(1)
    assert cosines.min() > 0.9999, list(zip(texts, cosines))


def test_the_int8_mpnet_stays_close_to_the_model():
    # Ingest embeds chunks with mpnet's int8 matrix products: its vectors may differ from the
    # model's a little (measured min cosine 0.990 over 40 abstracts of the 10k corpus with 7-bit
    # weights, on a CPU with AVX2 and no VNNI, where 8-bit weights gave 0.05), never a lot; it names
    # itself apart, so the cache never mixes its vectors with float32 ones. Questions use float32.
    texts, want = _reference("mpnet", mpnet_onnx)
    model = mpnet_onnx.MPNetOnnx()
    cosines = (model.embed(texts) * want).sum(1)
    assert cosines.min() > 0.98, list(zip(texts, cosines))
    assert cosines.mean() < 0.99999  # it is the int8 graph, not the float32 one
    assert model.name != mpnet_onnx.MPNetOnnx(int8=False).name


def test_ingest_embeds_mpnet_chunks_in_int8_and_questions_in_float32():
    from rag.index.ensemble import PARAPHRASE_ENGINE, paraphrase_model

    assert paraphrase_model(bulk=True).name == PARAPHRASE_ENGINE == mpnet_onnx.ENGINE_NAME
    assert paraphrase_model().name == mpnet_onnx.FLOAT32_NAME


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
