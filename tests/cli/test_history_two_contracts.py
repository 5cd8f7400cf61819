"""One checkpoint gated under two contracts through `rlgate gate`: each contract keeps its own verdict in the
history, and `rlgate history` (text, --json, --contract, --html) answers for each contract separately."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_synthetic_folder
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.store.open import open_history

pytest.importorskip("lm_eval")
runner = CliRunner()
N_DOCS = 80

MATH = """schema_version: 1
name: math_rlvr
baseline: {checkpoint: base}
splits: {test_private: {visibility: release_gate_only, consult_budget: 3}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: gsm8k, split: test_private}]}
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.0}
monitor: {training_run: grpo-1}
"""
# the same checkpoints under a stricter contract: the primary must rise by 0.3, which checkpoint-300 does not
STRICT = MATH.replace("name: math_rlvr", "name: math_strict").replace(
    "gsm8k/exact_match/flexible-extract, min_delta: 0.0", "gsm8k/exact_match/strict-match, min_delta: 0.3")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "math.yaml").write_text(MATH)
    (root / "strict.yaml").write_text(STRICT)
    build_synthetic_folder(root / "base", "base", {"gsm8k": [i < 40 for i in range(N_DOCS)]})
    build_synthetic_folder(root / "checkpoint-300", "c300", {"gsm8k": [i < 56 for i in range(N_DOCS)]})
    build_synthetic_folder(root / "checkpoint-400", "c400", {"gsm8k": [i < 48 for i in range(N_DOCS)]})
    return root


def _gate(project: Path, contract: str, candidate: Path, out: Path) -> dict:
    result = runner.invoke(app, ["gate", str(project / contract), "--candidate", str(candidate),
                                 "--baseline", str(project / "base"), "--out", str(out)])
    assert result.exit_code in (0, 1, 3), result.output
    return json.loads((out / "decision.json").read_text())


def _history(*args: str) -> str:
    result = runner.invoke(app, ["history", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_each_contract_keeps_its_own_verdict_on_a_shared_checkpoint(project: Path, tmp_path: Path) -> None:
    math = _gate(project, "math.yaml", project / "checkpoint-300", tmp_path / "m300")
    strict = _gate(project, "strict.yaml", project / "checkpoint-300", tmp_path / "s300")
    _gate(project, "math.yaml", project / "checkpoint-400", tmp_path / "m400")
    assert math["decision"] == "release" and strict["decision"] != "release"

    data = json.loads(_history("--contract", str(project / "math.yaml"), "--json"))
    [run] = data["runs"]
    assert [(c["step"], c["contract"], c["decision"]) for c in run["checkpoints"]] == [
        (300, "math_rlvr", "release"), (400, "math_rlvr", "release")]
    assert run["best"].endswith("checkpoint-300")
    assert run["consultations"] == [{"task": "gsm8k", "used": 3, "budget": 3, "over_budget": False}]
    data = json.loads(_history("--contract", str(project / "strict.yaml"), "--json"))
    [run] = data["runs"]
    assert [(c["step"], c["contract"], c["decision"]) for c in run["checkpoints"]] == [
        (300, "math_strict", strict["decision"])]
    assert run["checkpoints"][0]["primary_metric"] == "gsm8k/exact_match/strict-match"

    # without --contract: the run listed once per contract, each with its own best and primary metric
    data = json.loads(_history("--json"))
    listed = {(r["run"], r["contract"]): r for r in data["runs"]}
    assert set(listed) == {("grpo-1", "math_rlvr"), ("grpo-1", "math_strict")}
    assert [c["decision"] for c in listed["grpo-1", "math_strict"]["checkpoints"]] == [strict["decision"]]
    assert listed["grpo-1", "math_rlvr"]["best"].endswith("checkpoint-300")
    text = _history()
    assert "training run grpo-1, contract math_rlvr: 2 gated checkpoint(s)" in text
    assert "training run grpo-1, contract math_strict: 1 gated checkpoint(s)" in text
    assert text.count("private split gsm8k: consulted 3") == 1  # the run's consultations, listed once

    page = tmp_path / "history.html"
    _history("--html", str(page))
    html = page.read_text()
    assert "math_rlvr" in html and "math_strict" in html


def test_a_checkpoint_without_a_step_keeps_its_place_under_a_second_contract(project: Path, tmp_path: Path) -> None:
    """A name without a step is placed by gate order: a second contract's gate of the same folder does not
    count as another checkpoint."""
    for name in ("first", "second"):
        shutil.copytree(project / "checkpoint-300", tmp_path / name)
    _gate(project, "math.yaml", tmp_path / "first", tmp_path / "o1")
    _gate(project, "strict.yaml", tmp_path / "first", tmp_path / "o2")
    _gate(project, "strict.yaml", tmp_path / "second", tmp_path / "o3")
    db = open_history(os.environ["RLGATE_HISTORY"])
    steps = {(Path(r.checkpoint).name, r.contract): r.step for r in db.history("grpo-1")}
    db.close()
    assert steps == {("first", "math_rlvr"): 0, ("first", "math_strict"): 0, ("second", "math_strict"): 1}
