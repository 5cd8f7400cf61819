"""`rlgate watch`: bad arguments are one clear error (exit 2, no traceback); the log-mode status is one line
per step, with the reasons when the run is stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.cli.watch_progress import WatchStatus
from rlgate.watch.control import ControlSignal
from rlgate.watch.state import StepRecord
from tests.watch.helpers import write_contract


def test_a_missing_run_folder_or_contract_exits_2_without_a_traceback(tmp_path: Path) -> None:
    contract = write_contract(tmp_path / "c", tmp_path / "base", documents=2)
    result = CliRunner().invoke(app, ["watch", str(tmp_path / "nope"), "--contract", str(contract), "--once"])
    assert result.exit_code == 2 and "run folder" in result.output and "does not exist" in result.output
    assert "Traceback" not in result.output
    (tmp_path / "run").mkdir()
    result = CliRunner().invoke(app, ["watch", str(tmp_path / "run"), "--contract", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_an_empty_run_folder_with_once_stops_at_once(tmp_path: Path) -> None:
    contract = write_contract(tmp_path / "c", tmp_path / "base", documents=2)
    (tmp_path / "run").mkdir()
    result = CliRunner().invoke(app, ["watch", str(tmp_path / "run"), "--contract", str(contract), "--once"])
    assert result.exit_code == 0, result.output
    assert "rlgate watch stopped: --once" in result.output and "steps none" in result.output


def test_the_log_mode_status_is_one_line_per_step(capsys: pytest.CaptureFixture[str]) -> None:
    pause = ControlSignal(action="pause", step=6, reasons=["safety_worse (pause_manual_review): worse"])
    with WatchStatus("run", live=False) as status:
        status.step_started(6, "/r/checkpoint-6", ["dev"])
        status.task_started("candidate gsm8k", 10, 0)
        status.advanced("candidate gsm8k", 10)
        status.step_finished(StepRecord(step=6, checkpoint="/r/checkpoint-6", status="gated", decision="block",
                                        action="pause"), pause)
        status.waiting("waiting for checkpoints")
        status.waiting("waiting for checkpoints")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "gating step 6: /r/checkpoint-6 on dev"
    assert lines[1].startswith("step 6: block, asks pause; run signal pause")
    assert lines[2:] == ["  why: safety_worse (pause_manual_review): worse", "waiting for checkpoints"]
