"""A sentence-transformers encoder run by ONNX Runtime: the part the bundled English models share.

`SentenceEncoder` owns the tokenizer (the model's own `tokenizer.json`, padding and truncation off,
texts cut to the model's window with the closing token kept), the loop (texts of one exact length
per run, `rag.index.onnx_graph.equal_length_runs`) and the L2 normalisation of the mean-pooled
output. A model (`rag.index.minilm_onnx`, `rag.index.mpnet_onnx`) gives its graph's session and the
inputs of one run (`_feed`).
"""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from rag.index.onnx_graph import equal_length_runs


class SentenceEncoder:
    """`embed(texts)` -> float32 (n, dim), L2-normalised; subclasses set `dim`, `max_tokens`,
    `_session` (graph output `pooled`) and implement `_feed`."""

    name = "encoder"
    dim = 0
    max_tokens = 0

    def __init__(self, tokenizer: Path, missing: type[Exception], *, batch_tokens: int):
        from tokenizers import Tokenizer

        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer))
        except Exception as e:  # noqa: BLE001 - tokenizers raises a bare Exception on a bad file
            raise missing(f"{tokenizer} cannot be read: {e}") from e
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.batch_tokens = max(int(batch_tokens), self.max_tokens)
        self._lock = threading.Lock()

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, opening .. closing token, cut to `max_tokens` (the closing one kept)."""
        n = self.max_tokens
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        return [x if len(x) <= n else x[:n - 1] + x[-1:] for x in ids]

    def _feed(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """The session's inputs for a run of texts of one length: `ids` int [B, L]."""
        raise NotImplementedError

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors of the texts, in order."""
        if isinstance(texts, str):
            raise TypeError("pass a list of strings")
        ids = self.token_ids(texts)
        out = np.zeros((len(ids), self.dim), np.float32)
        lengths = np.array([len(x) for x in ids])
        for idx in equal_length_runs(lengths, self.batch_tokens):
            feed = self._feed(np.array([ids[t] for t in idx]))
            with self._lock:
                (pooled,) = self._session.run(["pooled"], feed)  # type: ignore[attr-defined]
            out[idx] = pooled
        norms = np.sqrt(np.maximum((out * out).sum(1, keepdims=True), 1e-12))
        return out / norms
