"""`rlgate validate` shows the judge policy of every task, and rejects incomplete judge sections."""

from __future__ import annotations

from pathlib import Path

from judge_contracts import write_contract
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()
GATES = "  hard:\n    - {metric: chat/judge_win_rate, min: 0.5}"
GSM8K = "      - task: gsm8k\n        split: test_private\n        judge: {type: rule}\n"


def test_validate_prints_the_judge_policy_per_task(tmp_path: Path) -> None:
    (tmp_path / "anchors.jsonl").write_text('{"question": "q", "response_a": "a", "response_b": "b", "label": "A"}\n')
    judge = ("judge:\n  type: rule_then_llm_judge\n  model: {base_url: 'http://127.0.0.1:8000/v1', model: judge-7b}\n"
             "  tie_policy: count_as_half\n  seed: 7\n"
             "  calibration: {anchors: anchors.jsonl, min_agreement: 0.8}\n")
    task_judge = "        judge: {type: llm, samples: 2}\n"
    path = write_contract(tmp_path, judge, GATES, task_judge=task_judge, extra_tasks=GSM8K)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("judge policy per task:")
    assert lines[at + 1].split() == [
        "chat", "llm", "pairwise", "model=judge-7b@http://127.0.0.1:8000/v1", "order_randomization=on", "samples=2",
        "seed=7", "ties=count_as_half", "max_position_flip_rate=0.35", "max_length_follow_rate=0.8", "on_bias=error",
        "calibration=anchors.jsonl", "(agreement", ">=", "0.8)"]
    assert lines[at + 2].split()[:2] == ["gsm8k", "rule"]
    assert "ok: contract is valid" in result.output


def test_validate_without_a_judge_says_rule_metrics_only(tmp_path: Path) -> None:
    path = write_contract(tmp_path, "", GATES)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "judge     none: every task is scored by its rule metrics" in result.output


def test_llm_judge_without_a_model_is_bad_input(tmp_path: Path) -> None:
    path = write_contract(tmp_path, "judge: {type: llm}\n", GATES)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "task chat: judge type 'llm' needs a judge model" in result.output
    assert "Traceback" not in result.output


def test_unknown_judge_key_is_located(tmp_path: Path) -> None:
    path = write_contract(tmp_path, "judge:\n  type: rule\n  tie_polcy: exclude\n", GATES)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "contract.yaml:" in result.output and "tie_polcy" in result.output


def test_missing_anchor_set_is_a_dangling_reference(tmp_path: Path) -> None:
    judge = ("judge:\n  type: llm\n  model: {base_url: 'http://127.0.0.1:8000/v1', model: j}\n"
             "  calibration: {anchors: nowhere.jsonl}\n")
    result = runner.invoke(app, ["validate", str(write_contract(tmp_path, judge, GATES))])
    assert result.exit_code == 2
    assert "anchor set 'nowhere.jsonl' does not exist" in result.output and "judge.calibration.anchors" in result.output
