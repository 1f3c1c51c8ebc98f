"""Which papers a question names: by a name, by the words of a paper's label or title, or by a
description in a comparison ("Compare X with the paper that ...").

The offline answerer quotes a named paper alone (`rag.answering.offline`); these functions decide
which of the names a question holds are papers' own names and which are details asked about, and
word the refusal when a named paper does not state what is asked.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Set as AbstractSet

import numpy as np

from rag.answering.asked import TERM_ACRONYM
from rag.answering.field_terms import is_glossary_term
from rag.index.lexical import tokenize
from rag.index.names import doc_ids, title_key
from rag.index.translate import english_query, question_words
from rag.text import mostly_cjk
from rag.types import Hit

# similarity(sentences, question) -> cosine of each sentence to the question text given (the bundled embedder).
Similarity = Callable[[list[str], str], "np.ndarray"]
# Fewest content words of a label that a question must use to name its paper by them.
LABEL_WORDS = 3


def named_by_label(terms: list[str], hits: list[Hit], share: float, *,
                   framing: AbstractSet[str]) -> dict[str, list[str]]:
    """The retrieved papers whose label (or title) the question uses, as {label: [doc id]}, or {}.

    A label of at least three content words names its paper when the question uses at least
    `share` of them ("the proxy target framework"; "the global convergence proof for single-timescale
    actor-critic" uses five of the seven of "Global convergence of the single-timescale actor-critic
    algorithm"). Every such paper is named: among thousands, another paper's title may use the same
    words ("Single-Timescale Actor-Critic Provably Finds Globally Optimal Policy"), and the question
    does not say which of them it means. `framing`: the question words a label's words are counted without.
    """
    asked = set(terms)
    out: dict[str, list[str]] = {}
    for h in hits:
        words = _label_words(h, framing)
        found = sum(1 for x in words if x in asked)
        if found >= LABEL_WORDS and found / len(words) >= share:
            out.setdefault(label_text(h), []).append(h.doc_id)
    return out


def _label_words(hit: Hit, framing: AbstractSet[str]) -> list[str]:
    """The stemmed words of the hit's label (or title), each once, without `framing` words."""
    return [x for x in dict.fromkeys(tokenize(label_text(hit), compounds=False)) if x not in framing]


def quoted_labels(question: str, hits: list[Hit], quoted: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The retrieved papers whose label or title the question writes whole, as {label: [doc id]}:
    a Chinese question quoting "Value-based framework for continuous control" names that paper as
    an English one using its label's words does (`named_by_label`). `quoted`: the labels and titles
    the retrieval found quoted (`rag.index.names.NameIndex.quoted_titles`); a part of the question
    names only those it writes itself."""
    asked = f" {title_key(question)} "
    docs = {d for key, ds in quoted.items() if f" {key} " in asked for d in ds}
    out: dict[str, list[str]] = {}
    for h in hits:
        if h.doc_id in docs:
            out.setdefault(label_text(h), []).append(h.doc_id)
    return out


def named_by_label_zh(question: str, hits: list[Hit], *, framing: AbstractSet[str]) -> dict[str, list[str]]:
    """The retrieved papers whose label a Chinese question writes partly in Latin script and partly in
    Chinese, as {label: [doc id]}: "代理目标网络（proxy target）框架" writes "Proxy target framework", two of its
    words as they are and "framework" as 框架. At least two of the label's words (3+ of them, not counting
    `framing`) are written in Latin script and the Chinese words' dictionary glosses hold every other one."""
    latin = set(tokenize(" ".join(re.findall(r"[A-Za-z][A-Za-z0-9-]*", question)), compounds=False))
    if len(latin) < 2:
        return {}
    glossed = set(question_words(question))  # (the Latin-script words and the glosses)
    out: dict[str, list[str]] = {}
    for h in hits:
        words = _label_words(h, framing)
        if len(words) >= LABEL_WORDS and sum(1 for x in words if x in latin) >= 2 and all(x in glossed for x in words):
            out.setdefault(label_text(h), []).append(h.doc_id)
    return out


def papers_named(named: dict[str, list[str]]) -> list[list[str]]:
    """The question's names grouped by the papers they name (two names of one paper are one group)."""
    groups: dict[frozenset[str], list[str]] = {}
    for name, docs in named.items():
        groups.setdefault(frozenset(docs), []).append(name)
    return list(groups.values())


def written(name: str) -> re.Pattern[str]:
    """A name written as a whole word, in any case ("GP" is not written in "GPU")."""
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)


def label_text(hit: Hit) -> str:
    return hit.label or hit.title or ""


def without_field_acronyms(named: dict[str, list[str]], hits: list[Hit]) -> dict[str, list[str]]:
    """The names of the question without the short acronyms that label no retrieved abstract.

    A two- or three-letter acronym ("AI", "KL", "VLM") is usually a term of the field, which a
    few abstracts of a small corpus happen to write: it names a paper only when it labels one
    ("UAT"). Otherwise the question is not about the abstracts that mention it, as it is not
    among thousands of papers, where such a term is too common to count as a name at all.
    """
    # A title's name is what comes before its colon ("Spotlight: Mobile UI Understanding ..."); the
    # words after it describe the topic, where a field's acronym ("UI", "RL") names no paper.
    def labels(name: str, doc_ids: list[str]) -> bool:
        word = re.compile(rf"\b{re.escape(name.rstrip('s'))}", re.I)
        return any(word.search(label_key(h).split(":", 1)[0]) for h in hits if h.doc_id in doc_ids)

    return {n: docs for n, docs in named.items() if not TERM_ACRONYM.fullmatch(n) or labels(n, docs)}


# "(e.g. AlpacaEval or MT-Bench)", "such as LoRA": what follows gives examples of what is asked.
EXAMPLES = re.compile(r"(?:\be\.g\.|\bsuch as\b|\bfor (?:example|instance)\b|例如|比如)[^?？.;；)）]*", re.I)


def without_examples(named: dict[str, list[str]], question: str) -> dict[str, list[str]]:
    """The question's names less those it gives only as examples, when another name remains.

    "Which chatbot benchmarks (e.g. AlpacaEval or MT-Bench) does ε-DPO report?" asks about ε-DPO;
    the benchmarks are examples of the answer. Among thousands of abstracts another paper that
    mentions them must not be taken for the paper asked about.
    """
    if len(named) < 2 or not EXAMPLES.search(question):
        return named

    def only_in_examples(name: str) -> bool:
        at, outside = _written_at(name, question)
        return bool(at) and not outside
    kept = {n: docs for n, docs in named.items() if not only_in_examples(n)}
    return kept or named


def _written_at(name: str, question: str, flags: int = 0) -> tuple[list[int], list[int]]:
    """Where the question writes the name: every place, and the places outside the examples it gives."""
    spans = [m.span() for m in EXAMPLES.finditer(question)]
    at = [m.start() for m in re.finditer(re.escape(name), question, flags)]
    return at, [i for i in at if not any(a <= i < b for a, b in spans)]


def shared_names(named: dict[str, list[str]], hits: list[Hit], question: str) -> dict[str, list[str]]:
    """The question's names that say what the papers it asks for have in common, when every name does.

    "Which papers deploy their method on the G1 humanoid?": G1 labels no retrieved abstract, it is a
    thing papers write about, and the papers asked for are those writing it; an abstract merely close
    in meaning (another robotics paper) is no answer. Not when a name labels a paper ("which papers,
    besides SoLS, ...") or is given only as an example ("e.g. AlpacaEval"), nor when it is a term of the
    field ("LLMs", "PPO"), which papers write whatever their topic: then the name does not decide
    which papers answer.
    """
    if not named or labelling(named, hits) or any(is_glossary_term(n) for n in named):
        return {}
    if any(not _written_at(name, question, re.I)[1] for name in named):
        return {}
    return named


def paper_names(named: dict[str, list[str]], hits: list[Hit]) -> dict[str, list[str]]:
    """The names of the question that say which paper is meant, when it also names a detail.

    "What GPU does SnapViT need?" names two things a few abstracts mention; SnapViT labels one of
    them, so it is the paper and "GPU" is what is asked (a word the answer must state, not another
    paper to quote). Without a name that labels a retrieved abstract, every name counts as the paper's.
    """
    if len(named) < 2:
        return named
    return labelling(named, hits) or named


def as_spelled(named: dict[str, list[str]], texts: dict[str, str]) -> dict[str, list[str]]:
    """The names of the question, each with only the documents writing it as the question does, when
    some do and some write it otherwise: "DISCO" is not "DisCo" (a distractor's "Disentanglement via
    Contrast"), though the index of names folds case. `texts`: doc id -> its label and text. A name
    typed in lower case ("snapvit") and one every document writes alike keep all their documents."""
    out = {}
    for name, docs in named.items():
        exact = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w])")
        spelled = [d for d in docs if exact.search(texts.get(d, ""))] if name != name.casefold() else docs
        out[name] = spelled if spelled and len(docs) > 1 else docs
    return out


def labelling(named: dict[str, list[str]], hits: list[Hit]) -> dict[str, list[str]]:
    """The names that label (or title) a retrieved abstract mentioning them: the papers' own names."""
    labels = {h.doc_id: label_key(h) for h in hits}
    return {n: docs for n, docs in named.items() if any(n.casefold() in labels.get(d, "") for d in docs)}


def label_key(hit: Hit) -> str:
    """The name a hit is cited by, case-folded, for matching the question's names against it."""
    return label_text(hit).casefold()


def not_stated(hits: list[Hit], wanted: set[str], named: dict[str, list[str]], what: str = "it") -> str:
    """Why a question naming a paper is refused, naming the paper only when it is certain which,
    and `what` it asks for ("the kernel function"; "it" when the question's form does not say).

    A name several abstracts mention ("DISCO", also a distractor's "DisCo") must not make the
    refusal speak of another paper: the one whose label holds the name is meant, else all of them.
    """
    docs = [h for h in hits if h.doc_id in wanted]
    names = {n.casefold() for n in named}
    label = {h.doc_id: label_key(h) for h in docs}
    exact = [h for h in docs if label[h.doc_id] in names]
    own = [h for h in docs if any(n in label[h.doc_id] for n in names)]
    for group in (docs, exact, own):  # one abstract; else the one labelled by the name; else holding it
        if len({h.doc_id for h in group}) == 1:
            return f"The {group[0].label or group[0].title} abstract does not state {what}."
    # Each name one paper ("Compare X and the paper on Y"): those papers, by the labels they are cited by.
    papers = {docs[0] for docs in named.values() if len(docs) == 1}
    if len(named) >= 2 and len(papers) == len(named) and papers <= {h.doc_id for h in docs}:
        labels = list(dict.fromkeys(h.label or h.title for h in docs if h.doc_id in papers))
        return f"The {' and '.join([', '.join(labels[:-1]), labels[-1]])} abstracts do not state {what}."
    return f"No abstract that mentions {', '.join(named)} states {what}."


def recorded_authors(hits: list[Hit], wanted: set[str]) -> str:
    """For a refused question about who wrote a paper: the authors its record lists (metadata, not
    the abstract), as one sentence to append to the refusal; "" when the record has none or it is
    not certain which paper is meant."""
    docs = {h.doc_id: h for h in hits if h.doc_id in wanted}
    if len(docs) != 1:
        return ""
    authors = next(iter(docs.values())).authors
    return f" Its record lists the authors: {authors}." if authors else ""


# "Compare ε-DPO with the reward-model paper that splits the reward into ...", "X and the work on Y both
# ...": a paper described, not named, beside one named. The description runs to the end of its clause.
# (a description's words may be quoted: "the 'prediction power' online control paper"; a hyphen typed as a
# dash, " - ", ends the clause as a dash does)
_DESCRIBES_PAPER = re.compile(r"\b(?:the|a)\s+(?:[\w/'‘’\"“”-]+\s+){0,5}?(?:paper|work|study|method|approach|framework)\s+"
                              r"(?:that|which|where|on|about|proposing|introducing|using|for)\s+"
                              r"(?:(?!\s-{1,3}\s)[^:;?.—–])+", re.I)


def described_other(question: str, hits: list[Hit], named: dict[str, list[str]],
                     similarity: Similarity) -> dict[str, list[str]]:
    """{description: [doc id]} for the paper a comparison describes beside the one it names, or {}.

    The retrieved abstract (not the named paper's) closest in meaning to the description is the
    paper meant: the asker compares two papers, and describes the one whose name they do not give.
    """
    # "the paper that ...", or a few words before "paper" ("the trust-region stochastic optimal control
    # paper"): the first description that is not of the named paper.
    m = next((m for m in descriptions(question, named) if not _beside_name(question, m, named)), None)
    if m is None:
        return {}
    best = closest_described(m.group(), hits, similarity, taken=doc_ids(named))
    return {m.group().strip(): [best]} if best is not None else {}


def described_apart(part: str, hits: list[Hit], named: dict[str, list[str]],
                    similarity: Similarity) -> dict[str, list[str]]:
    """{description: [doc id]} for a paper a part of a question describes, when the retrieved abstract
    closest to the description is none of the papers the question names; else {}.

    "Which robots does RoboRefer run on, and on which robot is the kungfu humanoid imitation paper
    deployed?": the second part asks about the paper it describes. ("... and how does the tree-structured
    method scale?" may describe the paper named before: then its abstract is the closest, and nothing new
    is named.)"""
    m = next(descriptions(part, named), None)
    if m is None:
        return {}
    best = closest_described(m.group(), hits, similarity, taken=frozenset())
    if best is None or any(best in docs for docs in named.values()):
        return {}
    return {m.group().strip(): [best]}


def descriptions(text: str, named: dict[str, list[str]]) -> Iterator[re.Match]:
    """The descriptions of a paper in the text ("the paper that ...", "the tactile RL paper", "the
    bandit-driven early-exit method"), in that order of kinds, leaving out those writing a name given."""
    found = [*_DESCRIBES_PAPER.finditer(text), *_PAPER_DESCRIBED.finditer(text), *_METHOD_DESCRIBED.finditer(text),
             *_DESCRIBED_ZH.finditer(text)]
    return (m for m in found if not any(n.casefold() in m.group().casefold() for n in named))


def _beside_name(question: str, m: re.Match, named: dict[str, list[str]]) -> bool:
    """Whether a description stands right beside a name it describes ("the symmetry paper Spot",
    "Spot, the symmetry paper"): then it is that paper's, not another's."""
    after = question[m.end():].lstrip(" ,(").casefold()
    before = question[:m.start()].rstrip(" ,(").casefold()
    return any(after.startswith(n.casefold()) or before.endswith(n.casefold()) for n in named)


# Words of a description that say it is one ("the ... paper that ...") rather than what it is about.
_DESCRIPTION_FRAME = frozenset(tokenize("the a paper work study method approach framework that which where on about "
                                        "proposing introducing using for one", compounds=False))
# Longest description (in content words) matched by its words; a longer one is a paraphrase, read by meaning.
_SHORT_DESCRIPTION = 4


def closest_described(description: str, hits: list[Hit], similarity: Similarity, *, taken: AbstractSet[str]) -> str | None:
    """The doc id of the retrieved abstract closest in meaning to a description of a paper, among those
    not `taken`; None when every one is (ties: the better-ranked hit)."""
    others = [h for h in hits if h.doc_id not in taken]
    if not others:
        return None
    if mostly_cjk(description):
        # "信任域那篇": read through its dictionary translation as well ("trust region"), as retrieval reads a
        # Chinese question (e5's cross-lingual vector of a few words is vague).
        english = english_query(description)
        words = set(tokenize(english, compounds=False)) - _DESCRIPTION_FRAME
        description = f"{description} {english}"
    else:
        # An abstract holding every word of a short description ("the trust-region paper") is the one it
        # describes, whatever a sentence model makes of a few words out of context.
        words = set(tokenize(description, compounds=False)) - _DESCRIPTION_FRAME
    holding = [h for h in others if words and words <= set(tokenize(
        f"{h.label or ''} {h.title or ''} {h.text}", compounds=False))] if len(words) <= _SHORT_DESCRIPTION else []
    if holding:
        others = holding
    sims = np.asarray(similarity([h.text for h in others], description), dtype=np.float32)
    return others[int(np.argmax(sims))].doc_id


def texts_of(hits: list[Hit], passages: dict[int, list[tuple[str, str]]] | None) -> dict[str, str]:
    """Doc id -> its label and every retrieved chunk of its text."""
    out: dict[str, str] = {}
    for i, h in enumerate(hits):
        chunks = [text for _, text in (passages or {}).get(i, [])] or [h.text]
        out[h.doc_id] = " ".join([out.get(h.doc_id, ""), h.label or "", h.title or "", *chunks])
    return out


# "One paper makes spiking nets work in continuous control, another drops the actor ...", "one manipulates
# neural populations ..., the other steers a trained network", "一篇……；另一篇……": papers described side by
# side, each by a clause opening with "one" / "another" / "the other" (一篇 / 另一篇).
_ONE_CLAUSE = re.compile(r"(?:^|(?<=[:;,.—–])|(?<=\sand)|(?<=\swhile)|(?<=\swhereas))\s*(?:and\s+|while\s+|whereas\s+)?"
                         r"(?:one|another|the\s+other)"
                         r"(?:\s+(?:paper|work|study|abstract|one|of them))?\s+[^,;?.—–]+?"
                         r"(?=[,;?.—–]|$|\s+(?:and|while|whereas)\s+(?:one|another|the\s+other)\b)"
                         r"|(?:^|(?<=[：:；;，,。]))\s*(?:有|还有|而)?(?:一篇|另一篇|另外一篇)[^，,；;。？?：:]+", re.I)


def one_and_another(question: str) -> list[str]:
    """The clauses describing papers side by side ("one ..., another ..."), two or more, or []."""
    clauses = [m.group().strip() for m in _ONE_CLAUSE.finditer(question)]
    opening = [c for c in clauses if re.match(r"(?:(?:and|while|whereas)\s+)?one\b|(?:有|还有|而)?一篇", c, re.I)]
    return clauses if len(clauses) >= 2 and opening else []


# "the tactile-sensing manipulation RL paper", "the work on time reversal": a paper described by a few words.
_PAPER_DESCRIBED = re.compile(r"\bthe\s+(?:(?:(?!(?:and|the|on|about|that|which)\b)[\w/'‘’\"“”-]+\s+){1,6}?(?:paper|work|study)\b|(?:paper|work|study)\s+"
                              r"(?:that|which|on|about|proposing|introducing|using)\s+[^:;?.,—–]+?(?=\s+and\s+the\b|[:;?.,—–]|\s-{1,3}\s|$))",
                              re.I)

# In a comparison naming one paper, "the bandit-driven early-exit method" describes the other by its
# method; not a method qualified only as a kind everyone knows ("the standard method", "the proposed
# approach"): that is no paper of the corpus.
_METHOD_DESCRIBED = re.compile(r"\bthe\s+(?:(?!(?:and|the|on|about|that|which|of|proposed|same|standard|existing|"
                               r"conventional|traditional|classical|classic|baseline|previous|prior|original|usual|"
                               r"common|other|new|naive|vanilla)\b)[\w/'‘’\"“”-]+\s+){1,6}?(?:method|approach|framework)\b"
                               # (one "that ..." or "for ..." goes on to describe: `_DESCRIBES_PAPER` reads it whole)
                               r"(?!\s+(?:that|which|where|on|about|proposing|introducing|using|for)\b)", re.I)


# "信任域那篇" ("the trust-region one"), "那篇把奖励拆成两部分的论文" ("the paper that splits the reward in two"):
# a paper a Chinese question describes by what it does, before 那篇 ("that one") or between 那篇 and 论文.
# (not from a conjunction joining it to a name before it: "ε-DPO 和按样本优先级学习奖励模型的那篇")
_DESCRIBED_ZH = re.compile(r"那篇[^，。？?：:；;]{2,40}?的?(?:论文|工作|文章|研究)"
                           r"|[^\s，。？?：:；;、,和与跟及][^\s，。？?：:；;、,]{1,19}?的?那篇")


def described_in_chinese(named: dict[str, list[str]]) -> dict[str, list[str]]:
    """The entries of `named` that are papers a Chinese question describes ("那篇把奖励拆成两部分的论文")."""
    return {k: docs for k, docs in named.items() if _DESCRIBED_ZH.fullmatch(k) or _ONE_CLAUSE.fullmatch(k)}


def described_papers(question: str, hits: list[Hit], similarity: Similarity) -> dict[str, list[str]]:
    """{description: [doc id]} for two or more papers a question describes without naming, or {}: each is
    the retrieved abstract closest in meaning to its description, a different one for each."""
    # (in Chinese: "多模态安全对齐那篇和搞 reward model 泛化那篇", "the multimodal safety alignment one and the
    # one on reward model generalisation")
    described = one_and_another(question) or [
        m.group().strip() for m in (_DESCRIBED_ZH if mostly_cjk(question) else _PAPER_DESCRIBED).finditer(question)]
    if len(described) < 2 or len(hits) < len(described):
        return {}
    out: dict[str, list[str]] = {}
    for text in described:
        best = closest_described(text, hits, similarity, taken=doc_ids(out))
        if best is None:
            return {}
        out[text] = [best]
    return out


def listed_after_name(question: str, description: str, named: dict[str, list[str]]) -> bool:
    """Whether a description joins a list of the papers named ("X, Y and the tactile work"), as a
    further paper of it, rather than saying more about one of them later in the question."""
    head = question[:question.find(description)].rstrip()
    before = re.sub(r"(?:,|\band|,\s*and)$", "", head, flags=re.I).rstrip(" ,")
    return before != head and any(before.casefold().endswith(n.casefold()) for n in named)
