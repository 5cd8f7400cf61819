"""One record per (run, checkpoint, contract): gating a checkpoint under a second contract keeps the first
contract's verdict; schema-2 stores (key run, checkpoint) are upgraded in place keeping every row; exports
of either schema import."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.store.open import open_history
from rlgate.store.records import HISTORY_SCHEMA_VERSION
from rlgate.store.transfer import export_history, import_history

#: the tables exactly as rlgate schema 2 created them (MIGRATIONS[1] + MIGRATIONS[2] of that release)
SCHEMA_2 = [
    "CREATE TABLE IF NOT EXISTS checkpoints (run TEXT NOT NULL, checkpoint TEXT NOT NULL, step BIGINT NOT NULL,"
    " metrics TEXT NOT NULL, decision TEXT, extra TEXT NOT NULL DEFAULT '{}',"
    " recorded_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run, checkpoint))",
    "CREATE INDEX IF NOT EXISTS checkpoints_by_step ON checkpoints (run, step)",
    "CREATE TABLE IF NOT EXISTS counters (run TEXT NOT NULL, key TEXT NOT NULL, value BIGINT NOT NULL,"
    " updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run, key))",
    "ALTER TABLE checkpoints ADD COLUMN contract TEXT NOT NULL DEFAULT ''",
    "CREATE TABLE IF NOT EXISTS rlgate_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "INSERT INTO rlgate_meta (key, value) VALUES ('schema_version', '2')",
]
#: rows a schema-2 store holds: a labelled run, an unlabelled record from schema 1, a judge calibration
ROWS_2 = [
    ("grpo", "ckpt-100", 100, '{"gsm8k/acc": 0.5}', "release", '{"summary": "s"}', 10.0, "math_rlvr"),
    ("grpo", "ckpt-200", 200, '{"gsm8k/acc": 0.4}', "block", "{}", 20.0, "math_rlvr"),
    ("grpo", "ckpt-50", 50, '{"gsm8k/acc": NaN}', None, "{}", 5.0, ""),
    ("judge-calibration/c/t", "calibration-0", 0, '{"judge_agreement": 0.8}', None, '{"judge": "fp"}', 1.0, ""),
]
INSERT = "INSERT INTO checkpoints (run, checkpoint, step, metrics, decision, extra, recorded_at, contract) VALUES "


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    return str(request.getfixturevalue("pg_url"))


def test_a_second_contract_on_the_same_checkpoint_keeps_the_first_verdict(store_url: str) -> None:
    db = open_history(store_url)
    db.record("grpo", 300, "ckpt-300", {"gsm8k/acc": 0.7}, "release", contract="math_rlvr")
    db.record("grpo", 300, "ckpt-300", {"ifeval/acc": 0.3}, "block", contract="instruct_safety")
    assert sorted((r.checkpoint, r.contract, r.decision) for r in db.history("grpo")) == [
        ("ckpt-300", "instruct_safety", "block"), ("ckpt-300", "math_rlvr", "release")]
    db.record("grpo", 300, "ckpt-300", {"gsm8k/acc": 0.8}, "research_only", contract="math_rlvr")  # re-gate
    kept = {r.contract: (r.decision, r.metrics) for r in db.history("grpo")}
    assert kept == {"math_rlvr": ("research_only", {"gsm8k/acc": 0.8}),
                    "instruct_safety": ("block", {"ifeval/acc": 0.3})}
    db.record("grpo", 400, "ckpt-400", {"gsm8k/acc": 0.75}, "release", contract="math_rlvr")
    best = db.best("grpo", "gsm8k/acc", contract="math_rlvr")
    assert best is not None and (best.checkpoint, best.contract) == ("ckpt-300", "math_rlvr")
    assert db.best("grpo", "gsm8k/acc", contract="instruct_safety") is None
    assert len(db.dump()[0]) == 3 and db.runs() == ["grpo"]
    db.close()


def test_import_keeps_each_contracts_record_and_the_newer_gate_of_each(store_url: str, tmp_path: Path) -> None:
    source = open_history(tmp_path / "source.sqlite")
    source.record("grpo", 300, "ckpt-300", {"m": 0.7}, "release", contract="a")
    source.record("grpo", 300, "ckpt-300", {"m": 0.1}, "block", contract="b")
    export_history(source, tmp_path / "export.json")
    assert {c["contract"] for c in json.loads((tmp_path / "export.json").read_text())["checkpoints"]} == {"a", "b"}
    target = open_history(store_url)
    target.record("grpo", 300, "ckpt-300", {"m": 0.9}, "research_only", contract="a")  # gated later than the export
    import_history(target, tmp_path / "export.json")
    import_history(target, tmp_path / "export.json")  # twice changes nothing
    kept = {r.contract: r.decision for r in target.history("grpo")}
    assert kept == {"a": "research_only", "b": "block"}
    source.close()
    target.close()


def test_an_export_written_by_schema_2_imports(store_url: str, tmp_path: Path) -> None:
    """The file as rlgate schema 2 wrote it: schema_version 2 on the file and on every record."""
    records = [{"schema_version": 2, "run": r[0], "checkpoint": r[1], "step": r[2], "metrics": json.loads(r[3]),
                "decision": r[4], "extra": json.loads(r[5]), "recorded_at": r[6], "contract": r[7]} for r in ROWS_2]
    counters = [{"run": "grpo", "key": "private_consultations:gsm8k", "value": 3, "updated_at": 30.0}]
    path = tmp_path / "v2.json"
    path.write_text(json.dumps({"schema_version": 2, "checkpoints": records, "counters": counters}, indent=1))
    db = open_history(store_url)
    assert import_history(db, path) == (4, 1)
    assert [(r.checkpoint, r.contract, r.decision) for r in db.history("grpo")] == [
        ("ckpt-50", "", None), ("ckpt-100", "math_rlvr", "release"), ("ckpt-200", "math_rlvr", "block")]
    assert db.consultations("grpo") == {"gsm8k": 3}
    db.close()


def _check_migrated(url: str) -> None:
    db = open_history(url)
    assert db.schema_version() == HISTORY_SCHEMA_VERSION == 3
    checkpoints, counters = db.dump()
    stored = [(r.run, r.checkpoint, r.step, r.decision, r.extra, r.recorded_at, r.contract) for r in checkpoints]
    assert stored == [(r[0], r[1], r[2], r[4], json.loads(r[5]), r[6], r[7]) for r in sorted(
        ROWS_2, key=lambda r: (r[0], r[2], r[6]))]
    assert checkpoints[0].metrics["gsm8k/acc"] != checkpoints[0].metrics["gsm8k/acc"]  # NaN kept
    assert [(c.run, c.key, c.value) for c in counters] == [("grpo", "private_consultations:gsm8k", 2)]
    assert db.last_judge_calibration("c/t") == {"accuracy": 0.8, "kappa": None, "judge": "fp",
                                                "checkpoint": "calibration-0"}
    # the new key holds: a second contract on a migrated checkpoint adds a record, its own contract replaces it
    db.record("grpo", 100, "ckpt-100", {"ifeval/acc": 0.2}, "block", contract="instruct")
    db.record("grpo", 200, "ckpt-200", {"gsm8k/acc": 0.6}, "release", contract="math_rlvr")
    assert sorted((r.checkpoint, r.contract, r.decision) for r in db.history("grpo")) == [
        ("ckpt-100", "instruct", "block"), ("ckpt-100", "math_rlvr", "release"),
        ("ckpt-200", "math_rlvr", "release"), ("ckpt-50", "", None)]
    db.close()
    assert open_history(url).schema_version() == 3  # opening again is a no-op


def _schema_2_store(url: str) -> None:
    """A store exactly as rlgate schema 2 left it, holding ROWS_2 and one consultation counter."""
    counter = "INSERT INTO counters VALUES ('grpo', 'private_consultations:gsm8k', 2, 3.0)"
    if "://" not in url:
        conn = sqlite3.connect(url)
        for statement in SCHEMA_2:
            conn.execute(statement)
        conn.executemany(INSERT + "(?, ?, ?, ?, ?, ?, ?, ?)", ROWS_2)
        conn.execute(counter)
        conn.execute("PRAGMA user_version = 2")
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        for statement in SCHEMA_2:
            pg.execute(statement)
        with pg.cursor() as cur:
            cur.executemany(INSERT + "(%s, %s, %s, %s, %s, %s, %s, %s)", ROWS_2)
        pg.execute(counter)


def test_a_schema_2_store_is_upgraded_in_place_keeping_every_row(store_url: str) -> None:
    _schema_2_store(store_url)
    _check_migrated(store_url)
    if "://" in store_url:
        return
    conn = sqlite3.connect(store_url)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3  # what rlgate before schema 2 checks
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "checkpoints_by_step" in indexes
    conn.close()


def test_a_failed_upgrade_leaves_the_schema_2_store_as_it_was(store_url: str, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """The upgrade is one transaction: a statement failing half-way (after the old table was dropped) leaves every
    row, the old key and version 2."""
    from rlgate.store import sql

    _schema_2_store(store_url)
    monkeypatch.setitem(sql.MIGRATIONS, 3, [*sql.MIGRATIONS[3][:-1], "SELECT no_such_function()"])
    with pytest.raises(InputError):
        open_history(store_url)
    monkeypatch.undo()
    if "://" in store_url:
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                                 "WHERE table_schema = current_schema()")}
            version = conn.execute("SELECT value FROM rlgate_meta").fetchone()[0]
            count = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    else:
        with sqlite3.connect(store_url) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = conn.execute("SELECT value FROM rlgate_meta").fetchone()[0]
            count = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    assert (tables, version, count) == ({"checkpoints", "counters", "rlgate_meta"}, "2", len(ROWS_2))
    _check_migrated(store_url)  # and the next opening upgrades it


def test_unlabelled_records_from_before_schema_2_under_a_contract_and_without_one(tmp_path: Path) -> None:
    """A record without a contract is listed under every --contract until that contract gates its checkpoint
    again; without --contract it joins a run's only contract, and is its own group beside several."""
    from rlgate.monitor.overview import build_overview
    from rlgate.store.records import of_contract

    db = open_history(tmp_path / "h.sqlite")
    db.record("grpo", 100, "ckpt-100", {"m": 0.5}, "release")  # as migrated from schema 1
    db.record("grpo", 200, "ckpt-200", {"m": 0.6}, "release")
    db.record("grpo", 200, "ckpt-200", {"m": 0.7}, "block", contract="a")
    assert [(r.checkpoint, r.contract) for r in of_contract(db.history("grpo"), "a")] == [("ckpt-100", ""),
                                                                                         ("ckpt-200", "a")]
    [run] = build_overview(db).runs
    assert run.contract is None and len(run.checkpoints) == 3
    db.record("grpo", 200, "ckpt-200", {"m": 0.1}, "block", contract="b")
    groups = [(r.contract, [c.checkpoint for c in r.checkpoints]) for r in build_overview(db).runs]
    assert groups == [("", ["ckpt-100", "ckpt-200"]), ("a", ["ckpt-200"]), ("b", ["ckpt-200"])]
    db.close()
