"""Evaluators: named checks that score one answer against its case, each with a reason.

Like pydantic_evals, an evaluator returns a bool (assertion), a number (score) or None (not
applicable), optionally with a reason; the runner turns an evaluator that raises into a
failure row and goes on.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Union

from rag.evals import metrics as m
from rag.markers import find_markers
from rag.evals.dataset import Case
from rag.types import Answer

Value = Union[float, bool, None]

# Where the questions are asked: among the 35 seed abstracts, or hidden among many real ones.
SETTINGS = ("seed", "scale")


@dataclass(frozen=True)
class Outcome:
    """What one evaluator concluded: a value in [0, 1] (None = not applicable) and why."""

    value: float | None
    reason: str = ""


@dataclass
class EvalContext:
    """A case, the answer it got, and values derived from the answer (computed on first use)."""

    case: Case
    answer: Answer
    k: int
    setting: str = "seed"

    @cached_property
    def retrieved(self) -> list[str]:
        return [h.doc_id for h in self.answer.sources]

    @cached_property
    def markers(self) -> list[int]:
        return find_markers(self.answer.text)

    @cached_property
    def by_number(self) -> dict[int, str]:
        """Citation number -> cited document id."""
        return {c.n: c.doc_id for c in self.answer.citations}

    @cached_property
    def cited_docs(self) -> list[str]:
        """Distinct documents named by valid markers, in order of first mention."""
        return list(dict.fromkeys(self.by_number[n] for n in self.markers if n in self.by_number))

    @cached_property
    def found(self) -> list[bool]:
        return m.facts_found(self.answer.text, self.case.facts)

    @property
    def refused(self) -> bool:
        return bool(self.answer.refused)

    @property
    def distractor_excused(self) -> bool:
        """At scale, another real paper may answer this case: citing it is not a wrong paper."""
        return self.setting == "scale" and self.case.distractor_may_answer

    @property
    def cites_gold(self) -> bool:
        return any(d in self.case.gold_ids for d in self.cited_docs)

    @property
    def accepted_refusal(self) -> bool:
        """Refused where refusing is a correct outcome: content checks do not apply."""
        return self.refused and self.case.refusal_ok


@dataclass(frozen=True)
class Evaluator:
    """A named check with its direction; `gated` metrics take part in the baseline check."""

    name: str
    label: str
    fn: Callable[[EvalContext], "Outcome | Value"]
    short: str = ""  # column-friendly name
    higher_is_better: bool = True
    gated: bool = True
    must_be_zero: bool = False  # the gate fails on any nonzero value, whatever the baseline says
    zero_in: tuple[str, ...] = ()  # settings ("seed", "scale") in which it must be zero

    def held_at_zero(self, setting: str) -> bool:
        """True when the gate fails on any nonzero value of this metric in a run of this setting."""
        return self.must_be_zero or setting in self.zero_in

    def evaluate(self, ctx: EvalContext) -> Outcome:
        """Run the check and normalise its result to an Outcome."""
        out = self.fn(ctx)
        if isinstance(out, Outcome):
            return out
        if out is None:
            return Outcome(None)
        return Outcome(float(out))

    def failed(self, value: float | None) -> bool:
        """True when the value is short of perfect in this metric's direction."""
        if value is None:
            return False
        return value < 1.0 if self.higher_is_better else value > 0.0


def _docs(ctx: EvalContext, ids: list[str]) -> str:
    labels = {h.doc_id: (h.label or h.title) for h in ctx.answer.sources}
    gold = dict(zip(ctx.case.gold_ids, ctx.case.gold_labels))
    return ", ".join(gold.get(i) or labels.get(i) or i for i in ids)


def recall_at_k(ctx: EvalContext) -> Outcome:
    value = m.retrieval_recall(ctx.retrieved, ctx.case.gold_ids, ctx.k)
    missed = [g for g in ctx.case.gold_ids if g not in ctx.retrieved[: ctx.k]]
    return Outcome(value, f"not retrieved in top {ctx.k}: {_docs(ctx, missed)}" if missed else "")


def recall_at_k_named(ctx: EvalContext) -> Outcome:
    """Recall@k over the questions that identify their paper (not `distractor_may_answer`).

    A question that only describes a topic may be answered as well by another paper among
    thousands, so its gold abstract's rank measures luck as much as retrieval; a question
    naming its paper has exactly one right abstract. Scored in both settings, so they compare.
    """
    if ctx.case.distractor_may_answer:
        return Outcome(None)
    return recall_at_k(ctx)


def mrr(ctx: EvalContext) -> Outcome:
    value = m.reciprocal_rank(ctx.retrieved, ctx.case.gold_ids)
    return Outcome(value, "" if not value or value == 1 else f"first gold at rank {round(1 / value)}")


def fact_recall(ctx: EvalContext) -> Outcome:
    if not ctx.case.facts or ctx.accepted_refusal:
        return Outcome(None)
    missing = [f[0] for f, ok in zip(ctx.case.facts, ctx.found) if not ok]
    return Outcome(sum(ctx.found) / len(ctx.found), f"missing: {'; '.join(missing)}" if missing else "")


def all_facts(ctx: EvalContext) -> Value:
    if not ctx.case.facts or ctx.accepted_refusal:
        return None
    return all(ctx.found)


def citation_validity(ctx: EvalContext) -> Outcome:
    value = m.citation_validity(ctx.markers, ctx.by_number)
    bad = sorted({n for n in ctx.markers if n not in ctx.by_number})
    return Outcome(value, f"markers naming no source: {', '.join(f'[{n}]' for n in bad)}" if bad else "")


def citation_precision(ctx: EvalContext) -> Outcome:
    if ctx.refused or ctx.distractor_excused:
        return Outcome(None)
    value = m.citation_precision(ctx.cited_docs, ctx.case.gold_ids)
    extra = [d for d in ctx.cited_docs if d not in ctx.case.gold_ids]
    return Outcome(value, f"cites non-gold: {_docs(ctx, extra)}" if extra and value is not None else "")


def citation_recall(ctx: EvalContext) -> Outcome:
    if ctx.accepted_refusal:
        return Outcome(None)
    value = m.citation_recall(ctx.cited_docs, ctx.case.gold_ids)
    missed = [g for g in ctx.case.gold_ids if g not in ctx.cited_docs]
    return Outcome(value, f"gold not cited: {_docs(ctx, missed)}" if missed and value is not None else "")


_SIMILARITY: list = []


def _embedder_similarity(sentence: str, texts):
    """The bundled embedder's cosine, loaded on first use (only answers in another script need it)."""
    if not _SIMILARITY:
        import rag
        from rag.answering.support import embedder_similarity
        from rag.index.embedders import get_embedder

        _SIMILARITY.append(embedder_similarity(get_embedder(rag.get_settings())))
    return _SIMILARITY[0](sentence, texts)


def groundedness(ctx: EvalContext) -> Outcome:
    if ctx.refused:
        return Outcome(None)
    chunks = {c.n: c.text for c in ctx.answer.citations}
    # An answer may name the paper it quotes ("Title: sentence [2]"): the citation's label supports that.
    labels = {c.n: c.label for c in ctx.answer.citations if c.label}
    others = [h.text for h in ctx.answer.sources]
    g = m.groundedness(ctx.answer.text, chunks, similarity=_embedder_similarity, others=others, labels=labels)
    if g.score is None:
        return Outcome(0.0, "answer has no sentences") if ctx.answer.text.strip() else Outcome(0.0, "empty answer")
    reason = f"{len(g.unsupported)}/{g.sentences} sentences unsupported: {g.unsupported[0][:80]!r}" if g.unsupported else ""
    return Outcome(g.score, reason)


def wrong_paper(ctx: EvalContext) -> Outcome:
    """Answered a question that has gold documents, citing none of them."""
    if ctx.refused or not ctx.case.gold_ids or ctx.distractor_excused:
        return Outcome(None)
    if ctx.cites_gold:
        return Outcome(0.0)
    cited = _docs(ctx, ctx.cited_docs) or "nothing"
    return Outcome(1.0, f"answered citing {cited}, not {', '.join(ctx.case.gold_labels) or 'the gold'}")


def refusal_accuracy(ctx: EvalContext) -> Outcome:
    if ctx.case.answerable or ctx.distractor_excused:
        return Outcome(None)
    return Outcome(float(ctx.refused), "" if ctx.refused else "answered an unanswerable question")


def false_refusal(ctx: EvalContext) -> Outcome:
    if ctx.case.refusal_ok:
        return Outcome(None)
    return Outcome(float(ctx.refused), "refused an answerable question" if ctx.refused else "")


def premise_handled(ctx: EvalContext) -> Outcome:
    """False premise: refusing, or citing the contradicting abstract with a correcting fact, passes."""
    if ctx.case.type != "false_premise":
        return Outcome(None)
    if ctx.refused:
        return Outcome(1.0)
    ok = ctx.cites_gold and any(ctx.found)
    return Outcome(float(ok), "" if ok else "neither refused nor cited the correcting abstract and fact")


def passed(ctx: EvalContext) -> Outcome:
    """The question's overall outcome, used to list flipped questions."""
    if not ctx.case.answerable:
        return refusal_accuracy(ctx)
    if ctx.case.type == "false_premise":
        return premise_handled(ctx)
    if ctx.refused:
        return Outcome(0.0, "refused")
    problems = []
    if not all(ctx.found):
        problems.append("facts missing")
    if not ctx.cites_gold:
        problems.append("no gold document cited")
    if any(n not in ctx.by_number for n in ctx.markers):
        problems.append("invalid marker")
    return Outcome(float(not problems), ", ".join(problems))


EVALUATORS: tuple[Evaluator, ...] = (
    Evaluator("recall_at_k", "retrieval recall@k", recall_at_k, short="recall@k"),
    Evaluator("recall_at_k_named", "recall@k, questions naming their paper", recall_at_k_named,
              short="recall@k named"),
    Evaluator("mrr", "retrieval MRR", mrr, short="MRR"),
    Evaluator("fact_recall", "fact recall", fact_recall, short="fact recall"),
    Evaluator("all_facts", "answers with all facts", all_facts, short="all facts"),
    Evaluator("citation_validity", "citation validity", citation_validity, short="cite valid"),
    Evaluator("citation_precision", "citation precision", citation_precision, short="cite prec"),
    Evaluator("citation_recall", "citation recall", citation_recall, short="cite recall"),
    Evaluator("groundedness", "groundedness", groundedness, short="grounded"),
    # The target is 0. Among thousands of abstracts it is 0 on both splits and held there; among
    # the 35 seed abstracts the offline answerer still quotes another paper for a reworded test
    # question whose own paper retrieval misses, so there the gate holds it to the baseline like
    # the others (see eval/README.md, "wrong-paper answers").
    Evaluator("wrong_paper", "wrong-paper answers", wrong_paper, short="wrong paper", higher_is_better=False,
              zero_in=("scale",)),
    Evaluator("refusal_accuracy", "refusal accuracy (unanswerable)", refusal_accuracy, short="refusal acc"),
    Evaluator("false_refusal", "false-refusal rate (answerable)", false_refusal, short="false refusal", higher_is_better=False),
    Evaluator("premise_handled", "false premise handled", premise_handled, short="premise ok"),
    Evaluator("passed", "questions passed", passed, short="passed"),
)


def evaluator(name: str) -> Evaluator:
    """Look an evaluator up by name."""
    for e in EVALUATORS:
        if e.name == name:
            return e
    raise KeyError(name)
