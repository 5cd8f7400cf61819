"""`open_history`: plain paths, sqlite:/// URLs, unknown schemes, where the contract's history lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.vocabulary import load_contract
from rlgate.store.history import SQLiteHistory
from rlgate.store.open import history_url, open_history, redact
from rlgate.store.protocol import HistoryStore

CONTRACT = """schema_version: 1
name: hist
baseline: {checkpoint: base}
splits: {dev: {visibility: iteration}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: t, split: dev}]}
gates:
  primary: {metric: t/acc, min_delta: 0.0}
"""


def test_paths_and_sqlite_urls_open_the_same_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = open_history(tmp_path / "a.sqlite")
    assert isinstance(plain, HistoryStore) and isinstance(plain, SQLiteHistory)
    plain.record("r", 1, "c1", {"m": 1.0}, "release")
    absolute = open_history(f"sqlite:///{tmp_path / 'a.sqlite'}")  # sqlite:/// + /abs/path = four slashes
    assert [r.checkpoint for r in absolute.history("r")] == ["c1"]
    monkeypatch.chdir(tmp_path)
    relative = open_history("sqlite:///rel/h.sqlite")
    assert isinstance(relative, SQLiteHistory) and relative.path == Path("rel/h.sqlite")
    assert (tmp_path / "rel" / "h.sqlite").is_file()


def test_unknown_scheme_names_the_setting_and_the_fix() -> None:
    with pytest.raises(InputError) as raised:
        open_history("mysql://user:secret@db:3306/rlgate")
    error = raised.value
    assert "mysql://" in error.message and "secret" not in str(error)
    assert error.field is not None and "RLGATE_HISTORY" in error.field
    assert error.fix is not None and "postgresql://" in error.fix and "sqlite:///" in error.fix
    with pytest.raises(InputError, match="no file path"):
        open_history("sqlite://")


def test_redact_hides_passwords() -> None:
    assert redact("postgresql://gate:s3cr%40t@db.example:5432/rlgate") == "postgresql://gate:***@db.example:5432/rlgate"
    assert redact("postgresql://db/rlgate?user=u&password=pw&sslmode=require") == (
        "postgresql://db/rlgate?user=u&password=***&sslmode=require")
    assert redact("postgresql://gate@db/rlgate") == "postgresql://gate@db/rlgate"
    assert redact("/plain/path.sqlite") == "/plain/path.sqlite"


def test_history_url_contract_then_environment_then_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "contracts").mkdir()
    path = tmp_path / "contracts" / "c.yaml"
    path.write_text(CONTRACT)
    monkeypatch.delenv("RLGATE_HISTORY", raising=False)
    assert history_url(load_contract(path)) == str(tmp_path / ".rlgate" / "history.sqlite")
    monkeypatch.setenv("RLGATE_HISTORY", "postgresql://u:pw@127.0.0.1:5432/h")
    assert history_url(load_contract(path)) == "postgresql://u:pw@127.0.0.1:5432/h"
    path.write_text(CONTRACT + "monitor: {history: sqlite:///state/h.sqlite}\n")
    assert history_url(load_contract(path)) == str(tmp_path / "contracts" / "state" / "h.sqlite")
    path.write_text(CONTRACT + "monitor: {history: ../shared.sqlite}\n")
    assert history_url(load_contract(path)) == str(tmp_path / "shared.sqlite")
