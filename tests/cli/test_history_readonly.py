"""`rlgate history` reads: run where there is no history, it creates none and says how one is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app


def test_history_without_a_store_creates_nothing_and_hints_training_run(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLGATE_HISTORY", raising=False)
    result = CliRunner().invoke(app, ["history"])
    assert result.exit_code == 0, result.output
    assert "no gated checkpoints yet" in result.output and "monitor.training_run" in result.output
    assert list(tmp_path.iterdir()) == []
    as_json = CliRunner().invoke(app, ["history", "--json", "--history", str(tmp_path / "h" / "history.sqlite")])
    assert as_json.exit_code == 0 and '"runs": []' in as_json.output and list(tmp_path.iterdir()) == []
