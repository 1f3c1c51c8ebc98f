"""The scale setting: reading the extra corpus, naming and finding the cached index, and an end-to-end run."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import small_question_set as _small_set
from rag.cli import app
from rag.config import Settings
from rag.evals.scale import ScaleError, ScaleSpec, cache_key, cache_root, read_extra, seed_files

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "eval" / "questions.jsonl"
runner = CliRunner()

# Distractors on other topics, written for this test (the shared 10k corpus may be absent in CI).
ABSTRACTS = [
    "We study graph neural networks for molecular property prediction and show that message passing with "
    "edge features improves accuracy on three chemistry benchmarks while halving the training time.",
    "This paper proposes a curriculum for training speech recognizers on noisy recordings, ordering clips "
    "by signal-to-noise ratio, and reports lower word error rates on two public corpora of spoken English.",
    "We present a method for federated learning on mobile phones that compresses client updates with "
    "sparse random projections, reducing upload traffic tenfold without hurting the accuracy of the model.",
    "A new dataset of satellite images of farmland is introduced, together with a segmentation baseline "
    "that detects field boundaries; we release the images, the labels and the code for the baseline.",
    "We analyse the calibration of large language models on multiple-choice exams and find that answer "
    "probabilities are overconfident after instruction tuning, which temperature scaling largely corrects.",
    "This work studies recommendation systems for online news and shows that modelling the time of day "
    "of each click improves ranking quality for returning readers in a large industrial experiment.",
]


def write_corpus(path: Path, n: int = len(ABSTRACTS)) -> Path:
    rows = [{"id": f"x{i}", "title": f"Paper {i}", "abstract": a, "authors": ["A. Author", "B. Author"],
             "venue": "ICLR", "year": 2022} for i, a in enumerate(ABSTRACTS[:n])]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_read_extra_takes_the_first_records_of_plain_or_gzipped_jsonl(tmp_path):
    gz = write_corpus(tmp_path / "c.jsonl.gz")
    plain = write_corpus(tmp_path / "c.jsonl")
    first = read_extra(gz, 4)
    assert first == read_extra(plain, 4) and len(first) == 4
    assert [json.loads(r)["id"] for r in first] == ["x0", "x1", "x2", "x3"]
    assert read_extra(gz, 2) == first[:2]  # deterministic: always the start of the file


@pytest.mark.parametrize("content, limit, message", [
    ('{"abstract": "fine"}\n{oops\n', 2, "c.jsonl:2: malformed JSON"),
    ('{"abstract": "fine"}\n["a list"]\n', 2, "c.jsonl:2: expected a JSON object with an `abstract` field"),
    ('{"title": "no abstract"}\n', 1, "c.jsonl:1: expected a JSON object with an `abstract` field"),
    ('{"abstract": "only one"}\n', 3, "holds 1 records, fewer than --extra-limit 3"),
    ('{"abstract": "fine"}\n', 0, "--extra-limit must be at least 1"),
])
def test_read_extra_rejects_bad_records_in_one_line(tmp_path, content, limit, message):
    path = tmp_path / "c.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ScaleError) as e:
        read_extra(path, limit)
    assert message in str(e.value) and e.value.exit_code == 2


def test_read_extra_on_a_missing_or_broken_file(tmp_path):
    with pytest.raises(ScaleError, match="extra corpus not found"):
        read_extra(tmp_path / "none.jsonl", 1)
    fake = tmp_path / "fake.jsonl.gz"
    fake.write_text("not gzip", encoding="utf-8")
    with pytest.raises(ScaleError, match="cannot read extra corpus"):
        read_extra(fake, 1)


def test_cache_root_is_the_flag_then_the_environment_then_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_EVAL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "rag" / "eval-scale"
    monkeypatch.setenv("RAG_EVAL_CACHE", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "flag") == tmp_path / "flag"


def test_cache_key_changes_with_the_corpus_the_limit_the_seeds_and_the_index_settings(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text(ABSTRACTS[0], encoding="utf-8")
    settings = Settings(data_dir=str(data), index_dir=str(tmp_path / "index"))
    corpus = write_corpus(tmp_path / "c.jsonl")
    seeds = seed_files(settings)
    key = cache_key(ScaleSpec(corpus, 3), settings, seeds)
    assert key == cache_key(ScaleSpec(corpus, 3), settings, seeds)
    assert key != cache_key(ScaleSpec(corpus, 4), settings, seeds)
    assert key != cache_key(ScaleSpec(corpus, 3), settings.with_overrides(chunk_size=256), seeds)
    assert key == cache_key(ScaleSpec(corpus, 3), settings.with_overrides(k=9), seeds)  # retrieval only
    (data / "a.txt").write_text(ABSTRACTS[1], encoding="utf-8")
    assert key != cache_key(ScaleSpec(corpus, 3), settings, seeds)
    write_corpus(corpus, 5)
    assert cache_key(ScaleSpec(corpus, 3), settings, seeds) != key
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScaleError, match="no seed abstracts"):
        seed_files(Settings(data_dir=str(tmp_path / "empty"), index_dir=str(tmp_path / "i")))


@pytest.mark.slow
def test_scale_run_builds_the_index_once_then_reuses_it(seed_settings, tmp_path):
    """Seed abstracts + 6 extra ones: both settings side by side; the second run opens the cached index."""
    corpus = write_corpus(tmp_path / "extra.jsonl.gz")
    small = _small_set(tmp_path, ("lookup-02", "which-01", "unans-01", "lookup-26"))
    cache = tmp_path / "cache"
    args = ["eval", "--questions", str(small), "--extra-corpus", str(corpus), "--extra-limit", "6",
            "--scale-cache", str(cache), "--out", str(tmp_path / "results"), "--json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    seed, scale = data["seed"], data["scale"]
    assert seed["meta"]["setting"] == "seed" and scale["meta"]["setting"] == "scale"
    assert scale["meta"]["scale_documents"] == 35 + 6 and scale["meta"]["extra_limit"] == 6
    assert scale["meta"]["scale_build_seconds"] is not None and "built in" in first.stderr
    assert [c["id"] for c in scale["cases"]] == [c["id"] for c in seed["cases"]]
    assert set(scale["summary"]["splits"]) == {"dev", "test"}
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    assert (folder / "complete.json").exists() and (folder / "data" / "extra.jsonl").exists()
    reports = sorted((tmp_path / "results").glob("*-scale6.md"))
    assert reports and "## Seed vs scale" in reports[-1].read_text(encoding="utf-8")

    again = runner.invoke(app, args[:-1])  # the table this time
    assert again.exit_code == 0, again.output
    assert "reused" in again.output and "built in" not in again.output
    assert "seed vs scale" in again.output and "wrong-paper answers" in again.output

    # --save-baseline keeps the scale run beside the seed one; --check then gates both settings.
    baseline = tmp_path / "baseline.json"
    saved = runner.invoke(app, args[:-1] + ["--save-baseline", "--baseline", str(baseline)])
    assert saved.exit_code == 0, saved.output
    assert (tmp_path / "baseline-scale.json").exists() and "scale baseline saved" in saved.output
    checked = runner.invoke(app, args[:-1] + ["--check", "--baseline", str(baseline)])
    assert checked.exit_code == 0, checked.output
    assert "not checked" not in checked.output
    scale_base = json.loads((tmp_path / "baseline-scale.json").read_text(encoding="utf-8"))
    scale_base["summary"]["overall"]["failures"] = -1  # a baseline no run can meet: the scale gate must fail
    (tmp_path / "baseline-scale.json").write_text(json.dumps(scale_base), encoding="utf-8")
    failed = runner.invoke(app, args[:-1] + ["--check", "--baseline", str(baseline)])
    assert failed.exit_code == 1, failed.output


def test_scale_flags_fail_in_one_line(seed_settings, tmp_path):
    small = _small_set(tmp_path, ("lookup-02",))
    base = ["eval", "--questions", str(small), "--out", str(tmp_path / "r")]
    cases = [
        (["--extra-corpus", str(tmp_path / "none.jsonl.gz")], "error: extra corpus not found"),
        (["--extra-corpus", str(write_corpus(tmp_path / "c.jsonl")), "--extra-limit", "0"],
         "error: --extra-limit must be at least 1"),
        (["--extra-corpus", str(tmp_path / "c.jsonl"), "--extra-limit", "99", "--scale-cache", str(tmp_path / "k")],
         "fewer than --extra-limit 99"),
        (["--extra-corpus", str(tmp_path / "c.jsonl"), "--mode", "llm"], "needs a live LLM"),
        (["--split", "train"], "error: --split must be dev, test or all"),
    ]
    for flags, message in cases:
        res = runner.invoke(app, base + flags)
        assert res.exit_code == 2, (flags, res.output)
        assert message in res.output and "Traceback" not in res.output, (flags, res.output)
        assert res.output.strip().splitlines()[-1].startswith("error: "), (flags, res.output)
