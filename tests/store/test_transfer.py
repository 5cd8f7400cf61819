"""`rlgate history --export` / `--import` (rlgate.store.transfer): an import adds what the target lacks and never
replaces a newer record of the same checkpoint with an older one."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate.store.open import open_history
from rlgate.store.protocol import HistoryStore
from rlgate.store.transfer import export_history, import_history


def _stores(tmp_path: Path, pg_url: str | None) -> tuple[HistoryStore, HistoryStore]:
    source = open_history(tmp_path / "source.sqlite")
    target = open_history(pg_url) if pg_url else open_history(tmp_path / "target.sqlite")
    return source, target


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_older_export_never_overwrites_a_newer_gate_of_the_same_checkpoint(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    pg_url = request.getfixturevalue("pg_url") if backend == "postgres" else None
    source, target = _stores(tmp_path, pg_url)
    source.record("run", 100, "ckpt-100", {"m": 0.7}, "release", contract="c")  # gated first, copied away
    source.record("run", 200, "ckpt-200", {"m": 0.6}, "release", contract="c")
    export_history(source, tmp_path / "old.json")
    target.record("run", 100, "ckpt-100", {"m": 0.2}, "block", contract="c")  # gated again later: the newer gate
    import_history(target, tmp_path / "old.json")
    kept = {r.checkpoint: (r.decision, r.metrics) for r in target.history("run")}
    assert kept == {"ckpt-100": ("block", {"m": 0.2}), "ckpt-200": ("release", {"m": 0.6})}
    export_history(target, tmp_path / "new.json")  # and the newer record does replace an older one
    import_history(source, tmp_path / "new.json")
    assert {r.checkpoint: r.decision for r in source.history("run")} == {"ckpt-100": "block", "ckpt-200": "release"}
    source.close()
    target.close()


def test_a_nan_or_infinite_metric_survives_export_and_import(tmp_path: Path) -> None:
    """A metric without a value (NaN) is stored as such; its export must import back, not be refused as
    'not a history export' (pydantic writes NaN as null)."""
    import math

    source, target = _stores(tmp_path, None)
    source.record("run", 1, "ckpt-1", {"m": float("nan"), "cost/tokens": float("inf"), "k": 0.5}, "block",
                  extra={"gates": {"m": {"ci": [float("nan"), 1.0]}}}, contract="c")
    source.bump_counter("run", "private_consultations:t", 2)
    assert export_history(source, tmp_path / "h.json") == (1, 1)
    assert import_history(target, tmp_path / "h.json") == (1, 1)
    [rec] = target.history("run")
    assert math.isnan(rec.metrics["m"]) and rec.metrics["cost/tokens"] == math.inf and rec.metrics["k"] == 0.5
    assert math.isnan(rec.extra["gates"]["m"]["ci"][0])
    assert (rec.decision, rec.contract, rec.step) == ("block", "c", 1)
    assert target.consultations("run") == {"t": 2}


def test_a_nul_or_lone_surrogate_name_exported_from_sqlite_imports_into_postgres(tmp_path: Path, pg_url: str) -> None:
    """SQLite could hold NUL, PostgreSQL refuses it: both store the same visible escape, so a copy goes across."""
    source, target = _stores(tmp_path, pg_url)
    source.record("run\x00", 1, "ckpt\udcff", {"m\x00": 0.5}, "release", contract="c\x00")
    source.bump_counter("run\x00", "private_consultations:t\udcff")
    assert export_history(source, tmp_path / "h.json") == (1, 1)
    assert import_history(target, tmp_path / "h.json") == (1, 1)
    [rec] = target.history("run\x00")
    assert (rec.run, rec.checkpoint, rec.contract, rec.metrics) == ("run\\u0000", "ckpt\\udcff", "c\\u0000",
                                                                    {"m\x00": 0.5})  # JSON holds NUL
    assert target.consultations("run\x00") == {"t\\udcff": 1}
    source.close()
    target.close()
