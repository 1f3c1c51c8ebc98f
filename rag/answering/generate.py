"""Answer with an LLM: prompt with numbered sources, check the citations, repair, then enforce.

The transport (retries, errors, redaction) is `rag.llm`; this module decides what is asked
and whether the reply is a valid, cited answer. Enforcement, in order:

1. the reply is checked (`rag.answering.check`): invented numbers are removed; uncited,
   marker-only and unsupported (cited, but the cited source lacks what it adds) sentences are
   flagged; a refusal (or a reply that only says the sources do not tell) is the refusal;
2. an uncited sentence whose words one source holds (`llm_attach_min_overlap` of its content
   words; for another script, the embedder's similarity), or a cited one whose added words only
   another source holds, is cited to that source, no call needed;
3. what is left (sentences no source holds, marker-only sentences, an empty reply) is sent back
   in one repair call naming each sentence and what it lacks;
4. if the repair does not fix it, a deterministic fallback cites what it can (step 2) and drops
   the rest, with a warning each; an answer left with no claim is the refusal.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from rag.answering.check import CitationCheck, added_words, check_citations, clip, held_share
from rag.answering.prompt import Prompts, build_messages, build_repair
from rag.answering.refusal import REFUSAL
from rag.answering.support import Similarity, best_similarity, crosses_languages, held_across_languages, support
from rag.config import Settings
from rag.index.names import extract_names
from rag.llm import CUT_SHORT, ChatClient, Completion, TokenSink
from rag.markers import find_markers, split_claims, strip_markers
from rag.types import Hit

_MOVED = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])(?:\s*\[[^\]]*\])+\s*$")
_END = re.compile(r"^(.*?)([.!?;:\u3002\uff01\uff1f]*)$", re.S)


@dataclass
class LLMResult:
    """What the model said, validated: the pieces `answer()` turns into an `Answer`."""

    text: str
    raw_text: str
    cited: list[int]  # 0-based hit indices
    refused: bool
    model: str | None
    warnings: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    repair: dict[str, Any] | None = None  # why a repair call was made, and the first reply
    attempts: list[dict[str, Any]] = field(default_factory=list)  # every HTTP request, by call


def answer_hash(settings: Settings, prompts: Prompts) -> str:
    """Hash of the retrieval and model settings plus the prompt texts."""
    spec = {"settings": settings.hash(), "prompts": prompts.digest(), "model": settings.llm_model}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _add_usage(total: dict[str, int], done: Completion) -> None:
    for key, value in done.usage.items():
        total[key] = total.get(key, 0) + value
    total["requests"] = total.get("requests", 0) + max(1, len(done.tries))


def _attempts(call: str, done: Completion) -> list[dict[str, Any]]:
    return [{"call": call, **t} for t in done.tries] or [{"call": call, "attempt": 1, "outcome": "ok",
                                                          "ms": round(done.latency_ms, 2)}]


@dataclass
class _Attacher:
    """Find the source(s) that hold an uncited sentence (the deterministic citation)."""

    hits: Sequence[Hit]
    min_overlap: float
    min_similarity: float
    similarity: Similarity | None = None

    def sources_for(self, sentence: str) -> list[int]:
        """1-based numbers of the source (or two) holding the sentence, or [] when none does."""
        if not self.hits:
            return []
        texts = [h.text for h in self.hits]
        if crosses_languages(sentence, " ".join(texts)):
            if self.similarity is None:
                return []
            cos = [best_similarity(sentence, t, self.similarity) for t in texts]
            best = max(range(len(cos)), key=lambda i: (cos[i], -i))
            others = texts[:best] + texts[best + 1:]
            held = held_across_languages(sentence, [texts[best]], others, self.similarity, self.min_similarity)
            return [best + 1] if held else []
        return self._best(self._only_naming(sentence, [support(sentence, [t]) for t in texts]), sentence)

    def holders(self, sentence: str, question: str, labels: Sequence[str]) -> list[int]:
        """1-based numbers of the source (or two) holding the words a cited sentence adds."""
        words = added_words(sentence, question, labels)
        if not self.hits or not words:
            return []
        scores = self._only_naming(sentence, [held_share(words, [h.text]) for h in self.hits])
        return self._best(scores, sentence, words)

    def _only_naming(self, sentence: str, scores: list[float]) -> list[float]:
        """Zero the scores of sources that do not mention a paper or method the sentence names.

        "XVerse was trained on a single GPU" is about XVerse: a source that never mentions XVerse
        cannot state it, however many of its other words it shares. Only names in a source's label
        or title count as paper names; terms many papers use ("GPU", "LLM") do not.
        """
        texts = [f"{h.label} {h.title or ''} {h.text}".casefold() for h in self.hits]
        titles = " ".join(f"{h.label} {h.title or ''}" for h in self.hits).casefold()
        # Paper names: the sentence's names that label a source ("XVerse"), not shared terms ("GPU").
        names = [n.casefold() for n in extract_names(strip_markers(sentence)) if n.casefold() in titles]
        if not names:
            return scores
        return [s if any(n in t for n in names) else 0.0 for s, t in zip(scores, texts)]

    def _best(self, scores: list[float], sentence: str, words: list[str] | None = None) -> list[int]:
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        if scores[best] >= self.min_overlap:
            return [best + 1]
        # A sentence about two papers: the two best sources together.
        # (A source scoring 0 adds no word to the pair, or was ruled out by `_only_naming`.)
        second = max((i for i in range(len(scores)) if i != best and scores[i] > 0), key=lambda i: (scores[i], -i),
                     default=None)
        if second is None:
            return []
        pair = [self.hits[best].text, self.hits[second].text]
        together = held_share(words, pair) if words is not None else support(sentence, pair)
        return sorted([best + 1, second + 1]) if together >= self.min_overlap else []


def _cite_sentence(sentence: str, numbers: list[int]) -> str:
    """Put markers at the end of a sentence, before its closing punctuation."""
    m = _END.match(sentence.rstrip())
    body, stop = (m.group(1), m.group(2)) if m else (sentence, "")
    return f"{body.rstrip()} {''.join(f'[{n}]' for n in numbers)}{stop}"


def _replace(text: str, old: str, new: str) -> str:
    """Replace a claim in the text; a claim `split_claims` joined with a space is found without it."""
    if old in text:
        return text.replace(old, new, 1)
    squeezed = re.sub(r"\s+(?=\[)", "", old)
    return text.replace(squeezed, new, 1) if squeezed in text else text


def _tidy(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line).strip()


def _attach(check: CitationCheck, attacher: _Attacher, question: str, labels: Sequence[str]) -> tuple[str, list[str]]:
    """Cite each uncited or wrongly cited sentence to the source that holds it; one note each."""
    text, notes = check.text, []
    for sentence in check.uncited:
        numbers = attacher.sources_for(sentence)
        if numbers:
            text = _replace(text, sentence, _cite_sentence(sentence, numbers))
            notes.append(f'citation check: cited {_markers(numbers)} for an uncited sentence '
                         f'its source states: "{clip(sentence, 80)}"')
    for sentence in check.unsupported:
        numbers = attacher.holders(sentence, question, labels)
        if numbers:
            bare = " ".join(strip_markers(sentence).split())
            text = _replace(text, sentence, _cite_sentence(bare, numbers))
            notes.append(f'citation check: cited {_markers(numbers)} instead of {_markers(find_markers(sentence))} '
                         f'for a sentence only that source states: "{clip(bare, 80)}"')
    return text, notes


def _markers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in dict.fromkeys(numbers))


def _drop(check: CitationCheck) -> tuple[str, list[str]]:
    """Remove uncited, unsupported and marker-only sentences; return the text and one warning each."""
    notes = [f'citation check: dropped a sentence no source states: "{clip(x, 80)}"' for x in check.uncited]
    notes += [f'citation check: dropped a sentence no source states, whatever it cites: "{clip(x, 80)}"'
              for x in check.unsupported]
    notes += [f'citation check: dropped a sentence whose citation stood in for the answer: "{clip(x, 80)}"'
              for x in check.marker_only]
    return _remove_claims(check.text, {*check.uncited, *check.unsupported, *check.marker_only}), notes


def _remove_claims(text: str, dropped: set[str]) -> str:
    """The text without the given claims (as `split_claims` cuts them), line by line.

    Markers after a dropped sentence's closing punctuation opened the next sentence ("... is [1].
    [1] states that ..."): they stay with it.
    """
    lines = []
    for line in text.splitlines():
        claims = [c.text for c in split_claims(line)]
        if not dropped.intersection(claims):
            lines.append(line)
            continue
        kept, carry = [], ""
        for i, claim in enumerate(claims):
            if claim in dropped:
                moved = _MOVED.search(claim)
                carry = moved.group(0).strip() if moved and i < len(claims) - 1 else ""
                continue
            kept.append(f"{carry} {claim}".strip() if carry else claim)
            carry = ""
        lines.append(" ".join(kept))
    return _tidy("\n".join(lines))


def _repair_problems(check: CitationCheck, question: str, labels: Sequence[str], hits: Sequence[Hit]) -> list[str]:
    """One line per sentence the model must fix, naming what it lacks."""
    out = []
    if check.empty:
        out.append("the answer was empty: answer the question with [n] citations")
    for sentence in check.uncited:
        out.append(f'"{clip(sentence)}" has no citation: end it with the [n] of the source that states it, '
                   "or delete it if no source states it")
    for sentence in check.marker_only:
        where = ", ".join(f"[{n}]" for n in dict.fromkeys(find_markers(sentence))) or "a source"
        out.append(f'"{clip(sentence)}" only points at {where} instead of answering: write in words what {where} '
                   f"says that answers the question, then cite it; if no source says it, reply exactly: {REFUSAL}")
    for sentence in check.unsupported:
        cited = [n for n in dict.fromkeys(find_markers(sentence)) if 1 <= n <= len(hits)]
        missing = [w for w in dict.fromkeys(added_words(sentence, question, labels))
                   if held_share([w], [hits[n - 1].text for n in cited]) == 0]
        what = ", ".join(f'"{w}"' for w in missing[:4]) or "it"
        out.append(f'"{clip(sentence)}" cites {_markers(cited)}, but {_markers(cited)} does not say {what}: cite the '
                   f"source that states it, or delete the sentence; if no source says it, reply exactly: {REFUSAL}")
    return out


def generate(
    question: str,
    hits: list[Hit],
    *,
    client: ChatClient,
    prompts: Prompts,
    on_token: TokenSink | None = None,
    settings: Settings | None = None,
    similarity: Similarity | None = None,
) -> LLMResult:
    """Ask the model about `hits`, enforce citations, and make one repair call if needed.

    Only the first call is streamed to `on_token`; the repair reply replaces it afterwards.
    `similarity` (the embedder's) measures sentences in another language than the sources.
    """
    settings = settings or Settings()
    if not hits:
        return LLMResult(
            text=REFUSAL, raw_text="", cited=[], refused=True, model=client.model,
            warnings=["no sources were retrieved, so the LLM was not asked"],
        )
    k = len(hits)
    labels = [h.label or h.title for h in hits]
    attacher = _Attacher(hits, settings.llm_attach_min_overlap, settings.llm_attach_min_similarity, similarity)

    texts = [h.text for h in hits]

    def check(text: str) -> CitationCheck:
        return check_citations(text, k, question=question, labels=labels, sources=texts,
                               min_held=settings.llm_attach_min_overlap)

    messages = build_messages(question, hits, prompts, budget=settings.llm_context_tokens, similarity=similarity)
    first: Completion = client.chat(messages, on_token=on_token)
    usage: dict[str, int] = {}
    _add_usage(usage, first)
    attempts = _attempts("answer", first)
    timings = {"llm": round(first.latency_ms, 2)}
    final, final_check = first, check(first.text)
    warnings = final_check.marker_problems()
    repair = None

    if not final_check.refused:
        text, notes = _attach(final_check, attacher, question, labels)
        if notes:
            final_check = check(text)
        warnings += notes
        if final_check.needs_model:
            problems = _repair_problems(final_check, question, labels, hits)
            follow_up = messages + [
                {"role": "assistant", "content": first.text},
                {"role": "user", "content": build_repair(problems, k, prompts)},
            ]
            repaired = client.chat(follow_up)
            _add_usage(usage, repaired)
            attempts += _attempts("repair", repaired)
            timings["llm_repair"] = round(repaired.latency_ms, 2)
            r_check = check(repaired.text)
            r_notes: list[str] = []
            if not r_check.refused:
                r_text, r_notes = _attach(r_check, attacher, question, labels)
                if r_notes:
                    r_check = check(r_text)
            # A refusal replaces the answer only when the answer stated nothing; an unchanged or
            # worse reply leaves the first one in place.
            if r_check.refused:
                use = not _states_anything(final_check)
            else:
                use = repaired.text.strip() != first.text.strip() and _weight(r_check) <= _weight(final_check)
            if use:
                final, final_check = repaired, r_check
                warnings = r_check.marker_problems() + r_notes
            repair = {"problems": problems, "raw_text": first.text,
                      "fixed": use and not final_check.needs_model}
        if final_check.needs_model and not final_check.refused:
            text, dropped = _drop(final_check)
            warnings += dropped
            final_check = check(text)
            if not _states_anything(final_check):
                warnings.append("citation check: no cited claim was left, so the answer is the refusal")
                final_check = check(REFUSAL)

    if final.finish_reason in CUT_SHORT:
        warnings.append(f"the answer is incomplete: the provider cut the reply short "
                        f"(finish reason {final.finish_reason})")
    return LLMResult(
        text=final_check.text,
        raw_text=final.text,
        cited=[] if final_check.refused else [n - 1 for n in final_check.cited],
        refused=final_check.refused,
        model=final.model or first.model or client.model,
        warnings=warnings,
        usage=usage,
        timings_ms=timings,
        repair=repair,
        attempts=attempts,
    )


def _weight(check: CitationCheck) -> int:
    """How much is wrong with a checked reply that the model would have to fix (lower is better)."""
    return 2 * len(check.marker_only) + 2 * len(check.unsupported) + len(check.uncited) + (3 if check.empty else 0)


def _states_anything(check: CitationCheck) -> bool:
    """True when some sentence is a cited claim (not marker-only, not a "sources do not say")."""
    return not check.refused and any(c.cites and c.text not in check.marker_only and c.text not in check.unsupported
                                     for c in check.claims)
