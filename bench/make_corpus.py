"""Build large benchmark corpora offline and deterministically (never committed).

Each document recombines real text found on this machine:
  * 2-4 sentences of the seed abstracts in data/ (the "research" part), and
  * 1-3 Debian package short descriptions from the local apt lists (a diverse real
    vocabulary, ~60,000 distinct lines on bookworm), when those lists exist.
Choices come from `random.Random(n_docs)`, so the same inputs give the same file; the
script prints the sources it used and the sha256 of the result. Output: JSON lines with
`id`, `title`, `abstract` and `seed_sentences` (indexes into the seed-sentence pool, used by
bench/scale.py to build vectors from real sentence embeddings).

Run: .venv/bin/python bench/make_corpus.py 10000 100000   (writes bench/corpora/docs-<n>.jsonl)
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "corpora"
APT_LISTS = "/var/lib/apt/lists/*_Packages*"


def seed_sentences() -> list[str]:
    """Every sentence of the 35 seed abstracts, in corpus order."""
    sys.path.insert(0, str(ROOT))
    from rag.corpus import read_corpus
    from rag.text import split_sentences

    out: list[str] = []
    for doc in read_corpus([ROOT / "data"]).documents:
        out.extend(doc.text[a:b].strip() for a, b in split_sentences(doc.text) if b - a > 20)
    return out


def debian_descriptions() -> tuple[list[str], list[str]]:
    """Distinct package short descriptions from the apt lists, sorted; and the files read."""
    files = sorted(glob.glob(APT_LISTS))
    lines: set[str] = set()
    for f in files:
        if f.endswith(".lz4"):
            raw = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", f], capture_output=True, check=False).stdout
        else:
            raw = Path(f).read_bytes()
        for line in raw.decode("utf-8", errors="replace").splitlines():
            if line.startswith("Description: "):
                text = line[len("Description: "):].strip()
                if len(text) > 15:
                    lines.add(text[0].upper() + text[1:] + ("" if text.endswith(".") else "."))
    return sorted(lines), files


def build(n_docs: int, seeds: list[str], debian: list[str]) -> list[dict]:
    rng = random.Random(n_docs)
    docs = []
    for i in range(n_docs):
        picks = sorted(rng.sample(range(len(seeds)), rng.randint(2, 4)))
        parts = [seeds[p] for p in picks]
        title = ""
        if debian:
            extra = [debian[rng.randrange(len(debian))] for _ in range(rng.randint(1, 3))]
            title = extra[0].rstrip(".")
            for e in extra:
                parts.insert(rng.randint(0, len(parts)), e)
        docs.append({"id": f"bench-{n_docs}-{i:06d}", "title": title, "abstract": " ".join(parts),
                     "seed_sentences": picks})
    return docs


def corpus_path(n_docs: int) -> Path:
    return OUT / f"docs-{n_docs}.jsonl"


def make(n_docs: int, *, quiet: bool = False) -> Path:
    """Write (or reuse) the corpus of n_docs documents; return its path."""
    path = corpus_path(n_docs)
    if path.exists():
        return path
    seeds = seed_sentences()
    debian, files = debian_descriptions()
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for d in build(n_docs, seeds, debian):
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    tmp.replace(path)
    if not quiet:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        print(f"{path}: {n_docs} docs from {len(seeds)} seed sentences + {len(debian)} Debian descriptions "
              f"({', '.join(Path(f).name for f in files) or 'no apt lists'}); sha256 {digest}", file=sys.stderr)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="+", type=int)
    for n in ap.parse_args().sizes:
        make(n)


if __name__ == "__main__":
    main()
