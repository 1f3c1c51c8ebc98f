"""The vector store: Chroma, embedded on disk or over HTTP, written through llama-index.

Each chunk is one Chroma record with its vector and its document's metadata. Chroma never
embeds anything itself: collections are opened with `embedding_function=None` on create
*and* get (a bare get would bring back Chroma's downloading default). Metadata is encoded
and decoded here only: callers get `StoredChunk` / `StoredDocument` records.
"""
from __future__ import annotations

import contextlib
import functools
import json
import shutil
import sqlite3
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

from rag.config import Settings
from rag.errors import IndexError_, UsageError
from rag.index.chunk import doc_of
from rag.index.filters import Where, fold, venue_key, year_number
from rag.index.lock import open_lock
from rag.index.paths import IndexPaths, make_dir, read_only_error
from rag.index.records import StoredChunk, StoredDocument
from rag.types import Chunk, Document

_BATCH = 1000
_OPTIONAL = ("authors", "url", "year", "venue", "external_id")


# -- the one encoding of metadata --------------------------------------------------------------
def _encode_meta(doc: Document | None = None, **values: str | None) -> dict[str, Any]:
    """The optional document fields as stored, with the keys filters match on.

    `year` is stored as a number when it is four digits, so Chroma's `where` matches it
    exactly; `venue_key` and `authors_key` are folded forms (see rag.index.filters). A field
    set to None is deleted from the record by Chroma's update.
    """
    if doc is not None:
        values = {key: getattr(doc, key) for key in _OPTIONAL}
    meta: dict[str, Any] = {}
    for key in _OPTIONAL:
        if key in values:
            meta[key] = values[key] or None
    if "year" in meta:
        meta["year"] = year_number(meta["year"]) or meta["year"]
    if "venue" in meta:
        meta["venue_key"] = venue_key(meta["venue"]) or None
    if "authors" in meta:
        meta["authors_key"] = fold(meta["authors"]) or None
    return meta


def _encode(doc: Document, chunk: Chunk, n_chunks: int) -> dict[str, Any]:
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
    meta.update({k: v for k, v in _encode_meta(doc).items() if v is not None})
    return meta


def _encode_update(*, sources: list[str] | None = None, label: str | None = None, title: str | None = None,
                   n_chunks: int | None = None, meta: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if sources is not None:
        out["sources"] = json.dumps(sources, ensure_ascii=False)
    if label is not None:
        out["label"] = label
        out["title"] = title or ""
    if n_chunks is not None:
        out["n_chunks"] = n_chunks
    if meta:
        out.update(_encode_meta(**meta))
    return out


def _decode(cid: str, text: str | None, meta: Mapping[str, Any] | None) -> StoredChunk:
    meta = meta or {}
    try:
        sources = json.loads(meta.get("sources") or "[]")
    except ValueError:
        sources = []
    return StoredChunk(
        id=cid,
        doc_id=str(meta.get("doc_id") or doc_of(cid)),
        n=int(meta.get("chunk") or 0),
        text=text or "",
        start=int(meta.get("start") or 0),
        end=int(meta.get("end") or 0),
        n_chunks=int(meta.get("n_chunks") or 0),
        label=str(meta.get("label") or ""),
        title=meta.get("title") or None,
        sources=[str(s) for s in sources] if isinstance(sources, list) else [],
        **{key: (str(meta[key]) if meta.get(key) not in (None, "") else None) for key in _OPTIONAL},
        keys_current=_keys_current(meta),
    )


def _keys_current(meta: Mapping[str, Any]) -> bool:
    """True when the record carries the keys filters match on (written since they exist)."""
    if meta.get("venue") and "venue_key" not in meta or meta.get("authors") and "authors_key" not in meta:
        return False
    return not (isinstance(meta.get("year"), str) and year_number(meta["year"]) is not None)


_READ_ONLY_SIGNS = ("readonly database", "read-only file system", "permission denied")


def _read_only_failure(e: BaseException) -> bool:
    """True when a Chroma or OS error says the store may not be written."""
    return isinstance(e, PermissionError) or any(sign in str(e).lower() for sign in _READ_ONLY_SIGNS)


def snapshot(folder: Path) -> Path:
    """Copy a Chroma folder that may not be written into a fresh temporary folder; return the copy.

    chromadb's embedded client writes to its SQLite file whenever it opens one (it creates
    its migrations and write-lock tables even when nothing changes), so a read-only store —
    a shared copy, a read-only mount, another user's index — can only be read through a
    private copy. The database is copied with SQLite's backup API (a consistent copy even
    while its owner writes); the vector segment files are copied as they are.
    """
    tmp = Path(tempfile.mkdtemp(prefix="rag-readonly-"))
    dest = tmp / "chroma"
    try:
        shutil.copytree(folder, dest, ignore=shutil.ignore_patterns("chroma.sqlite3*"), copy_function=shutil.copyfile)
        for path in (dest, *dest.rglob("*")):  # copytree gives folders the source's read-only mode
            if path.is_dir():
                path.chmod(path.stat().st_mode | 0o700)
        db = folder / "chroma.sqlite3"
        if db.exists():
            try:
                src = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
                try:
                    out = sqlite3.connect(dest / "chroma.sqlite3")
                    with out:
                        src.backup(out)
                    out.close()
                finally:
                    src.close()
            except sqlite3.Error:  # e.g. a hot journal a reader may not roll back: copy the bytes
                shutil.copy2(db, dest / "chroma.sqlite3")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _client(settings: Settings, paths: IndexPaths, *, create: bool, copy: Path | None = None):
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
    paths.check_root()
    if copy is not None:
        return chromadb.PersistentClient(path=str(copy), settings=chroma_settings)
    if not create and not paths.chroma.exists():
        raise IndexError_(f"no index in {paths.root}", hint="run `rag ingest` first")
    make_dir(paths.chroma)
    return chromadb.PersistentClient(path=str(paths.chroma), settings=chroma_settings)


F = TypeVar("F", bound=Callable[..., Any])


def _reading(method: F) -> F:
    """Read through a collection rebuilt since it was opened; a Chroma failure is an index error.

    `ingest --rebuild` (in this or another process) deletes the collection and creates a new
    one under the same name: the old handle then raises NotFoundError, and one reopen fixes it.
    A damaged file or a lost server is an `IndexError_` naming the index.
    """

    @functools.wraps(method)
    def wrapper(self: "Store", *args: Any, **kwargs: Any) -> Any:
        from chromadb.errors import ChromaError, NotFoundError

        try:
            try:
                return method(self, *args, **kwargs)
            except NotFoundError:
                self.reopen()
                return method(self, *args, **kwargs)
        except ChromaError as e:
            raise self._unreadable(e) from e

    return wrapper  # type: ignore[return-value]


class Store:
    """One Chroma collection, named by the settings that decide what its vectors mean."""

    def __init__(self, settings: Settings, *, create: bool = False) -> None:
        self.settings = settings
        self.paths = IndexPaths.of(settings)
        self.name = self.paths.collection
        self.copy: Path | None = None  # the private copy a read-only store is read through
        try:
            self._open(create)
        except (IndexError_, UsageError):
            raise
        except Exception as e:  # a damaged store: chromadb raises InternalError and others
            if create or settings.chroma_url or not _read_only_failure(e):
                raise self._unreadable(e) from e
            self._open_copy(e)  # read-only in a way `IndexPaths.writable` could not see

    @property
    def read_only(self) -> bool:
        """True when this store is read through a private copy (its folder may not be written)."""
        return self.copy is not None

    def _open_copy(self, cause: BaseException | None = None) -> None:
        try:
            self.copy = snapshot(self.paths.chroma)
        except OSError as e:
            raise IndexError_(f"the index in {self.paths.chroma} is read-only and cannot be copied to read it "
                              f"({e.strerror or e})", hint="set TMPDIR to a folder with free space") from cause
        weakref.finalize(self, shutil.rmtree, self.copy.parent, True)
        try:
            self._open(create=False)
        except (IndexError_, UsageError):
            raise
        except Exception as e:
            raise self._unreadable(e) from e

    def _unreadable(self, e: Exception) -> IndexError_:
        if not self.settings.chroma_url and _read_only_failure(e):
            return read_only_error(self.paths.root, "its Chroma store", "not writable")
        detail = (str(e).splitlines() or [""])[0][:200]
        where = self.settings.chroma_url or str(self.paths.chroma)
        return IndexError_(f"the index in {where} cannot be read ({type(e).__name__}: {detail})",
                           hint="run `rag ingest --rebuild`")

    @classmethod
    def rebuilt(cls, settings: Settings) -> "Store":
        """Return an empty store for these settings, dropping the old collection.

        A local store too damaged to open is moved aside (`chroma.broken-<time>`), not
        deleted, and a new one is created in its place.
        """
        try:
            cls(settings, create=True).drop()
        except IndexError_ as e:
            paths = IndexPaths.of(settings)
            if settings.chroma_url or not paths.writable() or "read-only" in str(e):
                raise
            from chromadb.api.client import SharedSystemClient

            path = paths.chroma
            path.rename(path.with_name(f"chroma.broken-{time.strftime('%Y%m%d-%H%M%S')}"))
            SharedSystemClient.clear_system_cache()  # chromadb caches the open store per path
        return cls(settings, create=True)

    def _open(self, create: bool) -> None:
        settings = self.settings
        if (not create and self.copy is None and not settings.chroma_url and self.paths.chroma.is_dir()
                and not self.paths.writable()):
            self._open_copy()
            return
        local = not settings.chroma_url and self.copy is None  # a private copy has no other opener
        with open_lock(self.paths, create=create) if local else contextlib.nullcontext():
            self.client = _client(settings, self.paths, create=create, copy=self.copy)
            if create:
                self.collection = self.client.get_or_create_collection(
                    self.name,
                    embedding_function=None,
                    configuration={"hnsw": {"space": "cosine", "ef_search": settings.ef_search}},
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
            self._apply_ef_search()

    def _apply_ef_search(self) -> None:
        """Give the collection the settings' HNSW search breadth (a collection built before keeps
        Chroma's default until then). A store that cannot be changed (read-only) keeps its own."""
        try:
            current = (self.collection.configuration_json or {}).get("hnsw", {}).get("ef_search")
            if current != self.settings.ef_search:
                self.collection.modify(configuration={"hnsw": {"ef_search": self.settings.ef_search}})
        except Exception:  # noqa: BLE001 - chromadb raises various types for a read-only store or an old server
            pass

    def reopen(self) -> None:
        """Fetch the collection handle again (another writer in this process may have rebuilt it)."""
        if self.copy is not None:  # the copy is a snapshot: take a new one
            old, self.copy = self.copy, None
            shutil.rmtree(old.parent, ignore_errors=True)
        self._open(create=False)

    # -- writing -----------------------------------------------------------------------------
    def add(self, docs: Mapping[str, Document], chunks: Sequence[Chunk], vectors: np.ndarray,
            n_chunks: Mapping[str, int]) -> None:
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
                metadata=_encode(docs[chunk.doc_id], chunk, n_chunks[chunk.doc_id]),
                start_char_idx=chunk.start,
                end_char_idx=chunk.end,
            )
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=chunk.doc_id)
            nodes.append(node)
        ChromaVectorStore(chroma_collection=self.collection).add(nodes)

    def update_document(self, doc_id: str, *, sources: list[str] | None = None, label: str | None = None,
                        title: str | None = None, n_chunks: int | None = None,
                        meta: Mapping[str, str | None] | None = None) -> None:
        """Change a document's stored metadata on every one of its chunks (other fields are kept).

        `meta` sets optional fields (authors, url, year, venue, external_id); None deletes one.
        """
        fields = _encode_update(sources=sources, label=label, title=title, n_chunks=n_chunks, meta=meta)
        ids = self.collection.get(where={"doc_id": doc_id}, include=[])["ids"]
        if ids and fields:
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
    @_reading
    def count(self) -> int:
        return self.collection.count()

    @_reading
    def scan(self, *, text: bool = False) -> Iterator[StoredChunk]:
        """Yield every stored chunk, in pages (with its text when `text`)."""
        include = ["metadatas", "documents"] if text else ["metadatas"]
        total = self.count()
        for offset in range(0, total, _BATCH):
            page = self.collection.get(include=include, limit=_BATCH, offset=offset)
            n = len(page["ids"])
            texts = page.get("documents") or [None] * n
            metas = page.get("metadatas") or [None] * n
            for cid, body, meta in zip(page["ids"], texts, metas):
                yield _decode(cid, body, meta)

    @_reading
    def documents(self) -> dict[str, StoredDocument]:
        """Every stored document, by id, with the ids of its stored chunks."""
        out: dict[str, StoredDocument] = {}
        for c in self.scan():
            doc = out.get(c.doc_id)
            if doc is None:
                doc = out[c.doc_id] = StoredDocument(
                    id=c.doc_id, label=c.label, title=c.title, sources=c.sources, chunk_ids=[], n_chunks=c.n_chunks,
                    keys_current=c.keys_current, **{key: getattr(c, key) for key in _OPTIONAL})
            doc.chunk_ids.append(c.id)
        return out

    @_reading
    def document_chunks(self, doc_id: str) -> list[StoredChunk]:
        """A document's stored chunks, in order."""
        got = self.collection.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        chunks = [_decode(cid, body, meta) for cid, body, meta in zip(got["ids"], got["documents"], got["metadatas"])]
        return sorted(chunks, key=lambda c: (c.n, c.start))

    def document_text(self, doc_id: str) -> str:
        """Rebuild a document's full text from its chunks (their offsets remove the overlap)."""
        text, end = "", 0
        for c in self.document_chunks(doc_id):
            if not text:
                text, end = c.text, c.end
            elif c.end > end:
                text += c.text[max(0, end - c.start):] if c.start < end else " " + c.text
                end = c.end
        return text

    @_reading
    def query(self, vector: np.ndarray, n: int, *, where: Where | None = None,
              ids: Sequence[str] | None = None) -> list[tuple[StoredChunk, float]]:
        """Nearest chunks with their cosine similarity, best first.

        `ids` limits the search to those chunks (the ones a filter admits, see
        rag.index.catalog); else Chroma applies `where`'s year and venue to its stored
        metadata. Either way every result is checked against `where` here.
        """
        kwargs: dict[str, Any] = {}
        if ids is not None:
            if not ids:
                return []
            kwargs["ids"] = list(ids)
        elif where is not None and (clause := where.chroma_where()):
            kwargs["where"] = clause
        res = self.collection.query(
            query_embeddings=[[float(x) for x in vector]],
            n_results=max(1, n),
            include=["documents", "metadatas", "distances"],
            **kwargs,
        )
        out = [
            (_decode(cid, body, meta), 1.0 - float(dist))
            for cid, body, meta, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0],
                                             res["distances"][0])
        ]
        return [(c, sim) for c, sim in out if where is None or where.matches(year=c.year, venue=c.venue,
                                                                                authors=c.authors)]

    @_reading
    def get(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """The stored chunks among `ids` (ids no longer stored are left out)."""
        if not ids:
            return {}
        res = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        return {cid: _decode(cid, body, meta) for cid, body, meta in zip(res["ids"], res["documents"], res["metadatas"])}
