"""What scripts/minilm_reference.py and scripts/mpnet_reference.py share: the texts a bundled
English encoder is checked on, and how the sentence-transformers vectors are written as the test
fixture. Imports nothing of rag (those scripts run in a torch environment without its dependencies).
"""
import json
from pathlib import Path


def reference_texts(long_tokens: int) -> list[str]:
    """The texts: a question, a sentence, edge cases, and one of `long_tokens` words, longer than
    the model's window (it must be cut as sentence-transformers cuts it)."""
    return [
        "How can a two-legged machine learn to copy fast martial-arts moves performed by people?",
        "Humanoid robots are promising to acquire various skills by imitating human behaviors.",
        "",
        "x",
        "Mixed: 中文 text with LaTeX $\\alpha$ and an URL https://example.org/a_b.",
        " ".join(["token"] * long_tokens),
    ]


def write_fixture(model, texts: list[str], name: str, generator: str) -> None:
    """Encode `texts` with the sentence-transformers `model` and write tests/fixtures/{name}_reference.json."""
    vectors = model.encode(texts, normalize_embeddings=True)
    out = {"generator": generator, "max_seq_length": model.max_seq_length,
           "texts": texts, "vectors": [[round(float(x), 7) for x in v] for v in vectors]}
    path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / f"{name}_reference.json"
    path.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")
