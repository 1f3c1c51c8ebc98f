"""The ingest lock: one writer per index folder; readers never take it."""
from __future__ import annotations

import errno
import fcntl
import os
from contextlib import contextmanager
from typing import Iterator

from rag.errors import BusyError, IndexError_
from rag.index.paths import IndexPaths, make_dir, read_only_error


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
