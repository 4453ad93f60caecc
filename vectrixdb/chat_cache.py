"""The answer cache and the usage ledger behind ChatWriter.

The cache is one SQLite file. A key is the SHA-256 of everything that decides an answer: the route,
the model or deployment, the messages, the schema and the sampling settings. Each answer is written
(and committed) the moment it arrives, so a run that stops resumes where it stopped and the same run
again makes no calls. Only answers are kept (ok, parse_failed, truncated); a refusal or a transient
error is never stored, so it is asked again next time.

The ledger keeps one row per `ask`: what it cost in tokens, seconds and money, and whether it came
from the cache. Both are safe to share between threads.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CACHED_STATUSES = ("ok", "parse_failed", "truncated")

_TABLE = """CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, raw TEXT, reason TEXT, model TEXT,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, seconds REAL NOT NULL,
    created REAL NOT NULL)"""


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


class AnswerCache:
    """Answers in a SQLite file, keyed by `cache_key`; one connection guarded by a lock."""

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_TABLE)
        self._db.commit()

    def get(self, key: str) -> Stored | None:
        with self._lock:
            row = self._db.execute("SELECT status, raw, reason, model, prompt_tokens, completion_tokens, seconds "
                                   "FROM answers WHERE key = ?", (key,)).fetchone()
        return Stored(*row) if row else None

    def put(self, key: str, answer: Stored) -> None:
        if answer.status not in CACHED_STATUSES:
            raise ValueError(f"only answers are cached ({', '.join(CACHED_STATUSES)}), not {answer.status!r}")
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (key, answer.status, answer.raw, answer.reason, answer.model, answer.prompt_tokens,
                              answer.completion_tokens, answer.seconds, time.time()))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


@dataclass(frozen=True)
class UsageRow:
    """What one `ask` spent. calls is the number of requests made (0 from the cache; 2 after a retry
    for bad JSON); cost is None when no price was given for the model."""

    when: float
    model: str
    status: str
    cached: bool
    calls: int
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
        """Sums over what this writer spent: tokens, seconds and cost count only requests really made
        (a cached answer costs nothing again); cost is None when no call had a price."""
        rows = self.rows()
        made = [r for r in rows if not r.cached]
        costs = [r.cost for r in made if r.cost is not None]
        by_status: dict[str, int] = {}
        for r in rows:
            by_status[r.status] = by_status.get(r.status, 0) + 1
        return {"asks": len(rows), "cached": len(rows) - len(made), "requests": sum(r.calls for r in rows),
                "prompt_tokens": sum(r.prompt_tokens for r in made),
                "completion_tokens": sum(r.completion_tokens for r in made),
                "seconds": round(sum(r.seconds for r in made), 3),
                "cost": round(sum(costs), 6) if costs else None, "statuses": by_status}
