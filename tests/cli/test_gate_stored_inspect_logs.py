"""Stored inspect logs are gated without the task's source: the log carries the task's identity, the contract's
task entry is matched by name, and the local task file is needed only to run the task.

Uses a real inspect log from the conformance corpus (skips where ../shared/data is absent).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()
LOG = "inspect/security_guide_gpt4omini_0.3.133"


def contract(tmp_path: Path) -> Path:
    task = {"task": "tasks/security_guide.py@security_guide", "harness": "inspect", "split": "test_public"}
    data = {"schema_version": 1, "name": "agent", "baseline": {"checkpoint": "base"},
            "splits": {"test_public": {"visibility": "nightly"}},
            "suites": [{"schema_version": 1, "name": "agent", "tasks": [task]}],
            "gates": {"primary": {"metric": "security_guide/task_success", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_stored_logs_gate_without_the_task_file_and_running_it_is_refused(tmp_path: Path,
                                                                         shared_data: Path) -> None:
    pytest.importorskip("inspect_ai")
    source = shared_data / "conformance" / LOG
    if not source.is_dir():
        pytest.skip(f"{LOG} is in ../shared/data/conformance only; point RLGATE_SHARED_DATA at a copy")
    for role in ("base", "cand"):
        shutil.copytree(source, tmp_path / role)
    path = contract(tmp_path)  # tasks/security_guide.py does not exist anywhere
    assert not (tmp_path / "tasks").exists()
    result = runner.invoke(app, ["gate", str(path), "--candidate", str(tmp_path / "cand"), "--baseline",
                                 str(tmp_path / "base"), "--out", str(tmp_path / "g")])
    assert result.exit_code in (0, 1, 3), result.output  # a decision, not exit 2
    decision = json.loads((tmp_path / "g" / "decision.json").read_text())
    gate = next(g for g in decision["gates"] if g["name"] == "security_guide/task_success")
    assert gate["candidate"] == pytest.approx(0.6875) and gate["n"] == 16  # the log's own accuracy, 16 samples
    from rlgate._core.errors import InputError
    from rlgate.contract.loader import load_contract
    from rlgate.harness.inspect import InspectHarness

    resolved = load_contract(path)
    with pytest.raises(InputError) as caught:  # running it (plan time, before any model) needs the file
        InspectHarness().plan(resolved, resolved.tasks, tmp_path / "e", tmp_path / "c", checkpoint="any-model")
    assert "tasks/security_guide.py does not exist" in str(caught.value) and caught.value.fix
