"""The embedded history backend: one SQLite file per project, safe under concurrent writers.

Every gated checkpoint is recorded with its metrics and decision, by training run, step and contract, so rules
can look across checkpoints (best so far, consecutive drops, rollback target). Counters serve other
layers (consultations of a private split per training run, judge drift checks). Schema and queries are
shared with the PostgreSQL backend (rlgate.store.sql); open either through `rlgate.store.open_history`.

Concurrency: the database runs in WAL mode (readers never block the writer), every write is one short
`BEGIN IMMEDIATE` transaction, and connections wait up to `timeout` seconds for a lock instead of
failing. Several `rlgate` processes gating checkpoints of the same project at once is the expected case.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.store.records import HISTORY_SCHEMA_VERSION, CheckpointRecord, CounterRecord
from rlgate.store.sql import SQLHistory

__all__ = ["DEFAULT_HISTORY", "HISTORY_SCHEMA_VERSION", "CheckpointHistory", "CheckpointRecord", "CounterRecord",
           "SQLiteHistory", "default_history_path"]

DEFAULT_HISTORY = Path(".rlgate") / "history.sqlite"


_WHERE = ("point --history, $RLGATE_HISTORY or the contract's monitor.history at a .sqlite file in a writable "
          "folder, e.g. .rlgate/history.sqlite")


class SQLiteHistory(SQLHistory):
    """The project's history in one SQLite file. Every call is its own transaction on its own connection."""

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.timeout = timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the history folder: {exc.strerror}", file=self.path.parent,
                             fix=_WHERE) from None
        self._open()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            what = " (it is a folder)" if self.path.is_dir() else ""
            raise InputError(f"cannot open history database: {exc}{what}", file=self.path, fix=_WHERE) from None
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

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One immediate (write-locking) transaction, rolled back on any error."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _stored_version(self, cur: sqlite3.Connection) -> int:
        """`rlgate_meta.schema_version`; files from before that table carry it in PRAGMA user_version."""
        if cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rlgate_meta'").fetchone():
            row = cur.execute("SELECT value FROM rlgate_meta WHERE key = 'schema_version'").fetchone()
            if row is not None:
                return self._version_value(row[0])
        version = int(cur.execute("PRAGMA user_version").fetchone()[0])
        if version == 0:  # only a new, empty file may become a history; never another application's database
            tables = [r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            if tables and set(tables) <= {"checkpoints", "counters", "rlgate_meta"}:
                raise InputError("the history has rlgate's tables but no schema version: it is damaged",
                                 file=self.path, fix="restore it from a backup or an --export copy")
            if tables:
                raise InputError(f"not an rlgate history: an SQLite database of something else (tables: "
                                 f"{', '.join(tables[:5])})", file=self.path, fix=_WHERE)
        return version

    def _after_migration(self, cur: sqlite3.Connection, version: int) -> None:
        cur.execute(f"PRAGMA user_version = {int(version)}")  # what rlgate before schema 2 checks


CheckpointHistory = SQLiteHistory  # the name callers used before there was a second backend


def default_history_path(contract_path: str | Path | None = None) -> Path:
    """`.rlgate/history.sqlite` beside the contract's project (its folder's parent when that is `contracts/`),
    or `$RLGATE_HISTORY` when that names a file (see rlgate.store.open.history_url for URLs)."""
    override = os.environ.get("RLGATE_HISTORY")
    if override and "://" not in override:
        return Path(override)
    if contract_path is None:
        return DEFAULT_HISTORY
    folder = Path(contract_path).resolve().parent
    if folder.name == "contracts":
        folder = folder.parent
    return folder / DEFAULT_HISTORY
