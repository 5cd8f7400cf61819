"""Judge answers cached like generations: keyed by the judge model's fingerprint and the exact prompt.

A re-run (or a run resumed after a crash) asks the judge only what it has not answered yet; every
answer is committed as soon as it arrives. Transport errors are not cached, unusable answers are:
they are what that judge said to that prompt.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_cache (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(fingerprint: str, prompt: str, salt: str = "") -> str:
    """sha256 over (fingerprint, salt, prompt); the salt separates repeated samples of one prompt."""
    return hashlib.sha256(json.dumps([fingerprint, salt, prompt]).encode("utf-8")).hexdigest()


class JudgeCache:
    """A small SQLite file under the run folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path))
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get(self, key: str) -> str | None:
        row = self._db.execute("SELECT response FROM judge_cache WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, fingerprint: str, response: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO judge_cache VALUES (?, ?, ?, ?)",
                         (key, fingerprint, response, time.time()))
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])

    def close(self) -> None:
        self._db.close()
