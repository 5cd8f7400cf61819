"""The history on both backends: the same behaviour, forward migrations, concurrent writers losing
nothing (8 processes x 50 gated checkpoints with private-split consultations), and connection errors
that name host:port and the fix without the password."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.store.open import open_history
from rlgate.store.records import HISTORY_SCHEMA_VERSION

WORKERS, CHECKPOINTS = 8, 50


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    return str(request.getfixturevalue("pg_url"))


def test_every_operation_on_both_backends(store_url: str) -> None:
    db = open_history(store_url)
    assert type(db).__name__ == ("SQLiteHistory" if "://" not in store_url else "PostgresHistory")
    db.record("run-a", 200, "ckpt-200", {"t/acc": 0.52}, "research_only", contract="c")
    db.record("run-a", 100, "ckpt-100", {"t/acc": 0.50}, "release", extra={"note": "first"}, contract="c")
    db.record("run-b", 100, "ckpt-100", {"t/acc": float("nan")}, "block")
    assert [(r.checkpoint, r.step, r.contract) for r in db.history("run-a")] == [("ckpt-100", 100, "c"),
                                                                                ("ckpt-200", 200, "c")]
    db.record("run-a", 200, "ckpt-200", {"t/acc": 0.55}, "release", contract="c")  # gated again: replaced
    assert [r.metrics["t/acc"] for r in db.history("run-a")] == [0.50, 0.55]
    best = db.best("run-a", "t/acc")
    assert best is not None and best.checkpoint == "ckpt-200"
    assert db.best("run-b", "t/acc") is None  # NaN is never best
    assert db.record_consultations("run-a", ["priv", "priv2"]) == {"priv": 1, "priv2": 1}
    assert db.record_consultations("run-a", ["priv"]) == {"priv": 2}
    assert db.consultations("run-a") == {"priv": 2, "priv2": 1} and db.counter("run-b", "x") == 0
    db.record_judge_calibration("c/t", {"accuracy": 0.8, "kappa": 0.6, "judge": "fp"})
    assert db.last_judge_calibration("c/t") == {"accuracy": 0.8, "kappa": 0.6, "judge": "fp",
                                                "checkpoint": "calibration-0"}
    assert db.runs() == ["run-a", "run-b"]  # judge calibrations are not training runs
    checkpoints, counters = db.dump()
    assert len(checkpoints) == 4 and len(counters) == 2
    db.close()


def test_export_into_the_other_backend_loses_nothing(tmp_path: Path, pg_url: str) -> None:
    sqlite = open_history(tmp_path / "h.sqlite")
    for step in range(5):
        sqlite.record("r", step, f"ckpt-{step}", {"t/acc": step / 10}, "release", extra={"s": step}, contract="c")
    sqlite.record_consultations("r", ["priv"])
    pg = open_history(pg_url)
    pg.load(*sqlite.dump())
    pg.load(*sqlite.dump())  # importing twice changes nothing
    assert pg.dump() == sqlite.dump()
    back = open_history(tmp_path / "back.sqlite")
    back.load(*pg.dump())
    assert back.dump() == sqlite.dump()


def test_newer_schema_is_refused_and_version_1_migrates(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:  # a store as rlgate schema 1 left it
        conn.execute("CREATE TABLE checkpoints (run TEXT NOT NULL, checkpoint TEXT NOT NULL, step BIGINT NOT NULL,"
                     " metrics TEXT NOT NULL, decision TEXT, extra TEXT NOT NULL DEFAULT '{}',"
                     " recorded_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run, checkpoint))")
        conn.execute("CREATE TABLE counters (run TEXT NOT NULL, key TEXT NOT NULL, value BIGINT NOT NULL,"
                     " updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run, key))")
        conn.execute("INSERT INTO checkpoints VALUES ('r', 'c', 1, '{\"m\": 1.0}', 'release', '{}', 1.0)")
    db = open_history(pg_url)
    assert db.schema_version() == HISTORY_SCHEMA_VERSION
    assert [(r.checkpoint, r.contract) for r in db.history("r")] == [("c", "")]
    db.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE rlgate_meta SET value = '7' WHERE key = 'schema_version'")
    with pytest.raises(InputError, match="schema version 7") as raised:
        open_history(pg_url)
    assert raised.value.fix is not None and "upgrade rlgate" in raised.value.fix


def test_connection_errors_name_host_port_and_fix_never_the_password(pg_url: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(pg_url)
    address = f"{parts.hostname}:{parts.port}"
    real = str(parts.password)
    cases = {
        "refused the password": pg_url.replace(f":{real}@", ":Wr0ng-S3cret@"),
        "has no database 'nowhere'": pg_url.rsplit("/", 1)[0] + "/nowhere",
    }
    for expected, url in cases.items():
        with pytest.raises(InputError) as raised:
            open_history(url)
        text = str(raised.value)
        assert expected in text and address in text and raised.value.fix, text
        assert "Wr0ng-S3cret" not in text and real not in text
    with pytest.raises(InputError) as raised:
        open_history(f"postgresql://u:Wr0ng-S3cret@127.0.0.1:{_closed_port()}/db")
    text = str(raised.value)
    assert "cannot reach" in text and "127.0.0.1:" in text and "Wr0ng-S3cret" not in text


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _gate_worker(url: str, worker: int) -> None:
    """What one gate job writes per checkpoint: the private-split consultations, then the checkpoint."""
    for i in range(CHECKPOINTS):
        store = open_history(url)  # opened once per decision, as decide_and_report does
        try:
            store.record_consultations("team-run", ["test_private", f"private_w{worker}"])
            store.record("team-run", worker * 1000 + i, f"w{worker}/checkpoint-{i}", {"t/acc": i / 100,
                         "worker": float(worker)}, "release" if i % 2 else "block", extra={"i": i}, contract="c")
        finally:
            store.close()


@pytest.mark.slow
def test_concurrent_gate_jobs_lose_nothing(store_url: str) -> None:
    # no store yet: the 8 first openers also race to create the schema
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_gate_worker, args=(store_url, w)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
        assert p.exitcode == 0
    db = open_history(store_url)
    records = db.history("team-run")
    assert len(records) == WORKERS * CHECKPOINTS
    assert {r.checkpoint for r in records} == {f"w{w}/checkpoint-{i}" for w in range(WORKERS)
                                               for i in range(CHECKPOINTS)}
    for r in records:
        w, i = divmod(r.step, 1000)
        assert r.metrics == {"t/acc": i / 100, "worker": float(w)} and r.extra == {"i": i}
        assert r.decision == ("release" if i % 2 else "block") and r.contract == "c"
    expected = {"test_private": WORKERS * CHECKPOINTS, **{f"private_w{w}": CHECKPOINTS for w in range(WORKERS)}}
    assert db.consultations("team-run") == expected


def test_a_foreign_checkpoints_table_is_refused_and_left_alone(pg_url: str) -> None:
    """A shared database may hold another tool's `checkpoints` table: rlgate must not alter it, nor fail later
    with a psycopg traceback; the error names the database and the fix (exit 2)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE checkpoints (id INTEGER, path TEXT)")
    with pytest.raises(InputError, match="not rlgate's") as info:
        open_history(pg_url)
    assert info.value.fix and "createdb" in info.value.fix
    with psycopg.connect(pg_url, autocommit=True) as conn:
        columns = conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'checkpoints' "
                               "ORDER BY ordinal_position").fetchall()
    assert [c[0] for c in columns] == ["id", "path"]


def test_a_user_without_the_right_to_create_tables_gets_an_input_error(pg_url: str) -> None:
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    role = f"ro_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'secret-ro'")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    parts = urlsplit(pg_url)
    url = urlunsplit((parts.scheme, f"{role}:secret-ro@{parts.hostname}:{parts.port}", parts.path, "", ""))
    with pytest.raises(InputError, match="permission denied") as info:
        open_history(url)
    assert "secret-ro" not in str(info.value) and role in str(info.value.fix)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


@pytest.mark.parametrize("odd", ["ckpt\udcff", "ckpt\x00x"])
def test_a_lone_surrogate_or_nul_in_a_stored_name_is_kept_visible_not_a_crash(store_url: str, odd: str) -> None:
    """A checkpoint path of non-UTF-8 bytes reaches Python as lone surrogates (no UTF-8 database encodes them),
    and PostgreSQL refuses NUL in text: both are stored as the visible `\\uXXXX` escape, found again by the same
    name, on both backends alike (so an export of one imports into the other)."""
    db = open_history(store_url)
    db.record(odd, 1, odd, {odd: 0.5}, "block", contract=odd)
    db.bump_counter(odd, odd)
    visible = odd.replace("\udcff", "\\udcff").replace("\x00", "\\u0000")
    [rec] = db.history(odd)
    assert (rec.run, rec.checkpoint, rec.contract) == (visible, visible, visible)
    assert rec.metrics == {odd.replace("\udcff", "\\udcff"): 0.5}  # a metric name is JSON, which holds NUL
    assert db.counter(odd, odd) == 1 and db.counters(odd) == {visible: 1} and db.runs() == [visible]
    best = db.best(odd, odd, contract=odd)
    assert best is not None and best.checkpoint == visible
    db.close()
