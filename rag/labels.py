"""Give each untitled abstract a short readable label for citations.

The label is the name of the method or system the abstract introduces (BraVE, OMiSO,
RoboRefer) when one can be found, else the abstract's first words.
"""
from __future__ import annotations

import re
from collections import Counter

from rag.clean import clean

# Acronyms that name a field or a generic concept, not the paper's own contribution.
_GENERIC = {
    "AI", "RL", "LLM", "LLMs", "VLM", "VLMs", "MLLM", "MLLMs", "LM", "LMs", "NLP", "CV", "MDP", "MDPs",
    "ODE", "ODEs", "SDE", "SDEs", "PDE", "PDEs", "HJB", "SSL", "AC", "GPU", "GPUs", "CPU", "API",
    "SOTA", "DNN", "DNNs", "CNN", "CNNs", "GNN", "GNNs", "RNN", "MLP", "KL", "IID", "i.i.d", "SGD",
    "GRPO", "PPO", "DPO", "RLHF", "CoT", "QA", "VQA", "T2I", "TD", "ViT", "ViTs", "BERT", "GPT",
    "MoE", "LoRA", "IL", "BC", "IRL", "POMDP", "POMDPs", "US", "UK", "EU", "3D", "2D", "RGB", "ID",
    "OOD", "ML", "DRL", "MARL", "LQR", "MPC", "PAC", "IoU", "FID", "CLIP", "SFT", "RLVR", "VAE",
    "GAN", "GANs", "NeRF", "SAM", "DINO", "ImageNet", "COCO", "GitHub", "HuggingFace", "PyTorch",
}
_INTRO = re.compile(
    r"\b(?:we(?:\s+(?:then|also|further|first|additionally|\w+ly))?\s+"
    r"(?:propose|introduce|present|develop|design|release|call|name|term|dub)|"
    r"(?:called|named|termed|dubbed|coined))\b",
    re.I,
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*")
_FIRST_WORDS = 6


_SUFFIX = re.compile(r"-(?:based|driven|aware|free|style|like|guided|level|wise|specific)$", re.I)


_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
          "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "pi": "π",
          "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "psi": "ψ", "omega": "ω"}
_GREEK_PREFIX = re.compile(r"^(" + "|".join(sorted(_GREEK, key=len, reverse=True)) + r")-(.+)$")


def _display(tok: str) -> str:
    """Write a Greek-prefixed name as it is printed: epsilon-DPO -> ε-DPO."""
    m = _GREEK_PREFIX.match(tok)
    return f"{_GREEK[m.group(1)]}-{m.group(2)}" if m else tok


def _is_name(tok: str) -> bool:
    m = _GREEK_PREFIX.match(tok)
    if m:  # "$\varepsilon$-DPO" cleans to "epsilon-DPO": judge the part after the letter
        rest = m.group(2)
        return rest[:1].isupper() and any(c.isupper() for c in rest[1:]) or rest in _GENERIC
    if tok in _GENERIC or len(tok) < 3 or len(tok) > 24 or _SUFFIX.search(tok):
        return False
    if re.fullmatch(r"[A-Z]+s", tok) and tok[:-1] in _GENERIC | {tok[:-1]}:
        return False  # plural acronyms name a field (SNNs, LRMs), not a contribution
    # Each hyphen part is checked on its own, so Title-Case compounds (Value-Guided) are not names.
    parts = re.split(r"[-+]", tok)
    marked = any(any(c.isupper() or c.isdigit() for c in part[1:]) for part in parts)
    return tok[0].isupper() and marked


def make_label(text: str, title: str | None = None) -> str:
    """Return a short label: the title if given, else the introduced name, else the first words."""
    if title and title.strip():
        return title.strip()
    plain = clean(text)
    counts = Counter(t for t in _TOKEN.findall(plain) if _is_name(t))
    best: tuple[float, str] | None = None
    for sentence in re.split(r"(?<=[.!?])\s+", plain):
        intro = _INTRO.search(sentence)
        if not intro:
            continue
        after = _TOKEN.findall(sentence[intro.end():])
        for distance, tok in enumerate(after):
            if not _is_name(tok):
                continue
            score = 10 - distance + min(counts[tok], 3)
            if re.search(r"\(\s*" + re.escape(tok) + r"\s*[),;]", sentence):
                score += 4  # "Branch Value Estimation (BraVE)": the defined short name wins
            if best is None or score > best[0]:
                best = (score, tok)
    if best is None and counts:
        tok, n = counts.most_common(1)[0]
        if n >= 3:
            best = (n, tok)
    if best is not None:
        return _display(best[1])
    words = plain.split()
    head = " ".join(words[:_FIRST_WORDS]).rstrip(",;:.")
    return head + ("…" if len(words) > _FIRST_WORDS else "")
