"""The history schema and queries shared by every SQL backend (SQLite, PostgreSQL).

One schema, one list of forward migrations, one set of statements: a backend only supplies a
connection, its transaction discipline and its parameter style. The schema version lives in the
`rlgate_meta` table; a store written by a newer rlgate is refused with a clear error instead of
being misread.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import text_only
from rlgate._core.text import stored_text, visible_surrogates
from rlgate.store.records import HISTORY_SCHEMA_VERSION, CheckpointRecord, CounterRecord, of_contract

#: version -> statements that bring a store from the version before to this one (never edited once released)
MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE TABLE IF NOT EXISTS checkpoints (run TEXT NOT NULL, checkpoint TEXT NOT NULL, step BIGINT NOT NULL,"
        " metrics TEXT NOT NULL, decision TEXT, extra TEXT NOT NULL DEFAULT '{}',"
        " recorded_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run, checkpoint))",
        "CREATE INDEX IF NOT EXISTS checkpoints_by_step ON checkpoints (run, step)",
        "CREATE TABLE IF NOT EXISTS counters (run TEXT NOT NULL, key TEXT NOT NULL, value BIGINT NOT NULL,"
        " updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run, key))",
    ],
    2: [  # the contract each checkpoint was gated under (`rlgate history --contract`); the version table
        "ALTER TABLE checkpoints ADD COLUMN contract TEXT NOT NULL DEFAULT ''",
        "CREATE TABLE IF NOT EXISTS rlgate_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    3: [  # one record per (run, checkpoint, contract): a second contract's gate no longer replaces the first's.
        # Neither backend can change a primary key in place: copy into a new table (same transaction), swap.
        "CREATE TABLE checkpoints_v3 (run TEXT NOT NULL, checkpoint TEXT NOT NULL, step BIGINT NOT NULL,"
        " metrics TEXT NOT NULL, decision TEXT, extra TEXT NOT NULL DEFAULT '{}',"
        " recorded_at DOUBLE PRECISION NOT NULL, contract TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY (run, checkpoint, contract))",
        "INSERT INTO checkpoints_v3 (run, checkpoint, step, metrics, decision, extra, recorded_at, contract)"
        " SELECT run, checkpoint, step, metrics, decision, extra, recorded_at, contract FROM checkpoints",
        "DROP TABLE checkpoints",
        "ALTER TABLE checkpoints_v3 RENAME TO checkpoints",
        "CREATE INDEX IF NOT EXISTS checkpoints_by_step ON checkpoints (run, step)",
    ],
}
assert max(MIGRATIONS) == HISTORY_SCHEMA_VERSION

CONSULT_KEY = "private_consultations:"
JUDGE_PREFIX = "judge-calibration/"
_COLUMNS = "run, checkpoint, step, metrics, decision, extra, recorded_at, contract"

Cursor = Any


def _record_from_row(row: Sequence[Any]) -> CheckpointRecord:
    """A stored row; JSON keeps a lone surrogate's escape, which reads back visible (see `text_only`), since no
    page or export could write the string it decodes to."""
    return CheckpointRecord(run=row[0], checkpoint=row[1], step=int(row[2]), metrics=text_only(json.loads(row[3]),
                            row[3]), decision=row[4], extra=text_only(json.loads(row[5]), row[5]),
                            recorded_at=float(row[6]), contract=row[7] or "")


def _record_row(rec: CheckpointRecord) -> tuple[Any, ...]:
    return (rec.run, rec.checkpoint, rec.step, json.dumps(rec.metrics, allow_nan=True), rec.decision,
            json.dumps(rec.extra, default=str), rec.recorded_at, rec.contract)


class SQLHistory:
    """Every history operation over a backend's `_read()` / `_write()` transactions.

    Subclasses set `location`, `param` (the placeholder, `?` or `%s`) and implement `_read`, `_write`,
    `_stored_version` and, where needed, `_migration_lock`; `_open()` must be called at the end of their `__init__`.
    """

    location: str
    param = "?"

    # backend hooks -----------------------------------------------------------------------------------
    def _read(self) -> AbstractContextManager[Cursor]:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Cursor]:
        raise NotImplementedError

    def _stored_version(self, cur: Cursor) -> int:
        raise NotImplementedError

    def _after_migration(self, cur: Cursor, version: int) -> None:
        """Backend extras once a migration ran (SQLite mirrors the version in PRAGMA user_version)."""

    def close(self) -> None:
        """Release the backend's connection, if it keeps one."""

    def __enter__(self) -> SQLHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # schema ------------------------------------------------------------------------------------------
    def _q(self, cur: Cursor, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return cur.execute(sql.replace("?", self.param) if self.param != "?" else sql,
                           tuple(stored_text(p) for p in params))

    def _check_newer(self, version: int) -> None:
        if version > HISTORY_SCHEMA_VERSION:
            raise InputError(f"the history at {self.location} has schema version {version}; this rlgate reads up "
                             f"to version {HISTORY_SCHEMA_VERSION} (a newer rlgate wrote it)",
                             field="RLGATE_HISTORY / monitor.history",
                             fix="upgrade rlgate (pip install -U rl-release-gate) on every machine sharing this "
                                 "history")

    def _open(self) -> None:
        """Bring the schema up to this rlgate's version (forward only), in one transaction."""
        with self._read() as cur:
            version = self._stored_version(cur)
        self._check_newer(version)
        if version == HISTORY_SCHEMA_VERSION:
            return
        with self._migration_lock(), self._write() as cur:
            version = self._stored_version(cur)  # another process may have migrated meanwhile
            self._check_newer(version)
            for target in range(version + 1, HISTORY_SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target]:
                    self._q(cur, statement)
            if version < HISTORY_SCHEMA_VERSION:
                self._q(cur, "INSERT INTO rlgate_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) "
                        "DO UPDATE SET value = excluded.value", (str(HISTORY_SCHEMA_VERSION),))
                self._after_migration(cur, HISTORY_SCHEMA_VERSION)

    def _version_value(self, value: object) -> int:
        """The stored `rlgate_meta.schema_version` as a number; anything else is a damaged store, not a traceback."""
        try:
            return int(str(value))
        except ValueError:
            raise InputError(f"the history at {self.location} has the unreadable schema version {str(value)!r}: "
                             "it is damaged", field="RLGATE_HISTORY / monitor.history",
                             fix="restore it from a backup or an --export copy") from None

    def _migration_lock(self) -> AbstractContextManager[object]:
        """Serialise concurrent first openers, held around the whole migration transaction (SQLite's
        write transaction already does this)."""
        return nullcontext()

    def schema_version(self) -> int:
        with self._read() as cur:
            return self._stored_version(cur)

    # checkpoints -------------------------------------------------------------------------------------
    def record(self, run: str, step: int, checkpoint: str, metrics: Mapping[str, float],
               decision: str | None = None, extra: Mapping[str, Any] | None = None,
               contract: str | None = None) -> CheckpointRecord:
        """Store a gated checkpoint under its contract; gating it again under the same contract replaces that
        record, under another contract adds one (each contract's verdict is kept)."""
        rec = CheckpointRecord(run=run, checkpoint=checkpoint, step=step,
                               metrics={k: float(v) for k, v in metrics.items()}, decision=decision,
                               extra=dict(extra or {}), recorded_at=time.time(), contract=contract or "")
        with self._write() as cur:
            self._upsert(cur, rec)
        return rec

    def _upsert(self, cur: Cursor, rec: CheckpointRecord, newer_only: bool = False) -> None:
        """Insert or replace the record of a checkpoint under a contract; `newer_only` keeps a stored record gated
        at the same time or later (an import never replaces a newer gate with an older copy)."""
        keep_newer = " WHERE excluded.recorded_at > checkpoints.recorded_at" if newer_only else ""
        self._q(cur, f"INSERT INTO checkpoints ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (run, checkpoint, contract) DO UPDATE SET step = excluded.step, "
                "metrics = excluded.metrics, decision = excluded.decision, extra = excluded.extra, "
                f"recorded_at = excluded.recorded_at{keep_newer}", _record_row(rec))

    def history(self, run: str) -> list[CheckpointRecord]:
        """A run's checkpoints in training order (step, then time of recording)."""
        with self._read() as cur:
            rows = self._q(cur, f"SELECT {_COLUMNS} FROM checkpoints WHERE run = ? ORDER BY step, recorded_at",
                           (run,)).fetchall()
        return [_record_from_row(r) for r in rows]

    def runs(self) -> list[str]:
        """Every training run with a gated checkpoint (judge calibrations are not training runs)."""
        with self._read() as cur:
            rows = self._q(cur, "SELECT DISTINCT run FROM checkpoints ORDER BY run").fetchall()
        return [r[0] for r in rows if not str(r[0]).startswith(JUDGE_PREFIX)]

    def best(self, run: str, metric: str, higher_is_better: bool = True,
             contract: str | None = None) -> CheckpointRecord | None:
        """The run's checkpoint with the best value of `metric` (the earliest one on ties), among the records of
        `contract` (and unlabelled ones from before labels) when given."""
        records = self.history(run) if contract is None else of_contract(self.history(run), contract)
        metric = visible_surrogates(metric)  # as the stored metric names read back
        scored = [r for r in records if metric in r.metrics and r.metrics[metric] == r.metrics[metric]]
        if not scored:
            return None
        sign = 1.0 if higher_is_better else -1.0
        return max(scored, key=lambda r: (sign * r.metrics[metric], -r.step))

    # counters ----------------------------------------------------------------------------------------
    def _bump(self, cur: Cursor, run: str, key: str, by: int) -> int:
        row = self._q(cur, "INSERT INTO counters (run, key, value, updated_at) VALUES (?, ?, ?, ?) "
                      "ON CONFLICT (run, key) DO UPDATE SET value = counters.value + excluded.value, "
                      "updated_at = excluded.updated_at RETURNING value", (run, key, by, time.time())).fetchone()
        return int(row[0])

    def bump_counter(self, run: str, key: str, by: int = 1) -> int:
        """Add `by` to a per-run counter atomically and return its new value."""
        with self._write() as cur:
            return self._bump(cur, run, key, by)

    def counter(self, run: str, key: str) -> int:
        with self._read() as cur:
            row = self._q(cur, "SELECT value FROM counters WHERE run = ? AND key = ?", (run, key)).fetchone()
        return int(row[0]) if row else 0

    def counters(self, run: str) -> dict[str, int]:
        with self._read() as cur:
            rows = self._q(cur, "SELECT key, value FROM counters WHERE run = ? ORDER BY key", (run,)).fetchall()
        return {k: int(v) for k, v in rows}

    def record_consultations(self, run: str, tasks: Sequence[str]) -> dict[str, int]:
        """Count one consultation of each private task, all in one transaction; return the new counts."""
        with self._write() as cur:
            return {task: self._bump(cur, run, CONSULT_KEY + task, 1) for task in tasks}

    def consultations(self, run: str) -> dict[str, int]:
        """How often each private task has been consulted in a training run."""
        return {key[len(CONSULT_KEY):]: value for key, value in self.counters(run).items()
                if key.startswith(CONSULT_KEY)}

    # judge calibration: one pseudo training run `judge-calibration/<contract>/<task>` per key --------
    def last_judge_calibration(self, key: str) -> dict[str, Any] | None:
        records = self.history(JUDGE_PREFIX + key)
        if not records:
            return None
        last = records[-1]
        return {"accuracy": last.metrics.get("judge_agreement"), "kappa": last.metrics.get("judge_kappa"),
                "judge": last.extra.get("judge"), "checkpoint": last.checkpoint}

    def record_judge_calibration(self, key: str, record: dict[str, Any], label: str | None = None) -> None:
        run = JUDGE_PREFIX + key
        metrics = {"judge_agreement": float(record["accuracy"])}
        if record.get("kappa") is not None:
            metrics["judge_kappa"] = float(record["kappa"])
        extra = {k: v for k, v in record.items() if k not in ("accuracy", "kappa")}
        with self._write() as cur:
            row = self._q(cur, "SELECT COUNT(*) FROM checkpoints WHERE run = ?", (run,)).fetchone()
            step = int(row[0])
            self._upsert(cur, CheckpointRecord(run=run, checkpoint=label or f"calibration-{step}", step=step,
                                               metrics=metrics, extra=extra, recorded_at=time.time()))

    # whole-store copy --------------------------------------------------------------------------------
    def dump(self) -> tuple[list[CheckpointRecord], list[CounterRecord]]:
        """Every checkpoint and counter, for `rlgate history --export`."""
        with self._read() as cur:
            rows = self._q(cur, f"SELECT {_COLUMNS} FROM checkpoints ORDER BY run, step, recorded_at").fetchall()
            counters = self._q(cur, "SELECT run, key, value, updated_at FROM counters ORDER BY run, key").fetchall()
        return ([_record_from_row(r) for r in rows],
                [CounterRecord(run=r[0], key=r[1], value=int(r[2]), updated_at=float(r[3])) for r in counters])

    def load(self, checkpoints: Sequence[CheckpointRecord], counters: Sequence[CounterRecord]) -> None:
        """Copy records in, in one transaction: checkpoints keep their times (the newer record of a checkpoint
        held on both sides wins), counters take the larger value (importing the same export twice changes nothing)."""
        with self._write() as cur:
            for rec in checkpoints:
                self._upsert(cur, rec, newer_only=True)
            for c in counters:
                self._q(cur, "INSERT INTO counters (run, key, value, updated_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (run, key) DO UPDATE SET value = CASE WHEN excluded.value > counters.value "
                        "THEN excluded.value ELSE counters.value END, updated_at = excluded.updated_at",
                        (c.run, c.key, c.value, c.updated_at))

