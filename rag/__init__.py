"""rag: grounded, cited answers over research-paper abstracts.

The public API; the CLI and eval/ use only these names.
"""
from __future__ import annotations

from rag.answering import REFUSAL
from rag.api import answer, ingest, retrieve
from rag.config import Settings, get_settings
from rag.errors import RagError
from rag.index import Index
from rag.types import Answer, Citation, Document, Hit, IngestReport

__version__ = "0.1.0"

__all__ = [
    "answer",
    "retrieve",
    "ingest",
    "Index",
    "Answer",
    "Citation",
    "Hit",
    "Document",
    "IngestReport",
    "Settings",
    "get_settings",
    "RagError",
    "REFUSAL",
]
