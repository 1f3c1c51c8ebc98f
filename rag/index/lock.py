"""The index folder's locks: one ingest at a time (`ingest_lock`), one Chroma opener at a time (`open_lock`)."""
from __future__ import annotations

import errno
import fcntl
import os
from contextlib import contextmanager
from typing import Iterator

from rag.errors import BusyError, IndexError_
from rag.index.paths import OPEN_LOCK_FILE, IndexPaths, make_dir, read_only_error


@contextmanager
def ingest_lock(paths: IndexPaths, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the index folder; `wait=False` raises BusyError if taken."""
    paths.check_root()
    make_dir(paths.root)
    try:
        fh = open(paths.lock, "w")
    except PermissionError as e:
        raise read_only_error(paths.root, f"its lock file {paths.lock.name}", e.strerror or str(e)) from None
    except OSError as e:
        if e.errno == errno.EROFS:
            raise read_only_error(paths.root, f"its lock file {paths.lock.name}", e.strerror) from None
        raise IndexError_(f"cannot write the lock file in {paths.root}: {e.strerror}",
                          hint="set RAG_INDEX_DIR to a writable folder") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise BusyError(f"another `rag ingest` is running on {paths.root}") from None
            fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(str(os.getpid()))
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def open_lock(paths: IndexPaths, *, create: bool = False) -> Iterator[None]:
    """Hold an exclusive lock while opening the folder's Chroma store, when the folder may be written.

    chromadb's embedded client creates its tables (migrations) on open; two processes opening a new
    store at once both try, and one fails ("table collections already exists", "database is
    locked"). The lock lasts only while a client opens, so readers wait a moment at most. A folder
    this process may not write holds no lock file: its store is read through a private copy, which
    no other process opens. `create` makes the folder first; otherwise a missing folder is left
    missing (the opener then reports that there is no index).
    """
    if create:
        paths.check_root()
        make_dir(paths.root)
    fh = None
    try:
        fh = open(paths.root / OPEN_LOCK_FILE, "w")
        fcntl.flock(fh, fcntl.LOCK_EX)
    except OSError:  # no lock file (a folder this process may not write) or no locks (some network mounts)
        if fh is not None:
            fh.close()
            fh = None
    try:
        yield
    finally:
        if fh is not None:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()
