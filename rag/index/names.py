"""Names the corpus knows: method, model, dataset and benchmark names found in the abstracts.

A *name* is a token a reader recognises as a proper name rather than a word: mixed case inside
the word (BraVE, RoboRefer, SnapViT), letters and digits together (T2I-R1, G1), or an acronym
(QSHNN, DPO). Greek-prefixed names keep their prefix (ε-DPO). Plain capitalised words
("Kungfu", "However") are not names.

The index maps each name (case-folded) to the documents that mention it, so a question that
names a paper can be answered from the abstracts that name it, and a question naming something
no abstract mentions can be refused. A name mentioned by many documents ("LLM", "GPT-4") is not
distinctive: it says what the question is about, not which paper.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterable, Mapping

NAMES_FILE = "names.json"
_EDGE_BEFORE = r"(?<![A-Za-z0-9_\-])"
_EDGE_AFTER = r"(?![A-Za-z0-9_])"
NAME = re.compile(
    _EDGE_BEFORE
    + r"(?:[α-ωΑ-Ω]-?)?"  # a Greek prefix: ε-DPO
    + r"(?=[A-Za-z0-9.\-]*(?:[a-z][A-Z]|[A-Z]{2}|[A-Za-z][0-9]|[0-9][A-Za-z])|[A-Z][a-z]*-[0-9]+(?:\.[0-9]|-[A-Za-z0-9]))"  # mixed case, acronym,
    + r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+|(?<=[0-9])\.[0-9][A-Za-z0-9]*)*"  # digits or a version: Qwen2.5-VL, Gemini-2.5-Pro
    + _EDGE_AFTER
)
# A name must have a letter, and pure numbers with a unit ("10B", "3D") are measurements, as are
# dimensions ("4x4", "512x512": abstracts write them "$4\times 4$" or "4 × 4", so a name lookup misses).
_MEASURE = re.compile(r"^\d+(?:\.\d+)?(?:[A-Za-z]{1,2}|(?:x\d+(?:\.\d+)?)+)$")
# How many documents may mention a name for it still to pick out papers: 3, or 0.2% of the
# corpus when that is more (5,000 abstracts: 10).
MIN_DISTINCT_DOCS = 3
DISTINCT_SHARE = 0.002


# A name with lower-case words hyphened after it ("LLM-based", "GPT-style", "RL-trained") is a
# description built on the name, not a name of its own: the name is the part before them.
_DESCRIBED = re.compile(r"^(.*?[A-Za-z0-9])-(?:based|style|like|aware|free|guided|driven|level|wise|specific|trained|"
                        r"generated|conditioned|augmented|enhanced|powered|centric|agnostic|only|friendly|inspired|"
                        r"oriented|dependent|independent|assisted|tuned|scale|sized)$")


# Greek letters as a keyboard spells them: a question writes "epsilon-DPO" for the abstract's "ε-DPO".
_GREEK = dict(zip("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
                  "sigma tau upsilon phi chi psi omega".split(), "αβγδεζηθικλμνξοπρστυφχψω"))
_GREEK["eps"] = "ε"  # the usual ASCII spelling of epsilon ("eps-DPO" for "ε-DPO")
_SPELLED_GREEK = re.compile(rf"^({'|'.join(_GREEK)})-(.+)$")


def _spelled_greek(key: str) -> str | None:
    """The case-folded name with a spelled-out Greek prefix written as the letter, or None."""
    m = _SPELLED_GREEK.match(key)
    return f"{_GREEK[m.group(1)]}-{m.group(2)}" if m else None


def extract_names(text: str) -> set[str]:
    """The name-like tokens of text, as written."""
    out = set()
    for m in NAME.finditer(text or ""):
        name = m.group(0)
        described = _DESCRIBED.match(name)
        if described and NAME.fullmatch(described.group(1)):
            name = described.group(1)
        if _MEASURE.match(name) or not any(ch.isalpha() for ch in name):
            continue
        out.add(name)
    return out


# A project's page or repository names it, often where the abstract's words do not ("Code at
# https://kungfubot.github.io" for a method the text calls only "a physics-based humanoid control
# framework"): the subdomain of a github.io page and the repository of a code host are names too.
_PROJECT_URL = re.compile(r"(?:https?://)?(?:(?P<page>[A-Za-z0-9][\w-]*)\.github\.io\b"
                          r"|(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co(?:/datasets|/spaces)?)/[\w.-]+/(?P<repo>[A-Za-z0-9][\w.-]*))",
                          re.I)


def url_names(text: str) -> set[str]:
    """The project names a document's links give, case-folded: "kungfubot" (kungfubot.github.io),
    "proxy-target" and "proxytarget" (github.com/xuzijie32/Proxy-Target)."""
    out = set()
    for m in _PROJECT_URL.finditer(text or ""):
        name = (m.group("page") or re.sub(r"\.git$", "", m.group("repo").rstrip("."))).casefold()
        if len(name) >= 3 and any(ch.isalpha() for ch in name):
            out |= {name, re.sub(r"[-_.]", "", name)}
    return out


# What names.json holds (2: also the documents' labels and titles, `NameIndex.titles`; 3: the names a
# question may type in lower case, `NameIndex.casual`; 4: the names of project links, `url_names`; 5: all-capital
# names among the casual ones; 6: a capital before a capitalised word among them, "XVerse"); an index saved with
# another format is rebuilt by the next ingest, readers go on with what it has.
FORMAT = 6
# Users type names in lower case ("snapvit pruning: ..."). A name the corpus always writes with a capital
# inside the word after a lower-case letter (SnapViT, PermLLM, JacobianODE) is no word in any case, so a
# question's lower-case word naming it names it, unless the corpus also writes it as a plain lower-case
# word, it is an English word or one's plural ("BraVE" is "brave", "CoTs" "cots"), or it is shorter than
# CASUAL_MIN letters.
# So does an all-capital one ("IOSTOM", "REBMBO": "iostom"), on the same terms: "SPOT", "DISCO" and "WISE"
# stay case-sensitive, in lower case they are English words. So does a capital before a capitalised word
# ("XVerse", "PCGrad"; not a plural acronym, "LLMs", which ends in one small letter).
_CAPITAL_INSIDE = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]{2,}")
_LOWER_WORD = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?![\w-])")
CASUAL_MIN = 4
# Fewest words of a label or title that a question must quote whole for it to name its paper: shorter
# ones ("Diffusion models") are a topic; names of one word are found as names.
TITLE_WORDS = 3


# Two capitalised words in a row ("Proxy Target"), each found at every position (overlapping pairs).
_TITLE_PAIR = re.compile(r"\b(?=([A-Z][a-z]+)\s+([A-Z][a-z]+)\b)")


def doc_ids(named: Mapping[str, list[str]]) -> set[str]:
    """The doc ids of the papers these names (name -> doc ids, as `NameIndex.lookup` returns) name."""
    return {d for docs in named.values() for d in docs}


def title_key(text: str) -> str:
    """Text as a title is compared: its words, case-folded. A CJK character is no part of a word, so a
    Chinese question writing a title against its characters ("论文Proxy target framework中") quotes it."""
    return " ".join(re.findall(r"[^\W\u3040-\u30ff\u3400-\u9fff]+(?:-[^\W\u3040-\u30ff\u3400-\u9fff]+)*",
                               text.casefold()))


# A name that reads as an acronym ("ViT", "RAG", "GRPO"): 3-6 letters, capitals after the first.
_ACRONYM_LIKE = re.compile(r"[A-Za-z][a-z]?[A-Z][A-Za-z]{0,3}")


@dataclass
class NameIndex:
    """Case-folded name -> ids of the documents mentioning it; quoted label or title -> its documents."""

    docs: dict[str, list[str]] = field(default_factory=dict)
    n_docs: int = 0
    titles: dict[str, list[str]] = field(default_factory=dict)
    casual: frozenset[str] = frozenset()  # keys a question may type in lower case (see CASUAL_MIN)

    @classmethod
    def build(cls, documents: Iterable[tuple[str, str]], titles: Iterable[tuple[str, str]] = (),
              is_word: Callable[[str], bool] | None = None) -> "NameIndex":
        """Index (doc_id, text) pairs; a document may come in several pieces (chunks, title).
        `titles`: (doc_id, label or title) pairs, found when a question quotes one whole.
        `is_word(w)`: whether a lower-case word is an English word (none is, when not given)."""
        found: dict[str, set[str]] = {}
        spellings: dict[str, set[str]] = {}
        plain: set[str] = set()
        ids: set[str] = set()
        for doc_id, text in documents:
            ids.add(doc_id)
            for name in extract_names(text):
                found.setdefault(name.casefold(), set()).add(doc_id)
                spellings.setdefault(name.casefold(), set()).add(name)
            for key in url_names(text):
                found.setdefault(key, set()).add(doc_id)
            plain.update(_LOWER_WORD.findall(text or ""))
        by_title: dict[str, set[str]] = {}
        for doc_id, title in titles:
            key = title_key(title or "")
            if len(key.split()) >= TITLE_WORDS:
                by_title.setdefault(key, set()).add(doc_id)
        casual = frozenset(key for key, written in spellings.items()
                           if len(key) >= CASUAL_MIN and _LOWER_WORD.fullmatch(key) and key not in plain
                           and all(_CAPITAL_INSIDE.search(w) or w.isupper() for w in written)
                           and not (is_word and (is_word(key) or key.endswith("s") and is_word(key[:-1]))))
        return cls({k: sorted(v) for k, v in found.items()}, len(ids), {k: sorted(v) for k, v in by_title.items()},
                   casual)

    def quoted_titles(self, question: str) -> dict[str, list[str]]:
        """The labels or titles (of 3+ words) the question quotes whole -> their documents: "the Proxy
        target framework" names that paper as surely as a name would, though none of its words is one."""
        asked = f" {title_key(question)} "
        keys = {key for word in set(asked.split()) for key in self._titles_by_first_word.get(word, ())}
        return {key: self.titles[key] for key in keys
                if f" {key} " in asked and len(self.titles[key]) <= self.max_docs}

    @cached_property
    def _titles_by_first_word(self) -> dict[str, list[str]]:
        """First word of each title key -> the keys: a question is compared only with the titles whose
        first word it uses, not with all of them (5,000 documents: 0.6 ms a question, linear in the corpus)."""
        out: dict[str, list[str]] = {}
        for key in self.titles:
            out.setdefault(key.split()[0], []).append(key)
        return out

    @property
    def max_docs(self) -> int:
        """Most documents a distinctive name may appear in."""
        return max(MIN_DISTINCT_DOCS, int(DISTINCT_SHARE * self.n_docs))

    def lookup(self, question: str) -> tuple[dict[str, list[str]], list[str]]:
        """Names of the question: (distinctive known name -> doc ids, names no document mentions)."""
        named: dict[str, list[str]] = {}
        unknown: list[str] = []
        if not self.n_docs:  # no index of names (built by an older version): no judgement
            return named, unknown
        for name in sorted(extract_names(question)):
            key = name.casefold()
            docs = self.docs.get(key)
            # An acronym's plural is the same name: "LLMs" for "LLM", "DiT" for "DiTs".
            if docs is None and key.endswith("s") and len(name) > 2 and name[-2].isupper():
                docs = self.docs.get(key[:-1])
            if docs is None and name[-1].isupper():
                docs = self.docs.get(key + "s")
            if docs is None and (greek := _spelled_greek(key)):
                docs = self.docs.get(greek)  # "epsilon-DPO" for "ε-DPO"
            if docs is None:
                docs = self._parts.get(key)  # "GRPO", written only inside "BiCoT-GRPO"
            if docs is None and _ACRONYM_LIKE.fullmatch(name):
                docs = self._endings.get(key)  # "ViT", written only as the end of "SnapViT"
            if docs is None:
                if not self._describes(name):
                    unknown.append(name)
            elif len(docs) <= self.max_docs:
                named[name] = docs
        seen = {n.casefold() for n in named}
        # A project name written as capitalised words ("the Proxy Target code") names the project its
        # link or text hyphenates ("github.com/.../Proxy-Target"): only a known hyphenated name counts.
        for first, second in _TITLE_PAIR.findall(question):
            key = f"{first}-{second}".casefold()
            docs = self.docs.get(key)
            if docs is not None and key not in seen and len(docs) <= self.max_docs:
                named[f"{first} {second}"] = docs
                seen.add(key)
        for word in _LOWER_WORD.findall(question):
            docs = self.docs.get(word) if word in self.casual and word not in seen else None
            if docs is not None and len(docs) <= self.max_docs:
                named[word] = docs  # "snapvit" for "SnapViT"
                seen.add(word)
        return named, unknown

    def _describes(self, name: str) -> bool:
        """Whether a hyphenated name is plain words and known names joined ("robot-RL", "video-LLM"): a
        description of what it is about, not a name no document mentions ("FooNet-v2" and "GPT-5" hold a part
        no document names; a Greek letter before a name makes a variant's name, "alpha-DPO"; so do known names
        alone, "GP-UCB")."""
        parts = name.split("-")
        words = [p for p in parts if p.isalpha() and p.islower() and len(p) >= 3 and p not in _GREEK]
        return bool(words) and all(p in words or p.casefold() in self.docs or p.casefold() in self._parts
                                   for p in parts)

    @cached_property
    def _endings(self) -> dict[str, list[str]]:
        """The last 3-6 letters of one-word names -> the documents mentioning the whole ("SnapViT" gives
        "vit", "DynamicRAG" "rag"): a name built by prefixing a known acronym writes that acronym."""
        return self._by_piece(lambda key: [key[-n:] for n in range(3, min(6, len(key) - 2) + 1)]
                              if key.isalnum() else [])

    @cached_property
    def _parts(self) -> dict[str, list[str]]:
        """Parts of hyphenated names -> the documents mentioning the whole ("BiCoT-GRPO" gives
        "bicot" and "grpo"), built on first use."""
        # Only looked up for name-like words of a question, so a plain part ("based") is harmless.
        return self._by_piece(lambda key: [p for p in key.split("-") if len(p) >= 2 and not _MEASURE.match(p)]
                              if "-" in key else [])

    def _by_piece(self, pieces: Callable[[str], Iterable[str]]) -> dict[str, list[str]]:
        """Each piece of a name (`pieces(key)`) -> the documents mentioning the whole name."""
        out: dict[str, set[str]] = {}
        for key, docs in self.docs.items():
            for piece in pieces(key):
                out.setdefault(piece, set()).update(docs)
        return {k: sorted(v) for k, v in out.items()}

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "n_docs": self.n_docs, "docs": self.docs, "titles": self.titles,
                           "casual": sorted(self.casual)}, ensure_ascii=False)

    @staticmethod
    def _titles_keyed(saved: dict) -> dict[str, list[str]]:
        """Titles saved by an older version keyed as this one compares them (it kept a hyphen standing
        alone or CJK characters in a key: "foo - bar" is now "foo bar"); titles of one key are merged.
        (Not done for names.json in this version's format, whose keys are already so: 18 ms a load at
        5,000 abstracts.)"""
        out: dict[str, set[str]] = {}
        for key, docs in saved.items():
            if len((new := title_key(str(key))).split()) >= TITLE_WORDS:
                out.setdefault(new, set()).update(str(d) for d in docs)
        return {k: sorted(v) for k, v in out.items()}

    @staticmethod
    def current(folder: Path) -> bool:
        """True when the saved names were made in this version's format (FORMAT)."""
        try:
            return json.loads((folder / NAMES_FILE).read_text(encoding="utf-8")).get("format") == FORMAT
        except (OSError, ValueError, AttributeError):
            return False

    @classmethod
    def load(cls, folder: Path) -> "NameIndex":
        """The saved index, or an empty one (an index built before names were kept)."""
        try:
            data = json.loads((folder / NAMES_FILE).read_text(encoding="utf-8"))
            titles = data.get("titles", {})
            return cls({str(k): list(v) for k, v in data["docs"].items()}, int(data["n_docs"]),
                       {str(k): list(v) for k, v in titles.items()} if data.get("format") == FORMAT
                       else cls._titles_keyed(titles),
                       frozenset(str(k) for k in data.get("casual", ())))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return cls()
