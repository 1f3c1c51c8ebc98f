"""The answer log: every answer `rag ask` and `rag chat` give, kept in a local SQLite file.

Like `llm logs`: one row per answer with the question as typed and as searched, the answer,
its citations, the mode, the model, the timings and the settings hash. `rag log` lists and
searches it and exports Markdown; `rag ask -c` continues its last conversation.

Where: `RAG_LOG` (a path, or `off`), else `$XDG_STATE_HOME/rag/log.db` (default
`~/.local/state/rag/log.db`). Writing never breaks answering: `AnswerLog.record` turns every
file or database error into one warning (the first time) and stops logging for the process.
Reading opens the file read-only, so `rag log` never creates or changes it.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from rag.errors import ConfigError
from rag.text import normalize_question
from rag.types import Answer

LOG_ENV = "RAG_LOG"
_OFF = ("", "0", "off", "none", "false", "no")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    conversation TEXT NOT NULL,
    question TEXT NOT NULL,
    searched TEXT NOT NULL,
    answer TEXT NOT NULL,
    refused INTEGER NOT NULL,
    mode TEXT NOT NULL,
    model TEXT,
    citations TEXT NOT NULL,
    sources TEXT NOT NULL,
    timings TEXT NOT NULL,
    settings_hash TEXT
);
CREATE INDEX IF NOT EXISTS answers_by_conversation ON answers (conversation, id);
"""
_COLUMNS = ("id", "time", "conversation", "question", "searched", "answer", "refused", "mode", "model",
            "citations", "sources", "timings", "settings_hash")


def log_path(env: dict[str, str] | None = None) -> Path | None:
    """Return the log file: RAG_LOG, else the XDG state folder; None when RAG_LOG is off."""
    env = dict(os.environ) if env is None else env
    explicit = env.get(LOG_ENV)
    if explicit is not None:
        return None if explicit.strip().lower() in _OFF else Path(explicit).expanduser()
    state = env.get("XDG_STATE_HOME") or str(Path("~/.local/state").expanduser())
    return Path(state) / "rag" / "log.db"


def new_conversation() -> str:
    """A fresh conversation id."""
    return uuid.uuid4().hex[:12]


@dataclass
class LogEntry:
    """One logged answer."""

    id: int
    time: str  # ISO 8601, UTC
    conversation: str
    question: str  # as typed
    searched: str  # as retrieved (the follow-up rewrite)
    answer: str
    refused: bool
    mode: str
    model: str | None
    citations: list[dict[str, Any]] = field(default_factory=list)  # n, label, title, doc_id, url, score
    sources: list[str] = field(default_factory=list)  # labels of every retrieved document, in order
    timings: dict[str, float] = field(default_factory=dict)
    settings_hash: str | None = None

    @property
    def rewritten(self) -> bool:
        """True when the searched question is not just the typed one normalised."""
        return self.searched != normalize_question(self.question)

    @property
    def subject(self) -> str | None:
        """The label of the top cited source (what a follow-up refers to)."""
        if self.refused or not self.citations:
            return None
        top = min(self.citations, key=lambda c: c.get("n", 0))
        return (top.get("label") or top.get("title") or "").strip() or None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _row(ans: Answer, question: str, conversation: str) -> dict[str, Any]:
    citations = [{"n": c.n, "label": c.label, "title": c.title, "doc_id": c.doc_id, "url": c.url,
                  "score": c.score, "chunk_id": c.chunk_id} for c in sorted(ans.citations, key=lambda c: c.n)]
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "conversation": conversation,
        "question": question,
        "searched": ans.question,
        "answer": ans.text,
        "refused": int(ans.refused),
        "mode": ans.mode,
        "model": ans.model or None,
        "citations": json.dumps(citations, ensure_ascii=False),
        "sources": json.dumps([h.label or h.title or h.doc_id for h in ans.sources], ensure_ascii=False),
        "timings": json.dumps(ans.timings_ms),
        "settings_hash": ans.settings_hash or None,
    }


def _entry(row: sqlite3.Row) -> LogEntry:
    def load(text: str, default: Any) -> Any:
        try:
            value = json.loads(text or "null")
        except ValueError:
            return default
        return value if isinstance(value, type(default)) else default

    return LogEntry(
        id=row["id"], time=row["time"], conversation=row["conversation"], question=row["question"],
        searched=row["searched"], answer=row["answer"], refused=bool(row["refused"]), mode=row["mode"],
        model=row["model"], citations=load(row["citations"], []), sources=load(row["sources"], []),
        timings=load(row["timings"], {}), settings_hash=row["settings_hash"],
    )


class AnswerLog:
    """The answer log at `path` (None: logging is off)."""

    def __init__(self, path: Path | None, *, warn: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.warn = warn or (lambda message: None)
        self.broken = False

    @classmethod
    def default(cls, *, warn: Callable[[str], None] | None = None) -> "AnswerLog":
        """The log named by RAG_LOG / XDG_STATE_HOME."""
        return cls(log_path(), warn=warn)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    # -- writing -------------------------------------------------------------------------------
    def record(self, ans: Answer, *, question: str, conversation: str) -> int | None:
        """Append one answer; return its id, or None when it was not logged. Never raises.

        The first failure (a read-only folder, a file that is not a database, a full disk)
        is reported through `warn`; later answers of this process are not attempted.
        """
        if self.path is None or self.broken:
            return None
        row = _row(ans, question, conversation)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=5)
            try:
                with con:
                    con.executescript(_SCHEMA)
                    cur = con.execute(
                        f"INSERT INTO answers ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                        list(row.values()),
                    )
                return cur.lastrowid
            finally:
                con.close()
        except (sqlite3.Error, OSError) as e:
            self.broken = True
            reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
            self.warn(f"warning: cannot write the answer log {self.path} ({reason}); answers are not logged "
                      f"(hint: set {LOG_ENV} to a writable file, or {LOG_ENV}=off)")
            return None

    # -- reading -------------------------------------------------------------------------------
    def _query(self, sql: str, params: tuple = ()) -> list[LogEntry]:
        """Run a SELECT on the log opened read-only; a missing log holds nothing."""
        if self.path is None or not self.path.exists():
            return []
        try:
            con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
            try:
                con.row_factory = sqlite3.Row
                return [_entry(r) for r in con.execute(sql, params)]
            finally:
                con.close()
        except sqlite3.OperationalError as e:
            if "no such table" in str(e):  # created by another program, or before the first answer
                return []
            raise self._unreadable(e) from None
        except (sqlite3.Error, OSError) as e:
            raise self._unreadable(e) from None

    def _unreadable(self, e: Exception) -> ConfigError:
        return ConfigError(f"cannot read the answer log {self.path} ({getattr(e, 'strerror', None) or e})",
                           hint=f"move the file aside, or set {LOG_ENV} to another file")

    def recent(self, n: int = 10, *, search: str | None = None) -> list[LogEntry]:
        """The last `n` answers (all when n is 0), oldest first; `search` filters by a substring
        of the question, the searched question or the answer (case-insensitive for ASCII)."""
        where, params = "", ()
        if search:
            like = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            where = ("WHERE question LIKE ? ESCAPE '\\' OR searched LIKE ? ESCAPE '\\' "
                     "OR answer LIKE ? ESCAPE '\\'")
            params = (like, like, like)
        limit = f"LIMIT {int(n)}" if n > 0 else ""
        rows = self._query(f"SELECT {', '.join(_COLUMNS)} FROM answers {where} ORDER BY id DESC {limit}", params)
        return rows[::-1]

    def last_conversation(self, turns: int = 3) -> list[LogEntry]:
        """The last `turns` answers of the most recent conversation, oldest first."""
        last = self.recent(1)
        if not last:
            return []
        rows = self._query(
            f"SELECT {', '.join(_COLUMNS)} FROM answers WHERE conversation = ? ORDER BY id DESC LIMIT ?",
            (last[0].conversation, int(turns)),
        )
        return rows[::-1]


# -- Markdown export ---------------------------------------------------------------------------
def to_markdown(entries: list[LogEntry], *, clean: Callable[[str], str] = lambda s: s) -> str:
    """Render answers as Markdown, each with its reference list (`clean` makes text safe)."""
    out = ["# rag answers", ""]
    for e in entries:
        out += [f"## {clean(e.question)}", ""]
        stamp = [f"#{e.id}", e.time.replace("T", " ").replace("Z", " UTC"), e.mode]
        if e.model:
            stamp.append(clean(e.model))
        if e.settings_hash:
            stamp.append(f"settings {e.settings_hash}")
        out += [f"*{' · '.join(stamp)}*", ""]
        if e.rewritten:
            out += [f"Searched as: {clean(e.searched)}", ""]
        out += [clean(e.answer).strip(), ""]
        if e.citations:
            out += ["References:", ""]
            for c in e.citations:
                name = clean(c.get("label") or c.get("title") or c.get("doc_id") or "")
                parts = [f"[{c.get('n')}] **{name}**"]
                title = clean(c.get("title") or "")
                if title and title != name:
                    parts.append(title)
                parts.append(f"`{c.get('doc_id')}`")
                if c.get("url"):
                    parts.append(f"<{clean(c['url'])}>")
                out.append("- " + " — ".join(parts))
            out.append("")
    return "\n".join(out).rstrip() + "\n"
