"""Checkpoint history: records, queries, counters, WAL mode, and concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from rlgate.errors import InputError
from rlgate.store.history import CheckpointHistory, default_history_path


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
    CheckpointHistory(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="schema version 99"):
        CheckpointHistory(path)


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
