"""Ingest: read the corpus, embed what is new, drop what disappeared, rebuild the lexical index.

Safe to interrupt and re-run: chunk ids are deterministic (doc hash + chunk number), only
chunks missing from the store are embedded, and the lexical index is rebuilt from the
store's contents at the end, so a re-run always converges to one copy of every document.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from rag.chunk import chunk_document, make_splitter
from rag.clean import clean
from rag.config import Settings, get_settings
from rag.corpus import read_corpus
from rag.embed import Embedder, bulk_embedder, get_embedder
from rag.embed_cache import cache_for, embed_with_cache
from rag.errors import BusyError, IndexError_
from rag.store import Store, index_root, lexical_dir, make_dir
from rag.types import Chunk, IngestReport
from rag import lexical

# Progress callback: (stage, done, total).
Progress = Callable[[str, int, int], None]
EMBED_BATCH = 8


@contextmanager
def ingest_lock(settings: Settings, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the index folder for one ingest at a time."""
    root = make_dir(index_root(settings))
    try:
        fh = open(root / "ingest.lock", "w")
    except OSError as e:
        raise IndexError_(f"cannot write the lock file in {root}: {e.strerror}",
                          hint="set RAG_INDEX_DIR to a writable folder") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise BusyError(f"another `rag ingest` is running on {root}") from None
            fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(str(os.getpid()))
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _under(path: str, roots: Sequence[Path]) -> bool:
    p = Path(path)
    return any(p == r or r in p.parents for r in roots)


def _completed(stored: dict, n_chunks: dict[str, int]) -> int:
    """Documents counted as added that were already stored (half-written by a crashed run)."""
    return sum(1 for did in n_chunks if did in stored)


def _lexical_matches(stored: dict, gone: list[str], settings: Settings) -> bool:
    """True when the saved BM25 index covers exactly the chunk ids the store holds now.

    Called only when this run added nothing, so the store holds `stored` minus `gone`. With a
    Chroma server another client may have changed the collection: comparing ids (not only the
    count) catches that.
    """
    ids = lexical.stored_ids(lexical_dir(settings))
    if ids is None:
        return False
    dropped = set(gone)
    want = {cid for did, entry in stored.items() if did not in dropped for cid in entry["chunk_ids"]}
    return len(ids) == len(want) and set(ids) == want


def refresh_lexical(store: Store, settings: Settings, *, wait: bool = True) -> None:
    """Rebuild the BM25 index from the store when it is missing or its chunk count differs.

    For readers (`rag ask`/`search`): with a Chroma server the collection may have been
    built or changed by another machine, and the lexical index is always local.
    """
    with ingest_lock(settings, wait=wait):
        if lexical.stored_count(lexical_dir(settings)) != store.count():  # not fixed meanwhile
            rebuild_lexical(store, settings)


def rebuild_lexical(store: Store, settings: Settings) -> int:
    """Rebuild the BM25 index from every chunk in the store; return the chunk count."""
    ids, texts = [], []
    for cid, text, meta in store.scan(include=("documents", "metadatas")):
        ids.append(cid)
        texts.append(((meta.get("title") or "") + " " + (text or "")).strip())
    lexical.build(ids, texts, lexical_dir(settings))
    return len(ids)


def ingest(
    paths: Sequence[str | Path] | None = None,
    *,
    settings: Settings | None = None,
    rebuild: bool = False,
    progress: Progress | None = None,
    wait: bool = True,
    embedder: Embedder | None = None,
) -> IngestReport:
    """Bring the index in line with the files under `paths` (default: the data folder).

    Passage vectors come from the embedding cache when the same model already embedded the
    same text (in any run, for any collection in this index folder); only misses reach the
    embedder. `embedder` replaces the one named by the settings (tests pass a counting one).
    """
    settings = settings or get_settings()
    started = time.perf_counter()
    roots = [Path(p).expanduser().resolve() for p in (paths or [settings.data_dir])]
    report = IngestReport()
    progress = progress or (lambda stage, done, total: None)

    with ingest_lock(settings, wait=wait):
        progress("parse", 0, 1)
        corpus = read_corpus(roots)
        report.skipped = corpus.problems
        progress("parse", 1, 1)

        store = Store.rebuilt(settings) if rebuild else Store(settings, create=True)
        stored = store.documents()

        # Sources: a stored file under the scanned roots that produced nothing now, or any
        # stored file that no longer exists, is gone; other files outside the roots are kept.
        # With a Chroma server, files named by other clients live on other machines: only
        # files under the scanned roots can be judged gone.
        exists = (lambda s: True) if settings.chroma_url else (lambda s: Path(s).exists())
        wanted = {d.id: d for d in corpus.documents}
        for did, doc in wanted.items():
            old = stored.get(did, {}).get("sources", [])
            keep = [s for s in old if not _under(s, roots) and exists(s)]
            doc.sources = sorted(set(keep) | set(doc.sources))

        to_embed: list[Chunk] = []
        n_chunks: dict[str, int] = {}
        splitter = None
        for did, doc in wanted.items():
            entry = stored.get(did)
            if entry is not None and entry["n_chunks"] == len(set(entry["chunk_ids"])):
                changed = {}
                if sorted(entry["sources"]) != doc.sources:
                    changed["sources"] = json.dumps(doc.sources)
                if entry["label"] != doc.label:  # a better labeller, or a title added to the record
                    changed.update(label=doc.label, title=doc.title or "")
                if changed:
                    store.update_metadata(did, changed)
                    report.updated += 1
                else:
                    report.unchanged += 1
                continue
            if splitter is None:  # only new or half-written documents need the splitter
                embedder = embedder or get_embedder(settings)
                splitter = make_splitter(settings, embedder.count_tokens)
            chunks = chunk_document(doc, splitter)
            have = set(entry["chunk_ids"]) if entry else set()
            missing = [c for c in chunks if c.id not in have]
            if entry is not None and not missing:  # complete, only its chunk count was unknown
                store.update_metadata(did, {"n_chunks": len(chunks), "sources": json.dumps(doc.sources)})
                report.unchanged += 1
                continue
            n_chunks[did] = len(chunks)
            to_embed.extend(missing)
            report.added += 1  # new, or completing what an interrupted run left

        total = len(to_embed)
        progress("embed", 0, total)
        cache = engine = None
        batch_size = EMBED_BATCH
        if total:
            engine = embedder or bulk_embedder(settings)
            batch_size = EMBED_BATCH * max(1, getattr(engine, "workers", 1))
            cache = cache_for(index_root(settings), engine.name)
        try:
            for i in range(0, total, batch_size):
                batch = to_embed[i : i + batch_size]
                texts = [clean(c.text) for c in batch]
                vectors, fresh = embed_with_cache(texts, engine.embed_passages, cache)
                store.add(wanted, batch, vectors, n_chunks)
                report.chunks_embedded += len(fresh)
                report.chunks_cached += len(batch) - len(fresh)
                report.tokens_embedded += sum(engine.count_tokens(texts[j]) for j in fresh)
                progress("embed", min(i + batch_size, total), total)
        finally:
            if cache is not None:
                cache.close()
            if engine is not None and engine is not embedder and hasattr(engine, "close"):
                engine.close()  # a process pool of our own

        gone = []
        for did, entry in stored.items():
            if did in wanted:
                continue
            left = [s for s in entry["sources"] if not _under(s, roots) and exists(s)]
            if left:
                if left != entry["sources"]:
                    store.update_metadata(did, {"sources": json.dumps(left)})
                    report.updated += 1
            else:
                gone.append(did)
        store.delete_docs(gone)
        report.removed = len(gone)

        progress("lexical", 0, 1)
        if report.added or report.removed or report.updated or not _lexical_matches(stored, gone, settings):
            rebuild_lexical(store, settings)
        progress("lexical", 1, 1)
        report.documents = len(stored) + report.added - report.removed - _completed(stored, n_chunks)
    from rag.retrieve import forget_retrievers

    forget_retrievers()  # retrievers opened before this ingest hold the old BM25 index
    report.seconds = time.perf_counter() - started
    return report
