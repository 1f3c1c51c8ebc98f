"""Answer a question from an `Index`: retrieve, then compose a cited answer offline or with an LLM."""
from __future__ import annotations

import time
from typing import Callable

from rag.answering.offline import OfflineResult, compose
from rag.answering.refusal import REFUSAL
from rag.config import Settings
from rag.index import Index
from rag.index.filters import WhereLike
from rag.index.search import check_query
from rag.llm import ChatClient, OpenAIChatClient
from rag.types import Answer, Citation, Hit


def resolve_mode(settings: Settings) -> str:
    """Return "llm" or "offline" from the settings; `auto` picks llm only when one is configured."""
    mode = settings.answer_mode
    if mode == "auto":
        mode = "llm" if settings.llm_configured else "offline"
    return mode


def cite(hits: list[Hit], cited: list[int], chunks: dict[int, tuple[str, str]] | None = None) -> list[Citation]:
    """Turn hit indices into numbered citations; n is the hit's 1-based position in `sources`.

    `chunks` names, for a hit, the chunk actually quoted when it is not the retrieved one
    (a long abstract): the citation then carries that chunk's id and text.
    """
    out = []
    for i in sorted(set(cited)):
        if not 0 <= i < len(hits):
            continue
        chunk_id, text = (chunks or {}).get(i, (hits[i].chunk_id, hits[i].text))
        out.append(Citation.from_hit(i + 1, hits[i], chunk_id=chunk_id, text=text))
    return out


def answer_from(
    index: Index,
    question: str,
    *,
    k: int | None = None,
    mode: str | None = None,
    llm: ChatClient | None = None,
    on_token: Callable[[str], None] | None = None,
    where: WhereLike = None,
) -> Answer:
    """Answer `question` from `index` (only documents passing `where`), citing every sentence.

    In LLM mode, `llm` replaces the OpenAI-compatible client (tests pass fakes) and
    `on_token` receives the first reply as it streams.
    """
    settings = index.settings if mode is None else index.settings.with_overrides(answer_mode=mode)
    question = check_query(question)
    chosen = resolve_mode(settings)
    client = llm
    if chosen == "llm" and client is None:
        client = OpenAIChatClient(settings)  # checks the LLM settings before any retrieval work
    started = time.perf_counter()
    retrieval = index.retrieve(question, k=k, where=where)
    hits = retrieval.hits
    t_retrieved = time.perf_counter()
    # A question naming a venue of the corpus was searched among its papers, as the rest of its words.
    scoped = [f"searched only the papers of {retrieval.scope.describe()}, as the question names it"] \
        if retrieval.scope is not None else []
    asked = retrieval.query or question

    if chosen == "llm":
        answer = _answer_llm(question, hits, settings, client=client, on_token=on_token,
                             timings=dict(retrieval.timings_ms), started=started, embedder=index.embedder)
        answer.warnings = scoped + list(answer.warnings)
        return answer
    # A long abstract is several chunks: the answer may sit in one that was not retrieved.
    passages = {i: [(c.id, c.text) for c in index.document_chunks(h.doc_id)]
                for i, h in enumerate(hits[: settings.offline.full_docs]) if h.n_chunks > 1}
    qvec = retrieval.query_vector

    def similarity(sentences: list[str], text: str):
        vector = qvec if text == asked else index.embedder.embed_query(text)
        return index.sentence_similarities(vector, sentences)

    qvec2 = retrieval.second_vector

    def second_similarity(sentences: list[str], text: str):
        from rag.index.ensemble import second_model

        vector = qvec2 if text == asked else second_model().embed([text])[0]
        return index.second_similarities(vector, sentences)

    if retrieval.scope is not None and not hits:
        result = OfflineResult(f"{REFUSAL} No indexed abstract matches {retrieval.scope.describe()}.", [], True, 0.0)
    else:
        result = compose(asked, hits, similarity=similarity if qvec is not None else None, passages=passages,
                         word_vectors=index.word_vectors if qvec2 is not None else None,
                         named=retrieval.named, unknown_names=retrieval.unknown_names, quoted=retrieval.quoted,
                         thresholds=settings.offline,
                         second_similarity=second_similarity if qvec2 is not None else None,
                         closeness=_agreed_closeness(retrieval.second_scores, retrieval.paraphrase_scores) or None)
    texts = {cid: text for chunks in passages.values() for cid, text in chunks}
    quoted = {i: (cid, text or texts[cid]) for i, (cid, text) in result.quoted_chunks.items() if text or cid in texts}
    done = time.perf_counter()
    timings = {**retrieval.timings_ms, "compose": (done - t_retrieved) * 1000, "total": (done - started) * 1000}
    return Answer(
        question=question,
        text=result.text,
        citations=[] if result.refused else cite(hits, result.cited, quoted),
        refused=result.refused,
        mode="offline",
        sources=hits,
        raw_text=result.text,
        warnings=scoped,
        timings_ms={key: round(v, 2) for key, v in timings.items()},
        settings_hash=settings.hash(),
    )


def _answer_llm(
    question: str,
    hits: list[Hit],
    settings: Settings,
    *,
    client: ChatClient,
    on_token: Callable[[str], None] | None,
    timings: dict[str, float],
    started: float,
    embedder=None,
) -> Answer:
    """Compose the answer with an LLM and check its citations (see rag.answering.generate)."""
    from rag.answering.generate import answer_hash, generate
    from rag.answering.prompt import load_prompts
    from rag.answering.support import embedder_similarity

    prompts = load_prompts()
    similarity = embedder_similarity(embedder) if embedder is not None else None
    result = generate(question, hits, client=client, prompts=prompts, on_token=on_token, settings=settings,
                      similarity=similarity)
    timings = {**timings, **result.timings_ms, "total": (time.perf_counter() - started) * 1000}
    return Answer(
        question=question,
        text=result.text,
        citations=cite(hits, result.cited),
        refused=result.refused,
        mode="llm",
        sources=hits,
        raw_text=result.raw_text,
        warnings=result.warnings,
        timings_ms={key: round(v, 2) for key, v in timings.items()},
        settings_hash=answer_hash(settings, prompts),
        model=result.model,
        usage=result.usage,
        repair=result.repair,
        attempts=result.attempts,
    )


def _agreed_closeness(*per_model: list[float | None]) -> list[float | None]:
    """Per hit, the lowest of the English models' question-abstract cosines (the models that ran).

    Quoting a first hit no sentence of which restates the question is justified only when the
    abstract as a whole is close to it; both sentence-transformers models must find it so (they
    share a cosine scale), since one model alone is sometimes close to a paper on another topic."""
    ran = [scores for scores in per_model if scores]
    if not ran:
        return []
    return [None if any(s is None for s in col) else min(col) for col in zip(*ran)]

