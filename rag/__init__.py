"""rag: grounded, cited answers over research-paper abstracts.

The public API; the CLI and eval/ use only these names.
"""
from __future__ import annotations

from rag.answer import answer
from rag.config import Settings, get_settings
from rag.errors import RagError
from rag.ingest import ingest
from rag.offline import REFUSAL
from rag.retrieve import retrieve
from rag.types import Answer, Citation, Document, Hit, IngestReport

__version__ = "0.1.0"

__all__ = [
    "answer",
    "retrieve",
    "ingest",
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
