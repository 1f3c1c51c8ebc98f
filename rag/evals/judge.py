"""The optional LLM-judge faithfulness check: does the cited text support each answer sentence?

Runs only when asked for (`rag eval --judge`). The judge is any object with
`chat(messages) -> reply with .text` (the LLM client of rag.llm, or a fake in tests).
"""
from __future__ import annotations

from typing import Any, Protocol

from rag.markers import split_claims
from rag.evals.evaluators import EvalContext, Evaluator, Outcome

JUDGE_SYSTEM = (
    "You check whether a claim is supported by source text. Judge only from the source, not from "
    "what you know. Reply with exactly one word: yes or no."
)
JUDGE_USER = "<source>\n{source}\n</source>\n\nClaim: {claim}\n\nIs everything the claim states supported by the source?"


class Judge(Protocol):
    def chat(self, messages: list[dict[str, str]]) -> Any:
        """Return the model's reply; its `.text` is read."""
        ...


def judge_messages(claim: str, sources: list[str]) -> list[dict[str, str]]:
    """Build the judge's messages for one claim and the texts it cites."""
    source = "\n\n".join(s.replace("</source>", "</ source>") for s in sources)
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": JUDGE_USER.format(source=source, claim=" ".join(claim.split()))}]


def verdict(reply: str) -> bool:
    """True when the judge's reply says yes."""
    return reply.strip().strip(".!\"'*` ").lower().startswith("yes")


def faithfulness_evaluator(judge: Judge) -> Evaluator:
    """An evaluator scoring the share of answer sentences the judge finds supported by their citations."""

    def faithfulness(ctx: EvalContext) -> Outcome:
        if ctx.refused:
            return Outcome(None)
        chunks = {c.n: c.text for c in ctx.answer.citations}
        claims = split_claims(ctx.answer.text)
        if not claims:
            return Outcome(None)
        unsupported = []
        for c in claims:
            cited = [chunks[n] for n in dict.fromkeys(c.cites) if n in chunks]
            if not cited or not verdict(judge.chat(judge_messages(c.body, cited)).text):
                unsupported.append(c.body)
        score = (len(claims) - len(unsupported)) / len(claims)
        reason = f"{len(unsupported)}/{len(claims)} sentences unsupported per the judge: {unsupported[0][:80]!r}" if unsupported else ""
        return Outcome(score, reason)

    return Evaluator("faithfulness", "LLM-judge faithfulness", faithfulness, short="judge faith", gated=False)
