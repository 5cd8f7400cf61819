"""Checkpoint history: one SQLite file per project, safe under concurrent writers.

Every gated checkpoint is recorded with its metrics and decision, by training run and step, so rules
can look across checkpoints (best so far, consecutive drops, rollback target). A generic counter table
serves other layers (consultations of a private split per training run, judge drift checks).

Concurrency: the database runs in WAL mode (readers never block the writer), every write is one short
`BEGIN IMMEDIATE` transaction, and connections wait up to `timeout` seconds for a lock instead of
failing. Several `rlgate` processes gating checkpoints of the same project at once is the expected case.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlgate.errors import InputError

HISTORY_SCHEMA_VERSION = 1
DEFAULT_HISTORY = Path(".rlgate") / "history.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    run TEXT NOT NULL,
    checkpoint TEXT NOT NULL,
    step INTEGER NOT NULL,
    metrics TEXT NOT NULL,
    decision TEXT,
    extra TEXT NOT NULL DEFAULT '{}',
    recorded_at REAL NOT NULL,
    PRIMARY KEY (run, checkpoint)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_step ON checkpoints (run, step);
CREATE TABLE IF NOT EXISTS counters (
    run TEXT NOT NULL,
    key TEXT NOT NULL,
    value INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (run, key)
);
"""


def _create_schema(conn: sqlite3.Connection) -> None:
    for statement in filter(str.strip, _SCHEMA.split(";")):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {HISTORY_SCHEMA_VERSION}")


class CheckpointRecord(BaseModel):
    """One gated checkpoint of a training run."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = HISTORY_SCHEMA_VERSION
    run: str
    checkpoint: str
    step: int
    metrics: dict[str, float] = Field(default_factory=dict)
    decision: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    recorded_at: float


class CheckpointHistory:
    """The project's history database. Open it, record, query; every call is its own transaction."""

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the history folder: {exc.strerror}", file=self.path.parent) from None
        with self._connect() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > HISTORY_SCHEMA_VERSION:
                raise InputError(f"history database has schema version {version}; this rlgate reads up to "
                                 f"{HISTORY_SCHEMA_VERSION}", file=self.path, fix="upgrade rlgate")
            if version < HISTORY_SCHEMA_VERSION:
                self._write(conn, _create_schema)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open history database: {exc}", file=self.path) from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            yield conn
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise InputError(f"history database stayed locked for {self.timeout:g} s", file=self.path,
                                 fix="another rlgate process holds it; retry when it finishes") from None
            raise InputError(f"history database error: {exc}", file=self.path) from None
        except sqlite3.DatabaseError as exc:
            raise InputError(f"history database is unreadable: {exc}", file=self.path,
                             fix="move the file away; a new one is created on the next run") from None
        finally:
            conn.close()

    @staticmethod
    def _write(conn: sqlite3.Connection, action: Any) -> Any:
        """Run `action(conn)` inside one immediate (write-locking) transaction."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = action(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def record(self, run: str, step: int, checkpoint: str, metrics: Mapping[str, float],
               decision: str | None = None, extra: Mapping[str, Any] | None = None) -> CheckpointRecord:
        """Store a gated checkpoint; gating the same checkpoint again replaces its record."""
        rec = CheckpointRecord(run=run, checkpoint=checkpoint, step=step,
                               metrics={k: float(v) for k, v in metrics.items()}, decision=decision,
                               extra=dict(extra or {}), recorded_at=time.time())
        row = (rec.run, rec.checkpoint, rec.step, json.dumps(rec.metrics, allow_nan=True), rec.decision,
               json.dumps(rec.extra, default=str), rec.recorded_at)
        with self._connect() as conn:
            self._write(conn, lambda c: c.execute(
                "INSERT INTO checkpoints (run, checkpoint, step, metrics, decision, extra, recorded_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, checkpoint) DO UPDATE SET step = excluded.step, "
                "metrics = excluded.metrics, decision = excluded.decision, extra = excluded.extra, "
                "recorded_at = excluded.recorded_at", row))
        return rec

    def history(self, run: str) -> list[CheckpointRecord]:
        """A run's checkpoints in training order (step, then time of recording)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT run, checkpoint, step, metrics, decision, extra, recorded_at FROM checkpoints "
                                "WHERE run = ? ORDER BY step, recorded_at", (run,)).fetchall()
        return [CheckpointRecord(run=r[0], checkpoint=r[1], step=r[2], metrics=json.loads(r[3]), decision=r[4],
                                 extra=json.loads(r[5]), recorded_at=r[6]) for r in rows]

    def runs(self) -> list[str]:
        with self._connect() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT run FROM checkpoints ORDER BY run")]

    def bump_counter(self, run: str, key: str, by: int = 1) -> int:
        """Add `by` to a per-run counter atomically and return its new value."""
        with self._connect() as conn:
            row = self._write(conn, lambda c: c.execute(
                "INSERT INTO counters (run, key, value, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (run, key) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at "
                "RETURNING value", (run, key, by, time.time())).fetchone())
        return int(row[0])

    def counter(self, run: str, key: str) -> int:
        with self._connect() as conn:
            row = conn.execute("SELECT value FROM counters WHERE run = ? AND key = ?", (run, key)).fetchone()
        return int(row[0]) if row else 0

    def counters(self, run: str) -> dict[str, int]:
        with self._connect() as conn:
            return {k: int(v) for k, v in conn.execute("SELECT key, value FROM counters WHERE run = ? ORDER BY key",
                                                        (run,))}


def default_history_path(contract_path: str | Path | None = None) -> Path:
    """`$RLGATE_HISTORY` when set (one history shared by several checkouts or CI jobs), else
    `.rlgate/history.sqlite` beside the contract's project (its folder's parent when that is `contracts/`)."""
    override = os.environ.get("RLGATE_HISTORY")
    if override:
        return Path(override)
    if contract_path is None:
        return DEFAULT_HISTORY
    folder = Path(contract_path).resolve().parent
    if folder.name == "contracts":
        folder = folder.parent
    return folder / DEFAULT_HISTORY
