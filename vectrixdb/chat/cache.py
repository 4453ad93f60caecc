"""The answer cache and the usage ledger behind ChatWriter.

The cache is one SQLite file. A key is the SHA-256 of everything that decides an answer: the route,
the model or deployment, the messages, the schema and the sampling settings. Each answer is written
(and committed) the moment it arrives, so a run that stops resumes where it stopped and the same run
again makes no calls. Only answers are kept (ok, truncated); a reply that failed to parse, a refusal
or an error is never stored, so it is asked again next time (and a huge unparsable reply never
grows the file).

The cache is only a shortcut, so it heals as the embedding cache does: a damaged file (garbage,
truncated, a folder in its place) is moved aside with a warning and an empty one started. Each row
also carries a digest of its contents; a row whose digest does not match (a flipped bit) is ignored
with a warning, asked again and replaced.

The ledger keeps one row per `ask`: what it cost in requests, tokens, seconds and money, and whether
it came from the cache. Both are safe to share between threads.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import warnings
from dataclasses import asdict, astuple, dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Callable

CACHED_STATUSES = ("ok", "truncated")

_TABLE = """CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, raw TEXT, reason TEXT, model TEXT,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, seconds REAL NOT NULL,
    created REAL NOT NULL, digest TEXT)"""


def cache_key(**parts: Any) -> str:
    """SHA-256 of the parts as canonical JSON (sorted keys), so equal requests share one key."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Stored:
    """One answer as the cache holds it: the raw reply and what it cost when it was first asked."""

    status: str
    raw: str | None
    reason: str | None
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    def digest(self, key: str) -> str:
        return cache_key(key=key, row=list(astuple(self)))


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    return getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


class AnswerCache:
    """Answers in a SQLite file, keyed by `cache_key`; one connection guarded by a lock."""

    def __init__(self, path: str | PathLike[str]):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._run(lambda db: None)

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_TABLE)
            if "digest" not in {row[1] for row in db.execute("PRAGMA table_info(answers)")}:
                db.execute("ALTER TABLE answers ADD COLUMN digest TEXT")  # a cache from before digests
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        """`work(db)` under the lock; when the file turns out damaged, move it aside and do it once more."""
        with self._lock:
            try:
                if self._db is None:
                    self._db = self._open()
                return work(self._db)
            except sqlite3.DatabaseError as exc:
                if not _damaged(exc) and not self.path.is_dir():
                    raise  # locked, read-only, ...: not damage, so not ours to throw away
                self._move_aside(exc)
                self._db = self._open()
                return work(self._db)

    def _move_aside(self, exc: Exception) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        from vectrixdb.io import move_aside_sqlite

        aside = move_aside_sqlite(self.path)
        warnings.warn(f"answer cache {self.path} is damaged ({exc}); moved it aside to {aside.name} and started an "
                      "empty one (answers are asked again as needed)", RuntimeWarning, stacklevel=5)

    def get(self, key: str) -> Stored | None:
        """The answer stored under key; None when there is none, or when the row is not one this cache
        would have written (a status not cached, wrong types, a digest that does not match)."""
        row = self._run(lambda db: db.execute(
            "SELECT status, raw, reason, model, prompt_tokens, completion_tokens, seconds, digest "
            "FROM answers WHERE key = ?", (key,)).fetchone())
        if row is None:
            return None
        *fields, digest = row
        stored = Stored(*fields)
        sound = (stored.status in CACHED_STATUSES and isinstance(stored.raw, (str, type(None)))
                 and all(isinstance(v, int) and v >= 0 for v in (stored.prompt_tokens, stored.completion_tokens)))
        if sound and digest is not None and digest != stored.digest(key):
            warnings.warn(f"answer cache {self.path}: the row for {key[:12]}… does not match its digest (damaged); "
                          "it is asked again", RuntimeWarning, stacklevel=3)
            sound = False
        return stored if sound else None

    def put(self, key: str, answer: Stored) -> None:
        if answer.status not in CACHED_STATUSES:
            raise ValueError(f"only answers are cached ({', '.join(CACHED_STATUSES)}), not {answer.status!r}")

        def write(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, answer.status, answer.raw, answer.reason, answer.model, answer.prompt_tokens,
                        answer.completion_tokens, answer.seconds, time.time(), answer.digest(key)))
            db.commit()

        self._run(write)

    def __len__(self) -> int:
        return self._run(lambda db: db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


@dataclass(frozen=True)
class UsageRow:
    """What one `ask` spent. calls is the number of HTTP requests sent, retries included (0 from the
    cache; 2 after a retry for bad JSON; 3 after two 500s and an answer); answers the chat completions
    that came back; cost is None when no price was given for the model."""

    when: float
    model: str
    status: str
    cached: bool
    calls: int
    answers: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cost: float | None


def price_of(prices: dict | None, names: list[str | None], prompt_tokens: int, completion_tokens: int) -> float | None:
    """Dollars for the tokens at the first of `names` in the price table ($ per million tokens)."""
    for name in names:
        if prices and name and name in prices:
            rate = prices[name]
            return (prompt_tokens * float(rate.get("prompt", 0)) + completion_tokens * float(rate.get("completion", 0))) / 1e6
    return None


class Ledger:
    """Every ask of one writer, in order; `frame()` as a DataFrame and `totals()` as a dict."""

    def __init__(self) -> None:
        self._rows: list[UsageRow] = []
        self._lock = threading.Lock()

    def add(self, row: UsageRow) -> None:
        with self._lock:
            self._rows.append(row)

    def rows(self) -> list[UsageRow]:
        with self._lock:
            return list(self._rows)

    def frame(self):
        import pandas as pd

        columns = list(UsageRow.__dataclass_fields__)
        frame = pd.DataFrame([asdict(r) for r in self.rows()], columns=columns)
        frame["when"] = pd.to_datetime(frame["when"], unit="s", utc=True)
        return frame

    def totals(self) -> dict:
        """Sums over what this writer spent: requests are the HTTP requests sent (retries included),
        answers the completions received; tokens, seconds and cost count only requests really made (a
        cached answer costs nothing again); cost is None when no call had a price."""
        rows = self.rows()
        made = [r for r in rows if not r.cached]
        costs = [r.cost for r in made if r.cost is not None]
        by_status: dict[str, int] = {}
        for r in rows:
            by_status[r.status] = by_status.get(r.status, 0) + 1
        return {"asks": len(rows), "cached": len(rows) - len(made), "requests": sum(r.calls for r in rows),
                "answers": sum(r.answers for r in rows),
                "prompt_tokens": sum(r.prompt_tokens for r in made),
                "completion_tokens": sum(r.completion_tokens for r in made),
                "seconds": round(sum(r.seconds for r in made), 3),
                "cost": round(sum(costs), 6) if costs else None, "statuses": by_status}
