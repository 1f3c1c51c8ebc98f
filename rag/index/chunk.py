"""Split documents into chunks the embedding model reads whole.

llama-index's sentence-aware splitter, measured in the embedding model's own tokens so a
chunk is never truncated by the model.
"""
from __future__ import annotations

from typing import Callable

from rag.offline_env import offline_llama_index
from rag.types import Chunk, Document


def make_splitter(chunk_size: int, chunk_overlap: int, count_tokens: Callable[[str], int]):
    """Build the llama-index SentenceSplitter sized in the embedder's tokens.

    `chunk_size` is `Settings.effective_chunk_size()`: capped at the model's window.
    """
    offline_llama_index()
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        # The splitter only needs a length; counting with the model's tokenizer keeps every
        # chunk under its limit (counts include special tokens, so they err on the safe side).
        tokenizer=lambda text: range(count_tokens(text)),
        include_prev_next_rel=False,
    )


def chunk_id(doc_id: str, n: int) -> str:
    """The id of a document's n-th chunk."""
    return f"{doc_id}:{n}"


def doc_of(chunk_id: str) -> str:
    """The id of the document a chunk id belongs to (document ids hold no ':')."""
    return chunk_id.split(":", 1)[0]


def chunk_document(doc: Document, splitter) -> list[Chunk]:
    """Split one document; offsets locate each chunk in the original text."""
    pieces = splitter.split_text(doc.text) or [doc.text]
    chunks: list[Chunk] = []
    cursor = 0
    for n, piece in enumerate(pieces):
        start = doc.text.find(piece, cursor if n == 0 else max(0, chunks[-1].start + 1))
        if start < 0:  # the splitter normalised whitespace; fall back to the best effort
            start = doc.text.find(piece[:40], cursor)
            start = max(start, 0)
        end = start + len(piece)
        cursor = start
        chunks.append(Chunk(id=chunk_id(doc.id, n), doc_id=doc.id, n=n, text=piece, start=start, end=end))
    return chunks
