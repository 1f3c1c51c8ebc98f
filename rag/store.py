"""The vector store: Chroma, embedded on disk or over HTTP, written through llama-index.

Each chunk is one Chroma record with its vector and its document's metadata. Chroma never
embeds anything itself: collections are opened with `embedding_function=None` on create
*and* get (a bare get would bring back Chroma's downloading default).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from rag.config import Settings
from rag.errors import IndexError_, UsageError
from rag.types import Chunk, Document

_BATCH = 1000


def index_root(settings: Settings) -> Path:
    return Path(settings.index_dir).expanduser()


def make_dir(path: Path) -> Path:
    """Create a folder of the index, turning an OS refusal into a one-line index error."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise IndexError_(f"cannot create the index folder {path}: {e.strerror or e}",
                          hint="set RAG_INDEX_DIR to a writable folder") from None
    return path


def lexical_dir(settings: Settings) -> Path:
    return index_root(settings) / settings.collection_name() / "lexical"


def _client(settings: Settings, *, create: bool):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(settings.chroma_url)
        if not url.hostname:
            raise UsageError(f"chroma_url {settings.chroma_url!r} is not a URL like http://host:8000")
        return chromadb.HttpClient(
            host=url.hostname, port=url.port or 8000, ssl=url.scheme == "https", settings=chroma_settings
        )
    path = index_root(settings) / "chroma"
    if not create and not path.exists():
        raise IndexError_(f"no index in {index_root(settings)}", hint="run `rag ingest` first")
    make_dir(path)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


def _meta_for(doc: Document, chunk: Chunk, n_chunks: int) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "n_chunks": n_chunks,
        "doc_id": doc.id,
        "label": doc.label,
        "title": doc.title or "",
        "sources": json.dumps(doc.sources, ensure_ascii=False),
        "chunk": chunk.n,
        "start": chunk.start,
        "end": chunk.end,
    }
    for key in ("authors", "url", "year", "venue", "external_id"):
        if getattr(doc, key):
            meta[key] = getattr(doc, key)
    return meta


class Store:
    """One Chroma collection, named by the settings that decide what its vectors mean."""

    def __init__(self, settings: Settings, *, create: bool = False) -> None:
        self.settings = settings
        self.name = settings.collection_name()
        try:
            self._open(create)
        except (IndexError_, UsageError):
            raise
        except Exception as e:  # a damaged store: chromadb raises InternalError and others
            detail = (str(e).splitlines() or [""])[0][:200]
            where = settings.chroma_url or str(index_root(settings) / "chroma")
            raise IndexError_(f"the index in {where} cannot be read ({type(e).__name__}: {detail})",
                              hint="run `rag ingest --rebuild`") from e

    @classmethod
    def rebuilt(cls, settings: Settings) -> "Store":
        """Return an empty store for these settings, dropping the old collection.

        A local store too damaged to open is moved aside (`chroma.broken-<time>`), not
        deleted, and a new one is created in its place.
        """
        try:
            cls(settings, create=True).drop()
        except IndexError_:
            if settings.chroma_url:
                raise
            import time

            from chromadb.api.client import SharedSystemClient

            path = index_root(settings) / "chroma"
            path.rename(path.with_name(f"chroma.broken-{time.strftime('%Y%m%d-%H%M%S')}"))
            SharedSystemClient.clear_system_cache()  # chromadb caches the open store per path
        return cls(settings, create=True)

    def _open(self, create: bool) -> None:
        settings = self.settings
        self.client = _client(settings, create=create)
        if create:
            self.collection = self.client.get_or_create_collection(
                self.name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"embed_model": settings.embed_model, "index_key": settings.index_key()},
            )
        else:
            try:
                self.collection = self.client.get_collection(self.name, embedding_function=None)
            except Exception as e:  # chromadb raises NotFoundError / ValueError by version
                others = [c.name for c in self.client.list_collections()]
                hint = "run `rag ingest`" if not others else "run `rag ingest --rebuild` (settings changed)"
                raise IndexError_(f"no index for the current settings ({self.name}): {type(e).__name__}",
                                  hint=hint) from None

    # -- writing -----------------------------------------------------------------------------
    def add(
        self, docs: dict[str, Document], chunks: Sequence[Chunk], vectors: np.ndarray, n_chunks: dict[str, int]
    ) -> None:
        """Write chunks with their vectors through llama-index's Chroma vector store.

        `n_chunks` gives each document's chunk count, stored so a later ingest can tell a
        complete document from one an interrupted run left half-written without re-chunking.
        """
        from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
        from llama_index.vector_stores.chroma import ChromaVectorStore

        nodes = []
        for chunk, vec in zip(chunks, vectors):
            node = TextNode(
                id_=chunk.id,
                text=chunk.text,
                embedding=[float(x) for x in vec],
                metadata=_meta_for(docs[chunk.doc_id], chunk, n_chunks[chunk.doc_id]),
                start_char_idx=chunk.start,
                end_char_idx=chunk.end,
            )
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=chunk.doc_id)
            nodes.append(node)
        ChromaVectorStore(chroma_collection=self.collection).add(nodes)

    def update_metadata(self, doc_id: str, fields: dict[str, Any]) -> None:
        """Set metadata fields on every chunk of a document (other fields are kept)."""
        ids = self.collection.get(where={"doc_id": doc_id}, include=[])["ids"]
        if ids:
            self.collection.update(ids=ids, metadatas=[dict(fields) for _ in ids])

    def delete_docs(self, doc_ids: Iterable[str]) -> None:
        for did in doc_ids:
            self.collection.delete(where={"doc_id": did})

    def drop(self) -> None:
        """Delete this collection entirely (for --rebuild)."""
        try:
            self.client.delete_collection(self.name)
        except Exception:
            pass

    # -- reading -----------------------------------------------------------------------------
    def count(self) -> int:
        return self.collection.count()

    def present_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(ids), _BATCH):
            found.update(self.collection.get(ids=list(ids[i : i + _BATCH]), include=[])["ids"])
        return found

    def scan(self, include: Sequence[str] = ("metadatas",)) -> Iterable[tuple[str, str | None, dict]]:
        """Yield (chunk_id, text, metadata) for every chunk, in pages."""
        total = self.count()
        for offset in range(0, total, _BATCH):
            page = self.collection.get(include=list(include), limit=_BATCH, offset=offset)
            n = len(page["ids"])
            docs = page.get("documents") or [None] * n
            metas = page.get("metadatas") or [None] * n
            for cid, text, meta in zip(page["ids"], docs, metas):
                yield cid, text, meta or {}

    def documents(self) -> dict[str, dict[str, Any]]:
        """Return doc_id -> {label, title, sources, chunks} for every stored document."""
        out: dict[str, dict[str, Any]] = {}
        for cid, _, meta in self.scan():
            did = meta.get("doc_id", cid.split(":")[0])
            entry = out.setdefault(did, {"id": did, "label": meta.get("label", ""), "title": meta.get("title") or None,
                                         "sources": json.loads(meta.get("sources", "[]")), "chunk_ids": [],
                                         "n_chunks": int(meta.get("n_chunks", 0))})
            entry["chunk_ids"].append(cid)
        return out

    def _document_rows(self, doc_id: str) -> list[tuple[str, str, dict]]:
        """A document's (chunk_id, text, metadata) rows, in chunk order."""
        got = self.collection.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        rows = [(cid, text or "", meta or {}) for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"])]
        return sorted(rows, key=lambda r: (int(r[2].get("chunk", 0)), int(r[2].get("start", 0))))

    def document_chunks(self, doc_id: str) -> list[tuple[str, str]]:
        """Return a document's (chunk_id, text) pairs in order."""
        return [(cid, text) for cid, text, _ in self._document_rows(doc_id)]

    def document_text(self, doc_id: str) -> str:
        """Rebuild a document's full text from its chunks (their offsets remove the overlap)."""
        text, end = "", 0
        for _, chunk, meta in self._document_rows(doc_id):
            start, stop = int(meta.get("start", 0)), int(meta.get("end", 0))
            if not text:
                text, end = chunk, stop
            elif stop > end:
                text += chunk[max(0, end - start):] if start < end else " " + chunk
                end = stop
        return text

    def query(self, vector: np.ndarray, n: int) -> list[tuple[str, str, dict, float]]:
        """Nearest chunks as (chunk_id, text, metadata, cosine similarity)."""
        res = self.collection.query(
            query_embeddings=[[float(x) for x in vector]],
            n_results=max(1, n),
            include=["documents", "metadatas", "distances"],
        )
        return [
            (cid, text, meta or {}, 1.0 - float(dist))
            for cid, text, meta, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0], res["distances"][0])
        ]

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        if not ids:
            return {}
        res = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        return {cid: (text, meta or {}) for cid, text, meta in zip(res["ids"], res["documents"], res["metadatas"])}
