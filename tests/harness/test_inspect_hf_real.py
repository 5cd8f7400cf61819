"""The live agent path for real: the toolbox task through inspect's `hf/` provider on SmolLM2-135M-Instruct
(the project's real model, GGUF dequantised once into a transformers folder), on CPU, two samples.

Whatever it scores: the test checks that the run is real (model loaded, generated turns with tokens
and time in every trajectory, provenance naming the hf provider) and that every sample is kept.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")
pytest.importorskip("transformers")
pytest.importorskip("gguf")


from rlgate.cli.app import app
from rlgate.demo.agent import TASK_FILE
from rlgate.harness import read_results

pytestmark = pytest.mark.slow
runner = CliRunner()
LIMIT = 2



def test_toolbox_runs_live_through_inspect_hf_provider(smollm2_folder: Path, tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    shutil.copyfile(TASK_FILE, tmp_path / "tasks" / "toolbox.py")
    contract = {
        "schema_version": 1, "name": "toolbox-hf", "baseline": {"checkpoint": str(smollm2_folder)},
        "protocol": {"backend": "hf", "hf": {"device": "cpu", "dtype": "float32"},
                     "sampling": {"temperature": 0.0, "max_tokens": 48},
                     "agent": {"max_steps": 3, "max_tool_calls": 4, "token_limit": 20000, "time_limit_s": 120}},
        "splits": {"public": {"visibility": "nightly"}}, "trusted_task_paths": ["tasks"],
        "suites": [{"schema_version": 1, "name": "agent", "tasks": [
            {"task": "tasks/toolbox.py@toolbox", "harness": "inspect", "split": "public"}]}],
        "gates": {"primary": {"metric": "toolbox/task_success", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    out = tmp_path / "run"
    result = runner.invoke(app, ["eval", str(path), "--checkpoint", str(smollm2_folder), "--out", str(out),
                                 "--cache", str(tmp_path / "cache"), "--limit", str(LIMIT)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert manifest["model_loaded"] and manifest["model_spec"]["inspect_model"] == f"hf/{smollm2_folder}"
    run = read_results(out)
    assert run.provenance.model == f"hf/{smollm2_folder}"
    task = run.tasks["toolbox"]
    assert task.n_samples == LIMIT and len({s.doc_id for s in task.samples}) == LIMIT
    for sample in task.samples:
        traj = sample.trajectory
        assert traj is not None and traj.error is None, traj
        turns = [step for step in traj.steps if step.role == "assistant"]
        assert turns and any(step.content or step.tool_calls for step in turns)  # the model really generated
        assert traj.total_tokens and traj.total_tokens > 0 and traj.working_time_s is not None
        assert sample.scores["none"]["task_success"] in (0.0, 1.0)
    assert task.metrics["none"]["task_success"] is not None
