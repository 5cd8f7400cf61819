"""A reward-model pair gated on RewardBench-style pairwise accuracy, overall and per category, through the CLI.

Two tiny classifiers are trained here (CPU, seconds): `good` prefers the chosen response everywhere, `flipped`
prefers the rejected one on safety pairs only. Gating one against the other must show the safety category's
verdict move and the chat category's stay, end to end (`rlgate eval` for each, then `rlgate gate`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.reward_models import build_reward_model, preference_pairs, write_pairs
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()
pytest.importorskip("torch")
pytest.importorskip("transformers")

CONTRACT = """schema_version: 1
name: rm_gate
baseline: {{checkpoint: {baseline}}}
splits:
  rm: {{visibility: nightly}}
suites:
  - schema_version: 1
    name: rewardbench_local
    tasks:
      - {{task: rewardbench, harness: reward, split: rm, data_files: pairs.jsonl}}
gates:
  regression:
    - {{metric: rewardbench/accuracy, max_drop: 0.05, test: significance, per_subtask: true}}
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("rms")
    return {"good": build_reward_model(root / "good"), "flipped": build_reward_model(root / "flipped", flip={"safety"})}


def _eval(root: Path, checkpoint: Path, out: str) -> None:
    result = runner.invoke(app, ["eval", str(root / "c.yaml"), "--checkpoint", str(checkpoint),
                                 "--out", str(root / out), "--cache", str(root / "cache")])
    assert result.exit_code == 0, result.output


def _setup(root: Path, models: dict[str, Path]) -> None:
    write_pairs(root / "pairs.jsonl", preference_pairs())
    (root / "c.yaml").write_text(CONTRACT.format(baseline="runs/base"))
    _eval(root, models["good"], "runs/good")
    _eval(root, models["flipped"], "runs/flipped")


def _gate(root: Path, baseline: str, candidate: str) -> tuple[int, str, dict]:
    out = root / f"out-{candidate}"
    result = runner.invoke(app, ["gate", str(root / "c.yaml"), "--baseline", str(root / "runs" / baseline),
                                 "--candidate", str(root / "runs" / candidate), "--out", str(out)])
    return result.exit_code, result.output, json.loads((out / "decision.json").read_text())


def test_reward_models_gate_per_category(models: dict[str, Path], tmp_path: Path) -> None:
    _setup(tmp_path, models)
    scores = json.loads((tmp_path / "runs" / "good" / "reward_scores.json").read_text())
    pairs = scores["tasks"][0]["pairs"]
    assert len(pairs) == 48 and {p["category"] for p in pairs} == {"chat", "safety"}
    assert all(p["chosen_score"] > p["rejected_score"] for p in pairs)  # the good RM agrees with every preference

    code, out, decision = _gate(tmp_path, "good", "flipped")  # the candidate RM learned safety backwards
    gates = {g["name"]: g for g in decision["gates"]}
    assert set(gates) == {"rewardbench/accuracy", "rewardbench/accuracy [rewardbench_chat]",
                          "rewardbench/accuracy [rewardbench_safety]"}
    assert code == 1, out
    safety, chat = gates["rewardbench/accuracy [rewardbench_safety]"], gates["rewardbench/accuracy [rewardbench_chat]"]
    assert safety["verdict"] == "fail" and safety["baseline"] == 1.0 and safety["candidate"] == 0.0
    assert safety["n"] == 24 and safety["metric"] == "rewardbench_safety/accuracy/none"
    assert chat["verdict"] == "pass" and chat["candidate"] == 1.0
    assert gates["rewardbench/accuracy"]["verdict"] == "fail" and gates["rewardbench/accuracy"]["n"] == 48

    code, out, decision = _gate(tmp_path, "flipped", "good")  # the other way round: every category holds
    assert code == 0, out
    assert {g["name"]: g["verdict"] for g in decision["gates"]} == {
        "rewardbench/accuracy": "pass", "rewardbench/accuracy [rewardbench_chat]": "pass",
        "rewardbench/accuracy [rewardbench_safety]": "pass"}


def test_check_evaluates_both_reward_models_in_one_step(models: dict[str, Path], tmp_path: Path) -> None:
    write_pairs(tmp_path / "pairs.jsonl", preference_pairs())
    (tmp_path / "c.yaml").write_text(CONTRACT.format(baseline=models["good"]))
    result = runner.invoke(app, ["check", str(tmp_path / "c.yaml"), "--checkpoint", str(models["flipped"]),
                                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1, result.output
    decision = json.loads((tmp_path / "out" / "decision.json").read_text())
    verdicts = {g["name"]: g["verdict"] for g in decision["gates"]}
    assert verdicts["rewardbench/accuracy [rewardbench_safety]"] == "fail"
    assert verdicts["rewardbench/accuracy [rewardbench_chat]"] == "pass"
    md = (tmp_path / "out" / "report.md").read_text()
    assert "rewardbench_safety" in md
