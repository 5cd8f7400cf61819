"""An inspect scorer that returned NaN gives no verdict: the sample is corrupt in every metric read from it,
listed and failing the gate (unless allow_corrupt), never a failure that sinks the baseline and passes a
candidate that is no better."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.harness import read_results

N = 40
SOLVED = 30  # the first 30 samples are solved, in both runs


def _log(folder: Path, broken: set[int]) -> Path:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import solver

    @solver
    def answer():  # type: ignore[no-untyped-def]
        async def solve(state, generate):  # type: ignore[no-untyped-def]
            state.output = ModelOutput.from_content(model="mock", content=f"answer {state.sample_id}")
            state.output.usage = ModelUsage(input_tokens=3, output_tokens=4, total_tokens=7)
            return state
        return solve

    @scorer(metrics=[mean()])
    def verdict():  # type: ignore[no-untyped-def]
        async def score(state, target):  # type: ignore[no-untyped-def]
            sample = int(state.sample_id)
            return Score(value=math.nan if sample in broken else 1.0 if sample < SOLVED else 0.0)
        return score

    task = Task(dataset=[Sample(id=i, input=f"q{i}", target="a") for i in range(N)], solver=answer(),
                scorer=verdict(), name="toy")
    inspect_eval(task, model="mockllm/model", log_dir=str(folder), display="none")
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nan_scores")
    return {"baseline": _log(root / "base", set(range(12))), "candidate": _log(root / "cand", set())}


def test_a_nan_verdict_is_a_listed_corrupt_task_success_and_not_averaged(runs: dict[str, Path]) -> None:
    task = read_results(runs["baseline"]).tasks["toy"]
    corrupt = {(c.doc_id, c.metric) for c in task.corrupt}
    assert {(i, "task_success") for i in range(12)} <= corrupt
    assert {(i, "verdict") for i in range(12)} <= corrupt
    assert task.metrics["none"]["task_success"] == pytest.approx(18 / 28)  # the 28 usable verdicts
    assert task.metrics["none"]["verdict"] == pytest.approx(18 / 28)


def test_gate_does_not_release_on_a_baseline_sunk_by_nan_verdicts(runs: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(
        {"schema_version": 1, "name": "s", "tasks": [{"task": "toy", "split": "test_public", "harness": "inspect"}]}))
    contract = {"schema_version": 1, "name": "c", "baseline": {"checkpoint": "mockllm/model"},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
                "gates": {"primary": {"metric": "toy/task_success", "min_delta": 0.0}}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(contract))
    args = ["gate", str(tmp_path / "c.yaml"), "--candidate", str(runs["candidate"]), "--baseline",
            str(runs["baseline"]), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output  # block: 12 corrupt baseline verdicts, allow_corrupt 0
    gate = json.loads((tmp_path / "out" / "decision.json").read_text())["gates"][0]
    assert gate["verdict"] == "error" and "12 corrupt documents" in gate["reason"]
    contract["gates"]["allow_corrupt"] = 12  # excluded: the 28 pairs left are the same in both runs
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(contract))
    result = CliRunner().invoke(app, args)
    gate = json.loads((tmp_path / "out" / "decision.json").read_text())["gates"][0]
    assert gate["n"] == 28 and gate["delta"] == pytest.approx(0.0), result.output
    assert result.exit_code != 0
