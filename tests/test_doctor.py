"""`rag doctor`: a pass/fail line per check, and the exit code of the first failure."""
from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag import errors
from rag.cli import app
from rag.doctor import no_network

runner = CliRunner()
DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


class ModelsServer:
    """GET /v1/models on 127.0.0.1, listing `models`; records the Authorization headers."""

    def __init__(self, models: list[str], status: int = 200) -> None:
        self.auth: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 - http.server naming
                server.auth.append(self.headers.get("authorization"))
                if self.path != "/v1/models" or status != 200:
                    body = json.dumps({"error": {"message": "nope"}}).encode()
                    self.send_response(404 if status == 200 else status)
                else:
                    data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in models]
                    body = json.dumps({"object": "list", "data": data}).encode()
                    self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _doctor(*args):
    res = runner.invoke(app, ["doctor", *args])
    if "--json" in args:
        return res, {c["name"]: c["status"] for c in json.loads(res.stdout)}
    return res, {line.split(":")[0].split(None, 1)[1]: line.split()[0] for line in res.stdout.splitlines()}


def test_all_checks_pass_on_the_seed_index(seed_settings):
    res, marks = _doctor()
    assert res.exit_code == 0, res.output
    assert marks == {"settings": "ok", "index": "ok", "embedding model": "ok", "llm endpoint": "skip",
                     "offline guards": "ok", "retrieval offline": "ok"}
    assert seed_settings.collection_name() in res.stdout and "35 documents" in res.stdout
    assert "network blocked" in res.stdout


def test_missing_index_fails_with_exit_4(tmp_path):
    res, marks = _doctor()
    assert res.exit_code == 4
    assert marks["index"] == "FAIL" and marks["retrieval offline"] == "skip" and marks["embedding model"] == "ok"
    assert "rag ingest" in res.stdout


def test_index_built_with_other_settings_is_reported(seed_settings, monkeypatch):
    monkeypatch.setenv("RAG_CHUNK_SIZE", "256")  # another collection name: the seed index does not match
    res, marks = _doctor()
    assert res.exit_code == 4 and marks["index"] == "FAIL"
    assert "settings changed" in res.stdout


def test_bad_settings_fail_with_exit_5(monkeypatch):
    monkeypatch.setenv("RAG_K", "many")
    res, marks = _doctor()
    assert res.exit_code == 5 and marks == {"settings": "FAIL"} and "RAG_K" in res.stdout


def test_llm_endpoint_lists_the_model(seed_settings, monkeypatch):
    with ModelsServer(["local-model", "other"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-doctor-secret")
        monkeypatch.setenv("RAG_LLM_MODEL", "local-model")
        res, marks = _doctor("--json")
    checks = {c["name"]: c for c in json.loads(res.stdout)}
    assert res.exit_code == 0 and marks["llm endpoint"] == "pass"
    assert "local-model" in checks["llm endpoint"]["detail"]
    assert server.auth == ["Bearer sk-doctor-secret"] and "sk-doctor-secret" not in res.output


def test_llm_endpoint_without_the_model_fails_with_exit_3(seed_settings, monkeypatch):
    with ModelsServer(["llama3.1", "qwen2.5"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("RAG_LLM_MODEL", "gpt-4o-mini")
        res, marks = _doctor()
    assert res.exit_code == 3 and marks["llm endpoint"] == "FAIL"
    assert "does not list model 'gpt-4o-mini'" in res.stdout and "llama3.1, qwen2.5" in res.stdout


def test_a_single_model_server_that_does_not_list_the_name_is_a_warning(seed_settings, monkeypatch):
    """llama-server answers any model name, so `rag ask` works with the default: doctor warns, like ask."""
    with ModelsServer(["qwen2.5-coder-1.5b-instruct"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        res, marks = _doctor()
    assert res.exit_code == 0 and marks["llm endpoint"] == "warn"
    line = next(x for x in res.stdout.splitlines() if "llm endpoint" in x)
    assert "does not list model 'gpt-4o-mini' but serves one model, 'qwen2.5-coder-1.5b-instruct'" in line
    assert "(hint: set RAG_LLM_MODEL=qwen2.5-coder-1.5b-instruct to name it)" in line


def test_unreachable_llm_endpoint_fails_with_exit_3(seed_settings, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    res, marks = _doctor()
    assert res.exit_code == 3 and marks["llm endpoint"] == "FAIL" and "cannot connect" in res.stdout


def test_llm_mode_without_an_llm_is_a_config_failure(seed_settings, monkeypatch):
    monkeypatch.setenv("RAG_ANSWER_MODE", "llm")
    res, marks = _doctor()
    assert res.exit_code == 5 and marks["llm endpoint"] == "FAIL"


def test_hub_downloads_allowed_is_a_failure(seed_settings, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    res, marks = _doctor()
    assert res.exit_code == 5 and marks["offline guards"] == "FAIL" and "HF_HUB_OFFLINE" in res.stdout


def test_no_network_blocks_and_records_connections():
    with no_network() as log:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        with pytest.raises(OSError):
            socket.getaddrinfo("example.org", 443)
    assert log.attempts == ["connect ('127.0.0.1', 9)", "DNS lookup example.org"]
    left = socket.socket()
    left.close()  # the real socket layer is back
    assert socket.getaddrinfo.__module__ == "socket"


def test_exit_code_table_in_docs_matches_the_errors():
    table = dict(re.findall(r"^\| (\d) \| `(\w+)`", DOCS.read_text(encoding="utf-8"), re.M))
    assert {int(code): getattr(errors, name).exit_code for code, name in table.items()} == {
        int(code): int(code) for code in table
    }
    assert set(table) >= {"2", "3", "4", "5", "6"}


def test_an_index_without_the_minilm_vectors_is_a_warning_naming_the_fix(seed_settings, tmp_path, monkeypatch):
    import shutil

    from rag.index.ensemble import ENSEMBLE_FILE

    copy = tmp_path / "older"
    shutil.copytree(seed_settings.index_dir, copy)
    lexical_dirs = list(copy.glob("*/lexical"))
    assert lexical_dirs
    for folder in lexical_dirs:
        (folder / ENSEMBLE_FILE).unlink()
    monkeypatch.setenv("RAG_INDEX_DIR", str(copy))
    res, marks = _doctor()
    assert res.exit_code == 0 and marks["index"] == "warn", res.output
    assert "MiniLM" in res.stdout and "rag ingest" in res.stdout
    assert "all-MiniLM-L6-v2 and all-mpnet-base-v2 (English rankings) loaded offline" in res.stdout


def test_mpnet_vectors_of_an_older_engine_are_a_warning_naming_the_fix(seed_settings, tmp_path, monkeypatch):
    import json
    import shutil

    from rag.index.ensemble import MPNET_FILE

    copy = tmp_path / "older"
    shutil.copytree(seed_settings.index_dir, copy)
    for meta_file in copy.glob(f"*/lexical/{MPNET_FILE}"):
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        meta["model"] = "mpnet-base-onnx"  # session 6's float32 engine
        meta_file.write_text(json.dumps(meta), encoding="utf-8")
    monkeypatch.setenv("RAG_INDEX_DIR", str(copy))
    res, marks = _doctor()
    assert res.exit_code == 0 and marks["index"] == "warn", res.output
    assert "older engine" in res.stdout and "rag ingest" in res.stdout


def test_an_int8_engine_that_disagrees_with_float32_on_this_cpu_fails_the_embedding_check(seed_settings, monkeypatch):
    # On a CPU where ONNX Runtime's int8 kernels compute something else (8-bit weights saturated on
    # AVX2 without VNNI), the chunk vectors ingest makes would be noise: doctor says so.
    import rag.doctor

    assert rag.doctor.int8_agreement() > 0.98  # the shipped engine on this machine
    monkeypatch.setattr(rag.doctor, "int8_agreement", lambda: 0.05)
    res, marks = _doctor()
    assert res.exit_code != 0 and marks["embedding model"] == "FAIL", res.output
    assert "cosine 0.05" in res.stdout and "paraphrase_weight = 0" in res.stdout
