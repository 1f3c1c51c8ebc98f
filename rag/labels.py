"""Give each untitled abstract a short readable label for citations.

In order of preference:
1. the name of the method, model or dataset the abstract introduces, with the qualifiers it
   always carries (BraVE, OMiSO, Safe RLHF-V);
2. the topic the opening sentence declares ("We study the value of stochastic predictions in
   online optimal control ..." -> "Value of stochastic predictions in online optimal control");
3. the noun phrase of the contribution ("We propose a purely value-based framework for
   continuous control that ..." -> "Value-based framework for continuous control");
4. a demonstrative phrase naming the contribution ("this trust region based strategy");
5. the abstract's first words.
A label is a name or a short noun phrase, never a sentence that answers would quote.
"""
from __future__ import annotations

import re
from collections import Counter

from rag.clean import clean
from rag.text import split_sentences

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
MAX_PHRASE_WORDS = 8  # a label is read at a glance: longer phrases are cut at a preposition


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


def _introduced_name(plain: str) -> str | None:
    """The name the abstract introduces ("we propose X", "X, called Y"), or its most repeated name."""
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
    return best[1] if best else None


# -- qualifiers: "Safe RLHF-V" is one name, "RLHF-V" another paper -------------------------------
# Capitalised words that start a phrase rather than qualify a name.
_NOT_QUALIFIERS = {
    "A", "An", "The", "This", "That", "These", "Those", "Our", "We", "Its", "Their", "In", "On", "For",
    "With", "By", "Of", "To", "From", "And", "Or", "But", "As", "At", "Using", "Unlike", "Like", "Both",
    "Each", "Every", "All", "Moreover", "Notably", "Specifically", "Finally", "Furthermore", "However",
    "Thus", "Hence", "Overall", "Compared", "Besides", "Further", "Also", "Then", "Here", "Via",
}
_MAX_QUALIFIERS = 2


def _qualified(name: str, plain: str) -> str:
    """Prefix the capitalised words that precede every occurrence of `name` in the text.

    A qualifier is part of the name only when the abstract never uses the name without it
    and it does not open a sentence: "the Safe RLHF-V ... Specifically, Safe RLHF-V" gives
    "Safe RLHF-V"; "Moreover, RoboRefer ... SFT-trained RoboRefer" gives "RoboRefer".
    """
    for _ in range(_MAX_QUALIFIERS):
        before: set[str] = set()
        pattern = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")
        for m in pattern.finditer(plain):
            prev = re.search(r"(?:^|(?<=[\s(]))([A-Za-z][\w-]*) $", plain[max(0, m.start() - 40):m.start()])
            if not prev:
                before.add("")
                break
            word = prev.group(1)
            opening = plain[:m.start() - len(word) - 1].rstrip()
            if not opening or opening[-1] in ".!?:":
                before.add("")
                break
            before.add(word)
        word = next(iter(before)) if len(before) == 1 else ""
        if not word or not word[0].isupper() or word in _NOT_QUALIFIERS or not word.replace("-", "").isalpha():
            return name
        name = f"{word} {name}"
    return name


# -- noun phrases of the contribution -------------------------------------------------------------
_PROPOSE = re.compile(
    r"\b(?:we|this (?:paper|work|article|study))\s+(?:\w+ly\s+|also\s+|further\s+|then\s+|therefore\s+)?"
    r"(?:propose|introduce|present|develop|design|devise|contribute|put forward)s?\s+(?P<rest>.+)",
    re.I,
)
_STUDY = re.compile(
    r"\b(?:we|this (?:paper|work|article|study))\s+(?:\w+ly\s+|also\s+|further\s+|then\s+|therefore\s+)?"
    r"(?:study|studies|analy[sz]es?|investigates?|examines?|considers?|explores?|revisits?|characteri[sz]es?)"
    r"\s+(?P<rest>.+)",
    re.I,
)
_HEADS = r"method|approach|strategy|framework|algorithm|model|technique|scheme|architecture|benchmark|dataset|system|pipeline|formulation"
_DEMONSTRATIVE = re.compile(
    r"\b(?:this|our|the proposed)\s+(?P<rest>(?:[\w-]+\s+){0,4}(?:" + _HEADS + r"))\b", re.I,
)
_GENERIC_HEADS = set(_HEADS.split("|")) | {"paradigm", "class", "family", "set", "way", "problem", "task"}
# Words that praise rather than describe: "a novel, simple and effective method" says nothing.
_EVALUATIVE = {
    "novel", "new", "simple", "effective", "general", "elegant", "principled", "unified", "generic",
    "powerful", "first", "practical", "flexible", "straightforward", "innovative", "versatile", "efficient",
    "proposed", "third", "key", "universal", "comprehensive", "theoretical", "rigorous",
}
_ADVERBS = {"still", "also", "further", "then", "even", "only", "thus", "therefore", "both", "jointly", "instead"}
_PRONOUNS = {"their", "its", "our", "it", "they", "them", "this", "these", "those", "we", "us", "his", "her", "which"}
_ARTICLES = {"a", "an", "the"}
_PREPOSITIONS = {"of", "for", "in", "on", "with", "through", "via", "under", "over", "from", "into", "across",
                 "between", "by", "towards", "toward", "without", "within", "at", "as", "among"}
# A relative clause, an infinitive or a new clause ends the phrase.
_VERBS = {"can", "could", "is", "are", "was", "were", "has", "have", "will", "would", "may", "might", "must", "do", "does"}
_STOPS = {"that", "which", "who", "whose", "where", "when", "while", "to", "so", "because", "whereby", "than"} | _VERBS
_QUESTION_WORDS = {"how", "whether", "why", "what", "when", "if"}
_JOINERS = {"yet", "and", "but", "or", "very", "highly"}
_TRAILING = _PREPOSITIONS | _ARTICLES | {"and", "or", "based", "using", "called", "named", "termed", "dubbed"}
_LEADING = re.compile(r"^(?:the\s+)?(?:(?:problem|task|question|challenge|setting)\s+of\s+)", re.I)
_PHRASE_TOKEN = re.compile(r"[^\s,;:]+|[,;:]")


def _phrase(rest: str) -> str | None:
    """Cut a noun phrase from the words after "we propose": the contribution, not the clause around it."""
    rest = re.sub(r"\s*\([^()]*\)", "", rest)  # "(AC)", "(VLM)": definitions, not part of the phrase
    rest = _LEADING.sub("", rest.strip())
    words: list[str] = []
    tokens = _PHRASE_TOKEN.findall(rest)
    # "how transformers learn ...", "whether models can plan": a question clause keeps its verbs
    clause = bool(tokens) and tokens[0].lower() in _QUESTION_WORDS
    for i, tok in enumerate(tokens):
        low = tok.lower().strip(".\"'")
        if tok in ",;:" or tok in ("-", "--") or low in _PRONOUNS or low in _STOPS and not (clause and low in _VERBS):
            break
        if low == "and" and i + 1 < len(tokens):
            nxt = tokens[i + 1].lower()
            if _PROPOSE.match("we " + nxt + " x") or _STUDY.match("we " + nxt + " x") or nxt.endswith("ed") or nxt in _PRONOUNS:
                break  # "... and propose the corresponding method": a second clause
        if low.endswith("ly") and len(low) > 4 or low in _ADVERBS:
            continue
        if not words and (low in _ARTICLES or low in _EVALUATIVE or low in _JOINERS):
            continue  # "a novel ...", "a simple yet effective ...": the article and the praise go
        words.append(tok)
        if tok.endswith((".", "!", "?")) and not re.fullmatch(r"(?:[A-Za-z]\.)+|e\.g\.|i\.e\.|vs\.|et al\.", tok):
            break
    words = [w.rstrip(".!?\"'") for w in words]
    while words and words[0].lower() in _EVALUATIVE | _ARTICLES:
        words.pop(0)
    if len(words) > MAX_PHRASE_WORDS:  # cut before the last preposition that keeps it short
        cuts = [i for i, w in enumerate(words[: MAX_PHRASE_WORDS + 1]) if w.lower() in _PREPOSITIONS and i >= 2]
        words = words[: cuts[-1]] if cuts else words[:MAX_PHRASE_WORDS]
    while words and (words[-1].lower() in _TRAILING or words[-1].lower() in _EVALUATIVE
                     or words[-1].lower().endswith(("ing", "ed")) and len(words) > 1):
        words.pop()
    content = [w for w in words if w.lower() not in _EVALUATIVE | _PREPOSITIONS | _ARTICLES]
    if len(words) < 2 or not content or all(w.lower() in _GENERIC_HEADS for w in content):
        return None  # "a framework", "a general framework": nothing a reader would recognise
    label = " ".join(words)
    first = words[0]
    if first[:1].islower() and not any(c.isupper() for c in first[1:]):  # keep "nanoGPT", capitalise "value"
        label = label[:1].upper() + label[1:]
    return label


def _contribution(plain: str) -> str | None:
    """The topic of the opening sentence, else the proposed contribution, else a "this X method" phrase."""
    sentences = [plain[s:e] for s, e in split_sentences(plain)]
    if sentences:
        m = _STUDY.search(sentences[0])
        if m and (found := _phrase(m.group("rest"))):
            return found
    for pattern in (_PROPOSE, _STUDY):
        for sentence in sentences:
            m = pattern.search(sentence)
            if m and (found := _phrase(m.group("rest"))):
                return found
    for sentence in sentences:
        for m in _DEMONSTRATIVE.finditer(sentence):
            if found := _phrase(m.group("rest")):
                return found
    return None


def first_words(plain: str, n: int = _FIRST_WORDS) -> str:
    """The first n words of the text, with an ellipsis when there are more (the last resort)."""
    words = plain.split()
    head = " ".join(words[:n]).rstrip(",;:.")
    return head + ("…" if len(words) > n else "")


def make_label(text: str, title: str | None = None) -> str:
    """Return a short label: the title if given, else the introduced name, else a noun phrase."""
    if title and title.strip():
        return " ".join(title.split())
    plain = clean(text)
    name = _introduced_name(plain)
    if name is not None:
        return _display(_qualified(name, plain))
    return _contribution(plain) or first_words(plain)
