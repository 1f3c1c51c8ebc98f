"""The index stage: chunk, embed and store abstracts; search them (see `Index`)."""
from __future__ import annotations

from rag.index.index import Index
from rag.index.records import StoredChunk, StoredDocument
from rag.index.search import Retrieval

__all__ = ["Index", "Retrieval", "StoredChunk", "StoredDocument"]
