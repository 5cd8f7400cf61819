"""Kill a live inspect run with SIGKILL mid-way, run it again: the samples that finished are recovered from
inspect's sample buffer (`recover_eval_log`) and kept (`eval_retry`), only the rest is generated, and the
results hold every sample, as an uninterrupted run would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("inspect_ai")

from rlgate.harness import read_results

REPO = Path(__file__).resolve().parents[2]
SAMPLES = 12
STEP_S = 0.5  # sample qN finishes N * STEP_S after the start (samples run concurrently)

#: a trusted local task whose "generation" appends the sample id to a file when it finishes
TASK = '''
import asyncio
import os
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import includes
from inspect_ai.solver import solver


@solver
def answer():
    async def solve(state, generate):
        await asyncio.sleep(float(os.environ["TEST_STEP_S"]) * int(str(state.sample_id)[1:]))
        with Path(os.environ["TEST_GENERATED"]).open("a") as handle:
            handle.write(f"{state.sample_id}\\n")
        state.output = ModelOutput.from_content(model="mock", content=f"answer {state.sample_id}")
        state.output.usage = ModelUsage(input_tokens=3, output_tokens=4, total_tokens=7)
        return state
    return solve


@task
def slow():
    samples = [Sample(id=f"q{i}", input=f"question {i}", target=f"answer q{i}") for i in range(1, LAST)]
    return Task(dataset=samples,
                solver=answer(), scorer=includes())
'''.replace("LAST", str(SAMPLES + 1))


def _project(root: Path) -> Path:
    (root / "tasks").mkdir()
    (root / "tasks" / "slow.py").write_text(TASK, encoding="utf-8")
    contract = {"schema_version": 1, "name": "resume", "baseline": {"checkpoint": "mockllm/model"},
                "splits": {"public": {"visibility": "nightly"}}, "trusted_task_paths": ["tasks"],
                "suites": [{"schema_version": 1, "name": "s", "tasks": [
                    {"task": "tasks/slow.py@slow", "name": "slow", "harness": "inspect", "split": "public"}]}],
                "gates": {"primary": {"metric": "slow/task_success", "min_delta": 0.0}}}
    path = root / "contract.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    return path


def _generated(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def test_killed_inspect_run_resumes_without_regenerating_or_losing(tmp_path: Path) -> None:
    contract = _project(tmp_path)
    generated = tmp_path / "generated.txt"
    env = {**os.environ, "TEST_GENERATED": str(generated), "TEST_STEP_S": str(STEP_S),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "rlgate.cli.app", "eval", str(contract), "--checkpoint", "mockllm/model",
               "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "cache")]
    child = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while len(_generated(generated)) < SAMPLES // 2 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(STEP_S / 2)  # between two samples finishing
    assert child.poll() is None, "the run ended before it could be killed"
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    before = _generated(generated)
    assert SAMPLES // 2 <= len(before) < SAMPLES

    env["TEST_STEP_S"] = "0"
    resumed = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming the interrupted run" in resumed.stdout + resumed.stderr
    after = _generated(generated)[len(before):]
    assert not set(after) & set(before), f"generated again after the resume: {sorted(set(after) & set(before))}"
    assert sorted(before + after) == sorted(f"q{i}" for i in range(1, SAMPLES + 1))

    task = read_results(tmp_path / "run").tasks["slow"]
    assert task.n_samples == SAMPLES and sorted(s.doc_id for s in task.samples) == sorted(before + after)
    assert all(s.scores["none"]["task_success"] == 1.0 for s in task.samples)  # nothing lost, nothing failed
    assert len(list((tmp_path / "run" / "logs").glob("*.eval"))) == 1
