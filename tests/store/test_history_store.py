"""Checkpoint history: records, queries, counters, WAL mode, and concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.store.history import HISTORY_SCHEMA_VERSION, CheckpointHistory, default_history_path


def test_record_query_and_replace(tmp_path: Path) -> None:
    db = CheckpointHistory(tmp_path / ".rlgate" / "history.sqlite")
    db.record("run-a", 200, "ckpt-200", {"gsm8k/exact_match": 0.52}, "research_only")
    db.record("run-a", 100, "ckpt-100", {"gsm8k/exact_match": 0.50}, "release", extra={"note": "first"})
    db.record("run-b", 100, "ckpt-100", {"gsm8k/exact_match": 0.10}, "block")
    history = db.history("run-a")
    assert [(r.checkpoint, r.step) for r in history] == [("ckpt-100", 100), ("ckpt-200", 200)]
    assert history[0].extra == {"note": "first"} and history[0].decision == "release"
    db.record("run-a", 200, "ckpt-200", {"gsm8k/exact_match": 0.55}, "release")  # gated again: replaced
    assert [r.metrics["gsm8k/exact_match"] for r in db.history("run-a")] == [0.50, 0.55]
    assert db.runs() == ["run-a", "run-b"]
    assert db.history("nobody") == []


def test_counters(tmp_path: Path) -> None:
    db = CheckpointHistory(tmp_path / "h.sqlite")
    assert db.counter("run", "private:test_private") == 0
    assert [db.bump_counter("run", "private:test_private") for _ in range(3)] == [1, 2, 3]
    assert db.bump_counter("run", "judge:drift", by=5) == 5
    assert db.counters("run") == {"judge:drift": 5, "private:test_private": 3}
    assert db.counter("other", "private:test_private") == 0


def test_wal_mode_and_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    assert CheckpointHistory(path).schema_version() == HISTORY_SCHEMA_VERSION
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # rlgate before schema 2 read PRAGMA user_version: it must refuse this file too
    assert conn.execute("PRAGMA user_version").fetchone()[0] == HISTORY_SCHEMA_VERSION
    conn.execute("UPDATE rlgate_meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="schema version 99") as raised:
        CheckpointHistory(path)
    assert raised.value.fix is not None and "upgrade rlgate" in raised.value.fix


def test_a_version_1_file_is_migrated_forward_keeping_every_record(tmp_path: Path) -> None:
    """A history written by rlgate before schema 2 (tables as they were, PRAGMA user_version = 1)."""
    path = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE checkpoints (run TEXT NOT NULL, checkpoint TEXT NOT NULL, step INTEGER NOT NULL,
            metrics TEXT NOT NULL, decision TEXT, extra TEXT NOT NULL DEFAULT '{}', recorded_at REAL NOT NULL,
            PRIMARY KEY (run, checkpoint));
        CREATE INDEX checkpoints_by_step ON checkpoints (run, step);
        CREATE TABLE counters (run TEXT NOT NULL, key TEXT NOT NULL, value INTEGER NOT NULL,
            updated_at REAL NOT NULL, PRIMARY KEY (run, key));
        INSERT INTO checkpoints VALUES ('r', 'ckpt-100', 100, '{"m": 0.5}', 'release', '{"summary": "s"}', 1.5);
        INSERT INTO counters VALUES ('r', 'private_consultations:t', 3, 2.5);
        PRAGMA user_version = 1;
    """)
    conn.close()
    db = CheckpointHistory(path)
    assert db.schema_version() == HISTORY_SCHEMA_VERSION
    [rec] = db.history("r")
    assert (rec.checkpoint, rec.step, rec.metrics, rec.decision, rec.extra, rec.recorded_at, rec.contract) == (
        "ckpt-100", 100, {"m": 0.5}, "release", {"summary": "s"}, 1.5, "")
    assert db.consultations("r") == {"t": 3}
    db.record("r", 200, "ckpt-200", {"m": 0.6}, "release", contract="c")
    assert [r.contract for r in CheckpointHistory(path).history("r")] == ["", "c"]


def test_not_a_database_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError) as raised:
        CheckpointHistory(path)
    assert raised.value.file == path and raised.value.fix


def _worker(path: str, worker: int, n: int) -> None:
    db = CheckpointHistory(path)
    for i in range(n):
        db.bump_counter("run", "shared")
        db.record("run", worker * 1000 + i, f"w{worker}-{i}", {"m": float(i)}, "release")


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    CheckpointHistory(path)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(path), w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    db = CheckpointHistory(path)
    assert db.counter("run", "shared") == 100
    assert len(db.history("run")) == 100


def test_default_history_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "shared.sqlite"))
    assert default_history_path(tmp_path / "c.yaml") == tmp_path / "shared.sqlite"
    monkeypatch.delenv("RLGATE_HISTORY")
    (tmp_path / "contracts").mkdir()
    assert default_history_path(tmp_path / "contracts" / "c.yaml") == tmp_path / ".rlgate" / "history.sqlite"
    assert default_history_path(tmp_path / "c.yaml") == tmp_path / ".rlgate" / "history.sqlite"


def test_a_foreign_sqlite_database_is_refused_not_taken_over(tmp_path: Path) -> None:
    """Another application's SQLite file (or rlgate's generation cache) is not an empty history: opening it must not
    add rlgate's tables to it and go on as if no checkpoint had been gated (consultation counts would start at 0)."""
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="not an rlgate history") as info:
        CheckpointHistory(path)
    assert info.value.file == path
    conn = sqlite3.connect(path)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["users"]
    conn.close()


@pytest.mark.parametrize("damage", ["UPDATE rlgate_meta SET value = 'abc' WHERE key = 'schema_version'",
                                    "DELETE FROM rlgate_meta"])
def test_a_damaged_schema_version_is_an_input_error(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "h.sqlite"
    CheckpointHistory(path).record("r", 1, "ckpt-1", {"m": 0.5}, "release")
    conn = sqlite3.connect(path)
    conn.execute(damage)
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="it is damaged"):
        CheckpointHistory(path)
