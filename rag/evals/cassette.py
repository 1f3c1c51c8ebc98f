"""Eval cassettes for LLM mode: answers recorded once with a real model, replayed without a key.

A cassette is keyed by the settings hash, the prompt-template digest and the model, so a changed
prompt never replays stale answers: it finds no cassette and says how to re-record.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import rag
from rag.evals.runner import RERECORD_COMMAND, EvalUnavailable, prompt_hash
from rag.types import Answer, Citation, Hit

DEFAULT_CASSETTES = Path("eval") / "cassettes"


def cassette_key(settings: rag.Settings) -> str:
    """Hash of what decides an LLM answer: settings, prompt texts and model (not where the server is).

    The `offline` group (the extractive answerer's thresholds) is left out: the LLM path never
    reads it, so tuning the offline answerer does not void the recorded LLM answers. A replay
    still checks that retrieval gives the recorded sources (`replayer`)."""
    view = settings.model_copy(update={"openai_base_url": None, "openai_api_key": None})
    spec = {"settings": view.hash(without=("offline",)), "prompts": prompt_hash("llm"), "model": settings.llm_model}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def cassette_path(settings: rag.Settings, directory: str | Path = DEFAULT_CASSETTES) -> Path:
    """Where the cassette for these settings lives."""
    return Path(directory) / f"llm-{cassette_key(settings)}.json"


def answer_from_dict(d: dict[str, Any]) -> Answer:
    """Rebuild an Answer from its `to_dict()` form."""
    return Answer(
        question=d["question"], text=d["answer"], refused=d["refused"], mode=d["mode"],
        citations=[Citation(**c) for c in d.get("citations", [])],
        sources=[Hit(**h) for h in d.get("sources", [])],
        raw_text=d.get("raw_text", ""), warnings=list(d.get("warnings", [])),
        timings_ms=dict(d.get("timings_ms", {})), settings_hash=d.get("settings_hash", ""),
        model=d.get("model"), usage=dict(d.get("usage", {})), repair=d.get("repair"),
        attempts=list(d.get("attempts", [])),
    )


class Recorder:
    """Wrap an answer function and keep every answer, to be saved as a cassette."""

    def __init__(self, answer_fn=None) -> None:
        self.answer_fn = answer_fn or rag.answer
        self.answers: dict[str, dict[str, Any]] = {}

    def __call__(self, question: str, *, k: int, settings: rag.Settings) -> Answer:
        ans = self.answer_fn(question, k=k, settings=settings)
        self.answers[f"{k}\t{question}"] = ans.to_dict()
        return ans

    def save(self, path: str | Path, settings: rag.Settings) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        data = {"key": cassette_key(settings), "model": settings.llm_model, "answers": self.answers}
        p.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return p


def replayer(path: str | Path, *, retrieve=None):
    """Return an answer function that replays a cassette; a missing answer stops the run in one line.

    `retrieve(question, k, settings) -> doc ids`: when given, each question is retrieved again and
    must still find the sources the recorded answer was given. The cassette key covers settings,
    prompts and model but not the code: a retrieval change that keeps the settings would otherwise
    replay answers written from other sources. The check is as strict as the answer needs and no
    stricter: every source the answer cites keeps its number (its [n] still means that paper), and
    every recorded source is still among the first 2k retrieved. Uncited sources may swap places:
    on another CPU the embedders' floating-point sums differ in the last bits, and candidates whose
    fused scores are that close reorder (CI on another machine saw ranks 4 and 5 of one question
    replaced by ranks 6 and 7, fused scores 0.0527/0.0526 vs 0.0525/0.0525).
    """
    p = Path(path)
    if not p.is_file():
        raise EvalUnavailable(f"LLM mode: no LLM configured and no cassette {p} for these settings and prompts",
                              hint=f"re-record with: {RERECORD_COMMAND}")
    try:
        answers = json.loads(p.read_text(encoding="utf-8"))["answers"]
    except (OSError, ValueError, KeyError) as e:
        raise EvalUnavailable(f"cannot read cassette {p}: {e}", hint=f"re-record with: {RERECORD_COMMAND}") from None

    def replay(question: str, *, k: int, settings: rag.Settings) -> Answer:
        d = answers.get(f"{k}\t{question}")
        if d is None:
            raise EvalUnavailable(f"cassette {p} has no answer for {question!r} at k={k}",
                                  hint=f"re-record with: {RERECORD_COMMAND}")
        answer = answer_from_dict(d)
        if retrieve is not None:
            recorded = [h.doc_id for h in answer.sources]
            now = list(retrieve(question, 2 * k, settings))[: 2 * k]
            cited = {c.doc_id for c in answer.citations}
            moved = [doc for i, doc in enumerate(recorded) if doc in cited and (i >= len(now) or now[i] != doc)]
            lost = [doc for doc in recorded if doc not in now]
            if moved or lost:
                raise EvalUnavailable(
                    f"cassette {p} was recorded with other sources for {question!r} (retrieval changed since: "
                    f"now {now[:k]}, recorded {recorded}; cited sources moved: {moved}, "
                    f"sources no longer in the first {2 * k}: {lost})", hint=f"re-record with: {RERECORD_COMMAND}")
        return answer

    return replay
