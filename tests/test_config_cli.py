"""`rag config show`: every setting, its effective value and where it came from; secrets masked."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rag.cli import app

runner = CliRunner()


def test_origins_of_default_file_env_values(tmp_path, monkeypatch):
    (tmp_path / "rag.toml").write_text('k = 7\nllm_model = "llama3.1"\n', encoding="utf-8")
    monkeypatch.setenv("RAG_LLM_MODEL", "qwen2.5")
    res = runner.invoke(app, ["config", "show", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert rows["k"]["value"] == "7" and rows["k"]["origin"] == f"file {tmp_path / 'rag.toml'}"
    assert rows["llm_model"]["value"] == "qwen2.5" and rows["llm_model"]["origin"] == "env RAG_LLM_MODEL"
    assert rows["chunk_size"]["origin"] == "default" and rows["chunk_size"]["env"] == "RAG_CHUNK_SIZE"
    assert rows["index_dir"]["origin"] == "env RAG_INDEX_DIR"  # set by the test fixture


def test_secrets_are_never_printed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:hunter2@llm.example/v1")
    for args in (["config", "show"], ["config", "show", "--json"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0
        assert "sk-very-secret-key" not in res.output and "hunter2" not in res.output
    plain = runner.invoke(app, ["config", "show"]).stdout
    line = next(l for l in plain.splitlines() if l.startswith("openai_api_key"))
    assert "set (hidden)" in line and "env OPENAI_API_KEY" in line
    assert "https://user:***@llm.example/v1" in plain


def test_bad_config_file_is_one_line_exit_5(tmp_path):
    (tmp_path / "rag.toml").write_text("colour = 'blue'\n", encoding="utf-8")
    res = runner.invoke(app, ["config", "show"])
    assert res.exit_code == 5 and "unknown setting 'colour'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_click_usage_errors_are_one_line_exit_2():
    import subprocess
    import sys
    from pathlib import Path

    rag = Path(sys.executable).parent / "rag"
    res = subprocess.run([str(rag), "ask", "--no-such-flag", "x"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == "error: No such option: --no-such-flag (hint: see `rag ask --help`)"


def test_an_unreadable_working_folder_is_a_config_error_not_a_traceback(tmp_path, monkeypatch):
    from pathlib import Path

    from rag.config import load_settings
    from rag.errors import ConfigError

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "is_file", refuse)  # as os.stat does in a folder without read access
    with pytest.raises(ConfigError, match="cannot look for rag.toml"):
        load_settings(env={}, cwd=tmp_path)
