"""A minimal ONNX protobuf writer: enough ModelProto to hand ONNX Runtime a graph built in code.

The bundled encoders (`rag.index.e5_onnx`, `rag.index.minilm_onnx`, `rag.index.mpnet_onnx`) build
their graphs with it, which avoids depending on the `onnx` package for a few hundred bytes of wire
format, batch their inputs the same way (`equal_length_runs`) and run them in the same kind of
session (`cpu_session`).
"""
from __future__ import annotations

import json
import mmap
import os
import struct
from pathlib import Path
from typing import Iterator

import numpy as np

# Largest magnitude of an int8 weight (7 bits: see `Graph.int8_linear`).
INT8_WEIGHT_MAX = 63.0


def equal_length_runs(lengths: np.ndarray, batch_tokens: int) -> Iterator[np.ndarray]:
    """Item indices in runs of one exact length, longest first, at most `batch_tokens` tokens a run
    (one item at least): the graphs take no padding mask, so one run holds texts of one length."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    i = 0
    while i < len(order):
        n = int(lengths[order[i]])
        cap = max(1, batch_tokens // max(n, 1))
        j = i + 1
        while j < len(order) and j - i < cap and lengths[order[j]] == n:
            j += 1
        yield order[i:j]
        i = j


def read_safetensors(path: Path, shapes: dict[str, tuple[int, ...]], *, model: str,
                     error: type[Exception]) -> dict[str, np.ndarray]:
    """The float32 tensors named in `shapes` from a safetensors file (memory-mapped, read-only),
    each checked against its expected shape; a file that is not `model` raises `error`."""
    with open(path, "rb") as f:
        try:
            raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError as e:  # an empty file
            raise error(f"{path} is not a safetensors file: {e}") from e
    try:
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
    except (struct.error, ValueError) as e:
        raise error(f"{path} is not a safetensors file: {e}") from e
    tensors = {}
    for name, shape in shapes.items():
        info = header.get(name)
        if not isinstance(info, dict) or info.get("dtype") != "F32" or tuple(info.get("shape", ())) != shape:
            raise error(f"{path} is not {model} (tensor {name}: {info})")
        a, b = info["data_offsets"]
        tensors[name] = np.frombuffer(raw, np.float32, (b - a) // 4, 8 + n + a).reshape(shape)
    return tensors


def _import_ort():
    """Import ONNX Runtime with its telemetry switched off.

    ONNX Runtime 1.32's Linux wheel carries Microsoft's 1DS telemetry: at import it writes a device id
    and an event queue under the user's cache folder and, about 9 s later, looks up
    mobile.events.data.microsoft.com to upload them (seen with strace in any process that stays up that
    long: chat, eval, ingest, an API caller). Answers must not touch the network,
    so ORT_DISABLE_TELEMETRY=1 is set before the import (it is read then; `disable_telemetry_events()`
    afterwards comes too late). It also stops the id file, whose write warned on stderr with a
    read-only home. Set for the whole process, so a child process importing ORT inherits it.
    """
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    import onnxruntime
    return onnxruntime


def cpu_session(graph: bytes, *, threads: int, external: dict[str, np.ndarray] | None = None,
                spinning: bool = False):
    """An ONNX Runtime CPU session for a graph built here: sequential, `threads` intra-op threads,
    quiet, with the SkipLayerNormalization fusion off (ORT's CPU kernel for the fused op is several
    times slower than Add + LayerNormalization). `external`: the graph's external initializers
    (`Graph.external`), kept alive with the session."""
    ort = _import_ort()
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    so.log_severity_level = 3
    values = [ort.OrtValue.ortvalue_from_numpy(a) for a in (external or {}).values()]
    if values:
        # ORT reads the weight matrices from these arrays instead of a serialized copy.
        so.add_external_initializers(list(external or {}), values)
    session = ort.InferenceSession(graph, so, providers=["CPUExecutionProvider"],
                                   disabled_optimizers=["SkipLayerNormFusion"])
    session._rag_external = values  # type: ignore[attr-defined]  # keep the arrays alive with the session
    return session


def post_norm_layers(g: Graph, x: str, *, layers: int, heads: int, linear, norm, attention: dict[str, str],
                     attention_bias: str = "") -> str:
    """Post-norm transformer layers as BERT and MPNet stack them, then the mean over the tokens
    (graph output `pooled`, which sentence-transformers' mean pooling equals for unpadded texts).

    `linear(x, name)` and `norm(x, name)` read the model's tensors by name; `attention` names the
    model's q, k, v, o and attention-norm tensors under `encoder.layer.N.`; `attention_bias`: a
    graph input added to every layer's attention scores (MPNet's relative positions)."""
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        q, k, v = (linear(x, p + attention[m]) for m in ("q", "k", "v"))
        extra = ["", "", attention_bias] if attention_bias else []
        ctx = g.node("MultiHeadAttention", [q, k, v, *extra], domain="com.microsoft", num_heads=heads)[0]
        x = norm(g.node("Add", [x, linear(ctx, p + attention["o"])])[0], p + attention["norm"])
        mid = g.node("Gelu", [linear(x, p + "intermediate.dense")], domain="com.microsoft")[0]
        x = norm(g.node("Add", [x, linear(mid, p + "output.dense")])[0], p + "output.LayerNorm")
    return g.node("ReduceMean", [x], axes=[1], keepdims=0, outputs=["pooled"])[0]


def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1  # int64 two's complement, as protobuf encodes negatives
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, v: int) -> bytes:
    return _key(field, 0) + _varint(v)


def _bytes(field: int, v: bytes | str) -> bytes:
    if isinstance(v, str):
        v = v.encode()
    return _key(field, 2) + _varint(len(v)) + v


def _float(field: int, v: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", v)


_ONNX_DTYPE = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.int32): 6,
               np.dtype(np.int64): 7}


def _tensor(name: str, arr: np.ndarray) -> bytes:
    arr = np.ascontiguousarray(arr)
    msg = b"".join(_int(1, d) for d in arr.shape)
    msg += _int(2, _ONNX_DTYPE[arr.dtype]) + _bytes(8, name) + _bytes(9, arr.tobytes())
    return msg


def _attr(name: str, v) -> bytes:
    if isinstance(v, float):
        return _bytes(1, name) + _float(2, v) + _int(20, 1)
    if isinstance(v, int):
        return _bytes(1, name) + _int(3, v) + _int(20, 2)
    if isinstance(v, (list, tuple)):
        return _bytes(1, name) + b"".join(_int(8, x) for x in v) + _int(20, 7)
    raise TypeError(v)


def value_info(name: str, elem_type: int, dims: list) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


class Graph:
    """Nodes and initializers of one ONNX graph, written as ModelProto bytes by `model`.

    With `external_from` > 0, initializers of at least that many elements are not copied into
    the bytes: they are declared as external data and kept in `external` (name -> array), for
    `SessionOptions.add_external_initializers`, so ONNX Runtime uses the arrays' own memory
    instead of a serialized copy (tens of MB less for a float32 model)."""

    def __init__(self, name: str = "graph", *, external_from: int = 0):
        self.name = name
        self.nodes: list[bytes] = []
        self.inits: list[bytes] = []
        self.external: dict[str, np.ndarray] = {}
        self._external_from = external_from
        self._n = 0

    def init(self, name: str, arr: np.ndarray) -> str:
        if self._external_from and arr.size >= self._external_from and arr.dtype in (np.float32, np.int8):
            self.external[name] = np.ascontiguousarray(arr)
            msg = b"".join(_int(1, d) for d in arr.shape) + _int(2, _ONNX_DTYPE[arr.dtype]) + _bytes(8, name)
            # external_data {key: "location", value: ...}, data_location = EXTERNAL
            msg += _bytes(13, _bytes(1, "location") + _bytes(2, f"in-memory/{name}")) + _int(14, 1)
            self.inits.append(msg)
            return name
        self.inits.append(_tensor(name, arr))
        return name

    def node(self, op: str, inputs: list[str], n_out: int = 1, domain: str = "",
             outputs: list[str] | None = None, **attrs) -> list[str]:
        self._n += 1
        outs = outputs or [f"{op.lower()}_{self._n}_{i}" for i in range(n_out)]
        msg = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outs)
        msg += _bytes(3, f"{op}_{self._n}") + _bytes(4, op)
        msg += b"".join(_bytes(5, _attr(k, v)) for k, v in attrs.items())
        if domain:
            msg += _bytes(7, domain)
        self.nodes.append(msg)
        return outs

    def linear(self, x: str, weight_t: np.ndarray, bias: np.ndarray, name: str) -> str:
        """x @ weight_t + bias (weight_t: [in, out])."""
        y = self.node("MatMul", [x, self.init(name + ".wT", weight_t)])[0]
        return self.node("Add", [y, self.init(name + ".b", bias)])[0]

    def int8_linear(self, x: str, weight_t: np.ndarray, bias: np.ndarray, name: str) -> str:
        """x @ weight_t + bias with the weight kept as int8, one scale per output column, and x
        quantized per run by ONNX Runtime (com.microsoft DynamicQuantizeMatMul, VNNI on CPUs that
        have it). About 1.3-1.7x faster than float32 for a 12-layer encoder; x is quantized with one
        scale per run, so a layer whose input has outliers (the FFN output after GELU) must stay
        float32 (`linear`).

        The weights use 7 bits (-63..63, ONNX Runtime's own `reduce_range`): on a CPU with AVX2 but
        no VNNI the uint8 x int8 kernel sums pairs of products in 16 bits, which saturate with full-range
        weights (255 * 127 * 2 > 32767) and turn the vectors into noise (cosine 0.05 to float32 on
        such a machine); 255 * 63 * 2 fits, and the vectors stay at cosine >= 0.99 on every CPU."""
        scale = np.maximum(np.abs(weight_t).max(axis=0), 1e-12) / INT8_WEIGHT_MAX
        q = np.clip(np.rint(weight_t / scale), -INT8_WEIGHT_MAX, INT8_WEIGHT_MAX).astype(np.int8)
        inputs = [x, self.init(name + ".q", q), self.init(name + ".s", scale.astype(np.float32)), "",
                  self.init(name + ".b", bias)]
        return self.node("DynamicQuantizeMatMul", inputs, domain="com.microsoft")[0]

    def layer_norm(self, x: str, weight: np.ndarray, bias: np.ndarray, name: str, eps: float) -> str:
        return self.node("LayerNormalization", [x, self.init(name + ".w", weight), self.init(name + ".b", bias)],
                         axis=-1, epsilon=eps)[0]

    def model(self, inputs: list[bytes], outputs: list[bytes]) -> bytes:
        graph = b"".join(_bytes(1, n) for n in self.nodes) + _bytes(2, self.name)
        graph += b"".join(_bytes(5, t) for t in self.inits)
        graph += b"".join(_bytes(11, v) for v in inputs) + b"".join(_bytes(12, v) for v in outputs)
        opsets = _bytes(8, _bytes(1, "") + _int(2, 17)) + _bytes(8, _bytes(1, "com.microsoft") + _int(2, 1))
        return _int(1, 8) + _bytes(2, f"rag.{self.name}") + opsets + _bytes(7, graph)
