"""The offline answerer: extract the sentences that answer the question, each cited.

No model writes text here: every sentence of the answer is a sentence of a retrieved
abstract, followed by the `[n]` marker of the source it came from. When the evidence does
not cover the question, the answer is the fixed refusal sentence with no citations.

`_compose_one` runs the stages in order: which papers the question asks about
(`asked_papers`), its focus words, a question asked of each named paper answered paper by paper
(`_each_paper`), every sentence's evidence score (`scoring.score`, then
`details.raise_stating_sentences`), and the choice of sentences with the refusal decision.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Mapping, Sequence

import numpy as np

from rag.answering.asked import (TERM_ACRONYM as _TERM_ACRONYM, asked_detail, asked_kind_terms, asks_authors,
                                 asks_for_name, names_asked_kind, reports_test, states_what_is_asked)
from rag.answering.asked_papers import AND_AGAIN, ASKS_OF_EACH, ASKS_WHICH_PAPER, asked_papers, papers_counted
from rag.answering.candidates import ASKS_WHERE, Candidate, candidates, idf, in_source_order
from rag.answering.closeness import close_first_abstract, closest_papers, off_corpus, stands_out, with_closer_paper
from rag.answering.details import raise_stating_sentences
from rag.answering.field_terms import missing_field_terms
from rag.answering.framing import (COMPARISON_TERMS, EACH_TERMS, FRAMING_GLOSSES, QUANTITY_WORDS,
                                   QUESTION_WORDS, content_terms)
from rag.answering.named import (Similarity, described_apart, descriptions, doc_ids, labelling, named_by_label,
                                 not_stated, paper_names, papers_named, recorded_authors,
                                 shared_names, without_field_acronyms, written)
from rag.answering.glosses import gloss_groups, stating_quoted_term
from rag.answering.ordinals import ONE_DESCRIBED, pointed_papers
from rag.answering.parts import alternatives, own_terms, question_parts, without_paper_count
from rag.answering.quantity import asks_quantity as _asks_quantity, counted
from rag.answering.quoting import (cited, denial, denies, passages_shown, render, with_denial,
                                   with_each_paper, with_followers, with_next_best, with_proposal,
                                   with_writing)
from rag.answering.refusal import REFUSAL
from rag.answering.scoring import choose, from_first_papers, meaning_of, score, score_glosses, together
from rag.answering.wording import join_compounds, near_words, question_phrases
from rag.config import OfflineSettings
from rag.index.lexical import CJK, tokenize
from rag.index.translate import english_query, is_chinese
from rag.types import Hit

_ASKS_FOR_PAPER = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:paper|papers|work|method|model|framework|system|benchmark|approach)\b|\bpropos|\bintroduc", re.I)
# "What base models do T2I-R1 and REO-RL fine-tune?": papers named side by side, joined by "and" (or a
# comma, "&", 和, 与), are asked the same question, as "each" would say.
# ("released by X and by Y": the preposition may be repeated, `AND_AGAIN`)
_JOINED = rf"(?:\s*,\s*(?:and\s+)?|\s+{AND_AGAIN}|\s*&\s*|\s*(?:和|与|以及|及)\s*)"
# "What is proposed ...?", "Which method does X introduce?", "Which paper ...?": asks for the
# paper's own proposal.
_ASKS_PROPOSED = re.compile(r"\b(?:propos|introduc)\w*|\bwhich\s+(?:paper|papers|work|works)\b|提出|哪篇|哪些论文", re.I)

# The thresholds (coverage, gains, bonuses) are the `offline` settings group: see
# rag.config.OfflineSettings for what each one decides.


@dataclass
class OfflineResult:
    text: str
    cited: list[int]  # hit indices, in order of first citation
    refused: bool
    coverage: float  # the evidence score of the best sentence (0 when refused before scoring)
    # hit index -> the passage its citation shows: (chunk id, text); "" when it is the hit's own chunk
    quoted_chunks: dict[int, tuple[str, str]] = field(default_factory=dict)
    quoted: list[Candidate] = field(default_factory=list)  # the quoted sentences, in source order


def _refuse(reason: str = "", evidence: float = 0.0) -> OfflineResult:
    return OfflineResult(f"{REFUSAL} {reason}".strip(), [], True, evidence)


def compose(question: str, hits: list[Hit], **options) -> OfflineResult:
    """Answer from hits by sentence extraction, or refuse (see `_compose_one` for the options).

    A question asking two things ("X starts from which model, and which model does it beat?",
    "Does X still use Y? What replaces it?") is answered part by part: one sentence seldom states
    both, and the evidence of the one stating a part is diluted by the other part's words. The
    answer quotes what every answered part quoted; a part that is not answered adds nothing. When
    no part is answered, the question is answered (or refused) whole.
    """
    parts = question_parts(question)
    # "X and the trust-region one: what does the first propose?": a part pointing at a paper by its place
    # among those the question gave, or by describing it beside another part describing another, is that
    # paper's question alone (`ordinals`).
    pointed = pointed_papers(question, parts, hits, options.get("named"), options.get("similarity"))
    if len(parts) > 1 or pointed[0] is not None:
        results: list[OfflineResult] = []
        for i, part in enumerate(parts):
            if pointed[i] is not None:
                clause, paper = pointed[i]
                results.append(_compose_one(clause, hits, **{**options, "named": paper, "one_of": True,
                                                             "by_paper": False}))
                continue
            if i and not options.get("named") and _PRONOUN_BACK.search(part) and all(r.refused for r in results):
                # "Any papers on federated learning? What epsilon did they use?": "they" are what the parts before
                # asked for; where those found nothing, this part asks about nothing the corpus holds.
                results.append(_refuse())
                continue
            results.append(_compose_one(part, hits, **_part_options(part, options, question[:question.find(part)], hits)))
        answered = [r for r in results if not r.refused]
        if answered:
            # (a number of papers the question gives counts those of the whole answer: "哪两篇论文……？它们分别……？")
            return _together_answered(answered, hits, options.get("passages"), papers=papers_counted(question),
                                      first=doc_ids(options.get("named") or {}))
    return _compose_one(question, hits, **options)


# A pronoun pointing back at the paper a question named before ("its", "their", "they", "it").
_PRONOUN_BACK = re.compile(r"\b(?:its|their|they|it)\b", re.I)


def _points_back(part: str, names_here: dict[str, list[str]], hits: Sequence[Hit]) -> bool:
    """Whether a pronoun of the part points back at a paper named before it, not at the paper it names.

    "... and what is their GRPO variant called?": "their" stands before the name, and "GRPO" labels no
    paper; "... and how does LTS-P build its controller?": "its" follows LTS-P, a paper's own name, the
    subject of the clause, and is LTS-P's."""
    pronoun = _PRONOUN_BACK.search(part)
    if pronoun is None:
        return False
    first_name = min((m.start() for n in names_here if (m := written(n).search(part))), default=len(part))
    return pronoun.start() < first_name or not labelling(names_here, list(hits))


def _only_details(part: str, here: dict[str, list[str]], before: dict[str, list[str]], hits: Sequence[Hit]) -> bool:
    """Whether a part writes only details of the one paper the question named before it: names labelling no
    paper, and no description of another ("DynamicRAG 的 reranker ...？RL 训练花了多少 GPU 小时？" asks
    DynamicRAG's GPU hours, not about SnapViT, the one abstract writing "GPU"; not "..., and what's the GRPO
    variant in the image one called?", nor a part after two papers named)."""
    own = labelling(before, list(hits))
    return (not labelling(here, list(hits)) and len(papers_named(own)) == 1
            and next(descriptions(part, {}), None) is None and not ONE_DESCRIBED.search(part))


def _part_options(part: str, options: dict, preceding: str = "", hits: Sequence[Hit] = ()) -> dict:
    """The options a part of a question is answered with: a part writing some of the papers' names the
    question gives asks about those papers ("What benchmark does X use, and what base model does Y build
    on?"); one writing none ("... and what does it prioritise?") asks about every paper the question names,
    and one pointing back with a pronoun ("... and what is their GRPO variant called?") about the papers
    named before it (in `preceding`, the question's text before the part)."""
    named = options.get("named") or {}
    names_here = {n for n in named if written(n).search(part)}
    own = {d for n in names_here for d in named[n]}
    if named and not own and not _PRONOUN_BACK.search(part):
        # "What does LTS-P's sample complexity scale with, and what does the single-timescale actor-critic
        # analysis give?": a part writing no name, and no pronoun pointing back, that uses another paper's
        # label words asks about that paper (as a question doing so alone would).
        t = options.get("thresholds") or OfflineSettings()
        other = named_by_label(content_terms(part), list(hits), t.label_share, framing=QUESTION_WORDS)
        if other and not doc_ids(other) & doc_ids(named):
            return {**options, "named": other}
        # So does one describing another paper ("..., and on which robot is the kungfu imitation paper deployed?")
        if not other and options.get("similarity") is not None:
            other = described_apart(part, list(hits), named, options["similarity"])
            if other:
                return {**options, "named": other}
    if not own or own >= doc_ids(named):
        return options
    # (named before the part: in "X: what model do they build on, and what is their CoT variant?", the first
    # part's "they" is X, which it writes, not CoT, named after it)
    before = {n: docs for n, docs in named.items()
              if n not in names_here and written(n).search(preceding)}
    here = {n: named[n] for n in names_here}
    if before and (_points_back(part, here, hits) or _only_details(part, here, before, hits)):
        # "t2i-r1 base model? and what is their GRPO variant called": "their" is the paper the question
        # named before; the name this part writes is a detail of it (among thousands of papers, "GRPO" names
        # the papers about GRPO, not T2I-R1, which writes it only inside "BiCoT-GRPO").
        return {**options, "named": before}
    # (every name of those papers stays: "AndroidWorld" or "GPT-4o" beside SoLS name SoLS's abstract too)
    return {**options, "named": {n: docs for n, docs in named.items() if set(docs) <= own}}


def _compose_one(
    question: str,
    hits: list[Hit],
    *,
    similarity: Similarity | None = None,
    passages: dict[int, list[tuple[str, str]]] | None = None,
    named: dict[str, list[str]] | None = None,
    unknown_names: Sequence[str] = (),
    quoted: Mapping[str, list[str]] | None = None,
    thresholds: OfflineSettings | None = None,
    second_similarity: Similarity | None = None,
    closeness: Sequence[float | None] | None = None,
    word_vectors: Callable[[list[str]], "np.ndarray"] | None = None,
    one_of: bool = False,
    by_paper: bool = True,
) -> OfflineResult:
    """Answer from hits by sentence extraction, or refuse.

    Every quotable sentence gets an evidence score: its meaning's closeness to the question
    (`similarity(sentences)` -> cosines, from the bundled embedder) mixed with how much of the
    question's *focus* it states (IDF-weighted content words, minus the names that only say
    which paper is meant). The best sentence must reach `min_evidence` (fitted on the eval's dev
    split) or the answer is the refusal. `passages` maps a hit index to all (chunk_id, text)
    chunks of its document, so a long abstract is quoted from the chunk holding the answer.

    When the question names papers the corpus knows (`named`: name -> doc ids), only their
    abstracts are quoted; when it names something no abstract mentions (`unknown_names`) and
    nothing the corpus knows, it is refused: the corpus cannot be about it.

    `second_similarity` (a second English model's cosines) joins e5's in the meaning of an English
    question that names no paper, the question meaning may carry alone: e5's sentence cosines
    crowd into 0.80-0.88 for any ML sentence against any ML question, MiniLM's (trained on
    paraphrase pairs) spread wider, so a reworded question's own sentence stands out more. A
    question naming its paper is judged by whether a sentence states the asked detail, where the
    focus words decide; there e5 alone is used.

    `closeness` (per hit, the second model's cosine between the question and the hit's abstract)
    lets an English question naming no paper be answered from the first hit when that abstract
    as a whole is close to it (`abstract_closeness`), though no sentence restates the question.
    """
    t = thresholds or OfflineSettings()
    terms = content_terms(question)
    if not terms and not named:
        return _refuse("The question has no words to search for.")
    # A two- or three-letter acronym ("PDE", "GPU", "CNNs") is usually a field's term, not a paper's
    # name: a corpus that never writes it may still answer the question in words.
    unknown_names = [n for n in unknown_names if not _TERM_ACRONYM.fullmatch(n)]
    # (a name a retrieved abstract writes, a field's acronym too: the corpus holds what the question is about)
    writes_given = bool(doc_ids(named or {}) & {h.doc_id for h in hits})
    named = without_field_acronyms(named or {}, hits)
    if unknown_names and not named:
        return _refuse(f"No indexed abstract mentions {', '.join(unknown_names)}.")
    if not hits:
        return _refuse()
    crosslingual = is_chinese(question)
    # Which papers it asks about, named or described, and whether it asks for several.
    papers_asked = asked_papers(question, hits, terms, named=named, quoted=quoted, passages=passages,
                                similarity=similarity, one_of=one_of, by_paper=by_paper, t=t)
    named, wanted, many = papers_asked.named, papers_asked.wanted, papers_asked.many
    described, from_descriptions = papers_asked.described, papers_asked.from_descriptions
    if not wanted and not writes_given and off_corpus(closeness, t):
        # Close to no retrieved abstract as a whole: the corpus does not hold its topic. (Not when an abstract
        # writes a name the question gives: "Which paper uses PPO?" is far from any whole abstract in meaning,
        # being four words long, yet one abstract uses PPO.)
        return _refuse()
    if unknown_names and named and not many and not labelling(named, hits):
        # "How many GPU hours did FLOWER need?": the names the corpus knows ("GPU") are details, none
        # is a paper's own name, so the name it does not know is the paper asked about.
        return _refuse(f"No indexed abstract mentions {', '.join(unknown_names)}.")
    # A question naming a paper is answered from it alone; one asking for several papers may
    # name one as an example ("which papers study X, such as LTI systems?").
    allowed = [i for i, h in enumerate(hits) if not wanted or many or h.doc_id in wanted]
    if not wanted and not many and stands_out(closeness, 0, t):
        # A question naming no paper that is much closer in meaning to the first abstract than to any other
        # describes that paper: it is answered from it alone, not also from papers that only share its words.
        # (A Chinese question's closeness is MiniLM's over its dictionary translation.)
        allowed = [0]
    pool = [c for c in candidates(hits, passages, pointers=bool(ASKS_WHERE.search(question)))
            if c.hit_index in allowed]
    join_compounds(pool, question)
    if not pool:
        return _refuse()

    # A name says which paper is meant, not what is asked, so it is no focus word; but in a question
    # about several papers ("which papers study X, such as LTI systems?") a name is an example of X,
    # and a sentence stating it is evidence.
    # So is a name in a question asking which paper it is ("Which paper runs experiments on RCV1 and
    # WMDP?"): the asker does not know the paper, the names are what it is recognised by.
    # In a Chinese question a name that is not the paper's own ("T2I-R1 在 T2I-CompBench 上提升了多少？")
    # is the detail asked about, as in an English one: a word the answer must state.
    detail_names = [n for n in named if n not in paper_names(named, hits)] if crosslingual else []
    name_terms = (set() if many or ASKS_WHICH_PAPER.search(question) or described
                  else {x for n in named if n not in detail_names for x in tokenize(n, compounds=True)})
    focus = [x for x in terms if x not in name_terms and not CJK.match(x)]
    # "Compare X and Y": with two or more papers named, the comparison words are no focus. With no other
    # focus word the question asks what each paper is, answered below by each one's own sentences; with
    # one ("Compare the sample efficiency of X and Y") it is answered, or refused, by those words.
    # A Chinese question's words are weighed through their glosses ("比较" -> compare, "区别" -> difference).
    gloss_terms = ([set(tokenize(n, compounds=True)) for n in detail_names] + gloss_groups(question, name_terms)
                   if crosslingual else [])
    own = (own_terms(question, framing=QUESTION_WORDS | QUANTITY_WORDS)
           if (wanted or allowed == [0]) and not many and not crosslingual else None)
    if own is not None:
        # "X and Y both start from an existing model. Which base model does each use?": with its papers
        # named, the statement before the question says what they share, the question what is asked.
        focus = [x for x in focus if x in own]
    asks_to_compare = any(x in COMPARISON_TERMS for x in terms + [x for g in gloss_terms for x in g])
    comparing = len(wanted) >= 2 and asks_to_compare
    if comparing or one_of:
        focus = [x for x in focus if x not in COMPARISON_TERMS and not (one_of and x in EACH_TERMS)]
    if many:  # "Which papers ..., and what does each one propose?": "each" says how to answer, not what
        focus = [x for x in focus if x not in EACH_TERMS] or focus
    papers = papers_named(named)
    asks_each = asks_to_compare or bool(ASKS_OF_EACH.search(question))
    if by_paper and len(papers) >= 2 and not many and (focus or gloss_terms) \
            and (asks_each or _side_by_side(question, papers)):
        # "Compare X and Y: what kind of action space does each one target?" asks one question of each
        # paper. Each is answered, or not, as if asked of it alone: its own sentences judged by the
        # words of what is asked, not diluted by the other paper's words and by "each", "compare".
        options = dict(similarity=similarity, passages=passages, thresholds=t, second_similarity=second_similarity,
                       closeness=closeness, word_vectors=word_vectors)
        each = _each_paper(question, hits, named=named, papers=papers, unknown_names=unknown_names,
                           asks_each=asks_each, from_descriptions=from_descriptions, options=options)
        if each is not None:
            return each
    if _asks_quantity(question):
        focus = [x for x in focus if x not in QUANTITY_WORDS] or focus
    # "What RL algorithm drives the lookahead?": a sentence naming the algorithm ("use PPO for adaptive
    # multi-step lookahead") answers without the word; the rest of the question says which sentence.
    # (Not "Which papers introduce benchmarks ...?": there the kind is the topic the papers share.)
    if not many:
        kept = [x for x in focus if x not in asked_kind_terms(question)]
        focus = kept if any(x not in EACH_TERMS for x in kept) else focus
    # With the paper settled by its name, every sentence of it is "about" the name: what
    # separates the one that answers is its closeness to the rest of the question.
    # A question asking only about the named paper ("What does RoboRefer do?") is answered by
    # its abstract whatever the sentence: every sentence of it is evidence.
    # So is a Chinese one whose every word frames the request ("总结一下 X", "X 的主要贡献是什么？").
    about_paper_only = bool(wanted) and not focus and (
        not crosslingual or not any(g.isdisjoint(FRAMING_GLOSSES) for g in gloss_terms))
    asked = _without_names(question, named) if wanted and not about_paper_only and not described else question
    sims = (np.asarray(similarity([c.text for c in pool], asked), dtype=np.float32) if similarity
            else np.zeros(len(pool)))
    asks_for_paper = bool(_ASKS_FOR_PAPER.search(question))
    if crosslingual:
        sims = sims + t.crosslingual_shift  # e5 scores a Chinese question against English text lower
    meaning = meaning_of(sims, t.similarity_low, t.similarity_high)
    if second_similarity is not None and not crosslingual and not wanted and t.second_share > 0:
        sims2 = np.asarray(second_similarity([c.text for c in pool], asked), dtype=np.float32)
        meaning = (1 - t.second_share) * meaning + t.second_share * meaning_of(sims2, t.second_low, t.second_high)
    weights = {x: idf(x, pool) for x in focus}  # rare words across the retrieved sentences weigh more
    near = (near_words(pool, focus, question, word_vectors, t)
            if word_vectors is not None and focus and not crosslingual and t.word_match_low <= 1 else None)
    required = _or_denies(states_what_is_asked(question, named), question)
    # "What stimulation setup was X tested with?": the sentence reporting X's test states its setup, whether or
    # not it says "setup" (a kind asked for, "which benchmark", is checked by `names_asked_kind` below).
    tested = reports_test(question) if len(wanted) == 1 and not many and not crosslingual else None
    if tested is not None and required is not None:
        required = partial(_either, required, tested)
    score(pool, meaning, weights, t, lexical=bool(focus) and not crosslingual, asks_for_paper=asks_for_paper,
          named=bool(wanted), required=required,
          phrases=question_phrases(question, name_terms | QUESTION_WORDS), near=near,
          # (not in a question asking for several papers: there "X or Y" widens the topic, and a paper
          # stating either word would be quoted beside the ones stating the topic)
          alternatives=alternatives(question) if not many else None)
    if crosslingual:
        score_glosses(pool, meaning, gloss_terms, t, required=required)
    raise_stating_sentences(pool, question, hits, focus=focus, named=named, wanted=wanted, many=many,
                            crosslingual=crosslingual, required=required, tested=tested,
                            about_paper_only=about_paper_only, allowed=allowed, t=t)
    if crosslingual and not many:
        pool = stating_quoted_term(pool, question)
    chosen = choose(pool, q_terms=focus, weights=weights, many=many, t=t)
    if many and (count := papers_counted(question)):
        # "Two papers here ...: what does each do?": the asker says how many papers answer, so a further
        # paper quoted beside the best ones (and beside those the question names) is one not asked about.
        chosen = from_first_papers(chosen, count, hits, first=wanted)
    if comparing and not focus:  # "Compare X and Y": each named paper's best sentence, whatever the others score
        best: dict[int, Candidate] = {}
        for c in pool:
            if c.hit_index not in best or c.score > best[c.hit_index].score:
                best[c.hit_index] = c
        chosen = in_source_order(list(best.values()))
    # The answer's evidence: its best sentence, or what its sentences state together (a
    # question about two papers is answered by a sentence of each).
    jointly = together(chosen, focus, weights, t, lexical=not crosslingual)
    if required and not any(required(c.text) for c in chosen):
        jointly *= t.no_number_factor  # together too, one sentence must state what is asked (a number, a name)
    evidence = max(max(c.score for c in chosen), jointly)
    # A question naming no paper that asks which model, dataset or benchmark was used ("Which point
    # cloud dataset ...?") is answered only by naming one. Checked on the answer as a whole, not per
    # sentence: there it would favour any sentence holding a name over the one on the question's topic.
    named_thing = asks_for_name(question) if not wanted and required is None else None
    # Where the kind asked for has a family of words (`names_asked_kind`: "hardware", "robot",
    # "benchmark"), the answer names one only beside such a word: "Kungfu" in a sentence naming the
    # paper's topic is a name, but no robot the question asks for.
    kind = names_asked_kind(question, named) if named_thing is not None and not many else None
    if (named_thing is not None and not any((kind or named_thing)(c.text) for c in chosen)
            and denial(chosen, pool, focus, question) is None):  # nor denies its premise
        # "time reversal symmetry DRL paper - what benchmarks did they evaluate on and how ...?": the
        # paper whose sentences answer best may name the thing asked for in another sentence, by the
        # asked kind's word ("on the Robosuite and MetaWorld benchmarks"): that sentence joins the answer.
        first = max(chosen, key=lambda c: c.score).hit_index
        naming = [c for c in pool if c.hit_index == first and kind(c.text)] if kind is not None else []
        if naming:
            chosen = in_source_order(chosen + [max(naming, key=lambda c: c.score)])
        elif not any(named_thing(c.text) for c in chosen):
            # (an answer naming a thing, though not beside the kind's word, is not doubted: a name need
            # not stand there; it only gains the sentence that does, above)
            evidence *= t.no_number_factor
    # A question naming no paper, built on a technique of the field that no retrieved abstract
    # mentions ("How can knowledge distillation compress an LLM?"), asks about a topic the corpus
    # lacks: sentences that only sound like it are weaker evidence, the weaker the more such
    # terms the abstracts lack ("over-smoothing in graph neural networks": two).
    missing = (not wanted and t.missing_term_factor < 1
               and missing_field_terms(question, [h.text for h in hits]  # and the rest of the abstracts read whole:
                                       + [c.text for c in pool if c.chunk_id != hits[c.hit_index].chunk_id]))
    if missing:  # (a Chinese question's field terms are the only words of it checked one by one: they weigh more)
        evidence *= (t.missing_term_factor_zh if crosslingual else t.missing_term_factor) ** len(missing)
    if evidence < t.min_evidence and not wanted and not crosslingual and not missing:
        # (Not for a question built on a technique of the field that no retrieved abstract mentions: the
        # corpus lacks its topic, and an abstract merely close to it in meaning is no answer.)
        # Standing out from the other abstracts vouches for what a paper is about, not for a number or a
        # name it states, nor for its being the paper a "which paper ...?" question identifies (a wrong
        # identification is a wrong-paper answer): such questions are left to their sentences.
        # ... unless it stands out by the wider `identify_margin`: then it is the paper described, and its
        # sentences stating what is asked (a number) answer; a paper stating none is refused. (Not for a
        # name asked for: any name in a sentence passes for one, "nanoGPT" for a point cloud dataset.)
        by_margin = (required is None and named_thing is None and not _asks_quantity(question)
                     and not _ASKS_FOR_PAPER.search(question))
        near = close_first_abstract(closeness, allowed, t, by_margin=by_margin)
        own = [c for c in pool if c.hit_index == near]
        if near is None and not by_margin and named_thing is None and t.identify_margin is not None:
            near = close_first_abstract(closeness, allowed, t, by_margin=True, margin=t.identify_margin)
            own = [c for c in pool if c.hit_index == near and (required is None or required(c.text))]
        if near is not None and own:  # the question describes this paper: quote its best sentences
            chosen = choose(own, q_terms=focus, weights=weights, many=many, t=t)
            evidence = t.min_evidence
    if evidence < t.min_evidence:
        if wanted and unknown_names and asks_to_compare:
            # "Compare BraVE and FooNet": the paper compared with is what the corpus lacks
            return _refuse(f"No indexed abstract mentions {', '.join(unknown_names)}.", evidence)
        if wanted:
            reason = not_stated(hits, wanted, named, "it" if crosslingual else asked_detail(question, named))
            return _refuse(reason + (recorded_authors(hits, wanted) if asks_authors(question) else ""), evidence)
        return _refuse("", evidence)
    # A Chinese question's words reach English sentences through their dictionary glosses.
    denied = focus if not crosslingual else [x for x in content_terms(english_query(question)) if x not in name_terms]
    chosen = with_next_best(chosen, pool, t)  # after the decision: more context never makes an answer
    # A question asking for the papers that share a named thing ("Which papers deploy on the G1 humanoid?")
    # is answered by the papers writing it, not by those only close in meaning; each is quoted where it
    # writes the name.
    shared = shared_names(named, hits, question) if many and not described else {}
    if shared:
        writing = doc_ids(shared)
        chosen = with_writing([c for c in chosen if hits[c.hit_index].doc_id in writing] or chosen, pool,
                              [written(n) for n in shared])
    if comparing:  # "Compare X and Y: how does each ...?" is answered for each paper it names
        chosen = with_each_paper(chosen, pool, [{i for i, h in enumerate(hits) if h.doc_id in docs}
                                                for docs in named.values()])
    chosen = with_denial(with_followers(chosen, pool), pool, denied, question)
    # A question naming no paper does not know which paper answers it: each quoted paper's "we propose
    # ..." sentence tells the reader (and names the method), as for a question asking what is proposed.
    # So does a paper's part of a question asked of each paper it names ("Compare X and Y: how does each ...?").
    if _ASKS_PROPOSED.search(question) or not wanted or comparing or one_of:
        chosen = with_proposal(chosen, pool, every_paper=many or comparing or not wanted)  # context, not evidence
    if not wanted and not many:
        chosen = with_closer_paper(closest_papers(chosen, closeness, t), pool, closeness, allowed, t)
    return OfflineResult(render(chosen, hits), cited(chosen), False, evidence, passages_shown(chosen, passages), chosen)


def _each_paper(question: str, hits: list[Hit], *, named: dict[str, list[str]], papers: list[list[str]],
                unknown_names: Sequence[str], asks_each: bool, from_descriptions: bool,
                options: dict) -> OfflineResult | None:
    """Answer a question asked of each of two or more named `papers` (each a list of one paper's names) paper
    by paper, each part as if asked of its paper alone; None: answer it whole, as usual.

    `asks_each`: a word says so ("each", "compare"); otherwise the papers are named side by side.
    `from_descriptions`: the papers were guessed from descriptions. `options`: `_compose_one`'s.
    """
    t: OfflineSettings = options["thresholds"]
    passages = options["passages"]
    if not asks_each:
        # Papers named side by side, with no word saying "each": an answer judged whole that quotes
        # every one of them answers it; one that leaves a paper out is answered paper by paper.
        whole = _compose_one(question, hits, named=named, unknown_names=unknown_names, by_paper=False, **options)
        quoted_docs = {hits[i].doc_id for i in whole.cited}
        if not whole.refused and all(quoted_docs & set(named[names[0]]) for names in papers):
            return whole
    asked = without_paper_count(question, len(papers))
    def part(names: list[str], bar: OfflineSettings) -> OfflineResult:
        return _compose_one(_without_names(asked, {n: d for n, d in named.items() if n not in names}), hits,
                            named={n: named[n] for n in names}, one_of=True, by_paper=False,
                            **{**options, "thresholds": bar})
    parts = [part(names, t) for names in papers]
    answered = [r for r in parts if not r.refused]
    if t.each_evidence < t.min_evidence and (answered or all(p.coverage >= t.each_evidence for p in parts)):
        # The question presupposes that each paper it names answers it (the asker has read them):
        # once one paper's part is answered, or when every paper's part comes near, a refused part
        # is quoted at a lower bar, its best sentences in the question's words (a part refused for
        # lacking the number or name asked stays out: its evidence is cut by no_number_factor).
        lower = t.model_copy(update={"min_evidence": t.each_evidence})
        answered += [r for r in (part(names, lower) for names, p in zip(papers, parts)
                                 if p.refused and p.coverage >= t.each_evidence) if not r.refused]
    # (Papers guessed from descriptions are answered so only when each answers: a description may
    # pick the wrong paper, and the question judged whole then quotes the papers that do answer.)
    if answered and (not from_descriptions or len(answered) >= len(papers)):
        # A paper whose own answer falls short may still be quoted by the question judged whole,
        # where its sentence need only come near the other paper's ("a tree of sub-actions" beside
        # "a decision tree").
        whole = _compose_one(question, hits, named=named, unknown_names=unknown_names, by_paper=False, **options)
        done = {c.hit_index for r in answered for c in r.quoted}
        rest = [] if whole.refused else [c for c in whole.quoted if c.hit_index not in done]
        return _together_answered(answered + [replace(whole, quoted=rest)], hits, passages)
    if from_descriptions:  # not every described paper answers on its own: judged whole, as before the guess
        return _compose_one(question, hits, named={}, unknown_names=unknown_names, by_paper=False, **options)
    return None


def _either(first: Callable[[str], bool], second: Callable[[str], bool], text: str) -> bool:
    return first(text) or second(text)


def _side_by_side(question: str, papers: list[list[str]]) -> bool:
    """Whether two of the papers are named side by side: "X and Y", "X, Y" ("X 和 Y")."""
    by_name = {n.casefold(): i for i, names in enumerate(papers) for n in names}
    names = "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True))
    pair = re.compile(rf"(?<![\w-])({names})(?:'s)?{_JOINED}({names})(?![\w-])", re.I)
    return any(by_name[m[1].casefold()] != by_name[m[2].casefold()] for m in pair.finditer(question))


def _together_answered(results: list[OfflineResult], hits: list[Hit],
                       passages: dict[int, list[tuple[str, str]]] | None, *, papers: int | None = None,
                       first: set[str] | frozenset[str] = frozenset()) -> OfflineResult:
    """One answer quoting what each answered part of a question quoted, each sentence once; of at most
    `papers` papers when given (those whose doc ids are in `first`, then the best-ranked)."""
    seen: dict[tuple[int, str, int], Candidate] = {}
    for r in results:
        for c in r.quoted:
            seen.setdefault((c.hit_index, c.chunk_id, c.start), c)
    chosen = in_source_order(list(seen.values()))
    if papers:
        chosen = from_first_papers(chosen, papers, hits, first=first)
    return OfflineResult(render(chosen, hits), cited(chosen), False, max(r.coverage for r in results),
                         passages_shown(chosen, passages), chosen)


def _without_names(question: str, named: dict[str, list[str]] | None) -> str:
    out = question
    for name in named or {}:
        out = re.sub(re.escape(name), " ", out, flags=re.I)
    return " ".join(out.split()) or question


def _or_denies(required: Callable[[str], bool] | None, question: str) -> Callable[[str], bool] | None:
    """What a sentence must state, or, for a quantity, a denial that there is any of what is counted
    ("How much labeled data does X need?" is answered by "X does not require labeled data")."""
    terms = content_terms(counted(question))
    if required is None or not terms:
        return required
    return lambda text: required(text) or any(denies(text, x, question) for x in terms)
