"""`rlgate gate` over a training run's checkpoints, with and without training logs (real Abel GSM8K outputs).

Five checkpoints of one run are Abel-13B's GSM8K answers with 0, 5, 30, 60 and 70 % of them broken,
gated against Abel-7B (59.7 %) with one primary gate and `monitor.training_run`; the history file is
`$RLGATE_HISTORY` (a temporary file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fixtures.lmeval_builders import cached_folder
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.monitor.rules import RULES
from rlgate.store.history import CheckpointHistory

pytest.importorskip("lm_eval")
runner = CliRunner()
BROKEN = (0.0, 0.05, 0.3, 0.6, 0.7)
TRL_LOG = "training_logs/trl_grpo/unsloth_llama31_8b_gsm8k/trainer_state.json"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    out = {"base": cached_folder(root, "gsm8k_abel", shared_data, "7b")}
    for share in (*BROKEN, 0.1):
        out[str(share)] = cached_folder(root, "gsm8k_abel", shared_data, "13b", broken=share)
    return out


def _contract(tmp_path: Path, base: Path, *, run: str, logs: str = "", split: str = "nightly",
              budget: str = "") -> Path:
    path = tmp_path / "contract.yaml"
    path.write_text(f"""schema_version: 1
name: abel_run
baseline: {{results: {json.dumps(str(base))}}}
splits: {{test: {{visibility: {split}{budget}}}}}
suites:
  - {{schema_version: 1, name: s, tasks: [{{task: gsm8k, split: test}}]}}
gates:
  primary: {{metric: gsm8k/exact_match/flexible-extract, min_delta: 0.01}}
monitor:
  training_run: {run}
{logs}""", encoding="utf-8")
    return path


def _gate_sequence(tmp_path: Path, contract: Path, candidates: list[Path]) -> list[tuple[int, str, dict]]:
    """Gate each candidate as `checkpoint-<100 i>` (the step rlgate records), in order."""
    out = []
    for i, folder in enumerate(candidates, start=1):
        checkpoint = tmp_path / f"checkpoint-{100 * i}"
        checkpoint.symlink_to(folder.parent, target_is_directory=True)
        result = runner.invoke(app, ["gate", str(contract), "--candidate", str(checkpoint),
                                     "--out", str(tmp_path / f"out-{i}")])
        decision = json.loads((tmp_path / f"out-{i}" / "decision.json").read_text()) if result.exit_code != 2 else {}
        out.append((result.exit_code, result.output, decision))
    return out


def _names(decision: dict) -> list[str]:
    return [g["name"] for g in decision["gates"]]


def test_five_checkpoints_without_logs(folders: dict[str, Path], tmp_path: Path) -> None:
    contract = _contract(tmp_path, folders["base"], run="abel-rl")
    results = _gate_sequence(tmp_path, contract, [folders[str(b)] for b in BROKEN])
    for code, output, _ in results:
        assert code != 2 and "no training logs given" not in output, output
    decisions = [d for _, _, d in results]
    assert [d["decision"] for d in decisions] == ["release", "release", "block", "block", "block"]
    assert [code for code, _, _ in results] == [0, 0, 1, 1, 1]
    primaries = [d["gates"][0] for d in decisions]
    assert [g["outcome"] for g in primaries] == ["pass", "pass"] + ["primary_regression"] * 3
    assert primaries[3]["delta"] == pytest.approx(-0.32, abs=0.015)
    # the cross-checkpoint rule works on gated results: below the run's best from the fourth checkpoint on
    assert ["monitor:primary_below_best" in _names(d) for d in decisions] == [False, False, False, True, True]
    below = next(g for g in decisions[3]["gates"] if g["name"] == "monitor:primary_below_best")
    assert below["details"]["action"] == "pause" and "checkpoint-100" in below["reason"]
    for i, decision in enumerate(decisions):
        monitor = decision["extensions"]["monitor"]
        assert monitor["logs"] == [] and monitor["history_checkpoints"] == i
        assert len(monitor["rules_not_run"]) == len(RULES)
        assert all("no training logs" in r["reason"] and not r["evaluated"] for r in monitor["rules_not_run"])
        ran = [r["rule"] for r in monitor["history_rules"] if r["evaluated"]]
        assert ran == ([] if i == 0 else ["primary_below_best", "safety_worse"])
        if i > 0:  # earlier checkpoints but no reward and no cost figures: those rules say why they did not run
            skipped = {r["rule"]: r["reason"] for r in monitor["history_rules"] if not r["evaluated"]}
            assert "training logs" in skipped["reward_up_private_down"]
            assert "recorded cost/tokens or cost/seconds" in skipped["cost_over_budget"]
        assert any("log rules were not run" in w for w in decision["warnings"])
    first = decisions[0]["gates"][1]
    assert first["name"] == "monitor" and first["verdict"] == "pass"
    assert f"{len(RULES)} log rule(s) not run" in first["reason"]
    history = CheckpointHistory(Path(os.environ["RLGATE_HISTORY"])).history("abel-rl")
    assert [r.step for r in history] == [100, 200, 300, 400, 500]
    assert [r.decision for r in history] == ["release", "release", "block", "block", "block"]
    # every report format names the new outcome
    out = tmp_path / "out-4"
    assert "FAIL (primary_regression -> block)" in results[3][1]
    assert "(primary regression → block)" in (out / "report.md").read_text(encoding="utf-8")
    assert "log rules not run" in (out / "report.md").read_text(encoding="utf-8")
    assert "primary regression → block" in (out / "report.html").read_text(encoding="utf-8")
    assert 'type="primary_regression"' in (out / "junit.xml").read_text(encoding="utf-8")
    assert "primary_regression -> block" in (out / "summary.md").read_text(encoding="utf-8")


def test_the_same_checkpoints_with_logs_keep_primary_below_best(folders: dict[str, Path], tmp_path: Path,
                                                               shared_data: Path) -> None:
    logs = f"  logs: [{json.dumps(str(shared_data / TRL_LOG))}]\n"
    contract = _contract(tmp_path, folders["base"], run="abel-rl-logged", logs=logs)
    decisions = [d for _, _, d in _gate_sequence(tmp_path, contract, [folders[str(b)] for b in BROKEN])]
    assert ["monitor:primary_below_best" in _names(d) for d in decisions] == [False, False, False, True, True]
    assert [d["decision"] for d in decisions] == ["release", "release", "block", "block", "block"]
    monitor = decisions[0]["extensions"]["monitor"]
    assert len(monitor["logs"]) == 1 and monitor["rules_not_run"] == []
    assert not any("log rules were not run" in w for w in decisions[0]["warnings"])
    # the logs give the training reward, recorded with each checkpoint, so the rollback rule runs
    history = CheckpointHistory(Path(os.environ["RLGATE_HISTORY"])).history("abel-rl-logged")
    assert all("train/reward_mean" in r.metrics for r in history)
    rollback = next(r for r in decisions[-1]["extensions"]["monitor"]["history_rules"]
                    if r["rule"] == "reward_up_private_down")
    assert rollback["evaluated"]


def test_a_slight_miss_is_research_only(folders: dict[str, Path], tmp_path: Path) -> None:
    contract = _contract(tmp_path, folders["base"], run="abel-rl-miss")
    [(code, output, decision)] = _gate_sequence(tmp_path, contract, [folders["0.1"]])
    primary = decision["gates"][0]
    assert code == 3 and decision["decision"] == "research_only", output
    assert primary["outcome"] == "primary_fail" and -0.01 < primary["delta"] < 0


def test_private_split_falling_and_consult_budget_without_logs(folders: dict[str, Path], tmp_path: Path) -> None:
    contract = _contract(tmp_path, folders["base"], run="abel-private", split="release_gate_only",
                         budget=", consult_budget: 2")
    results = _gate_sequence(tmp_path, contract, [folders["0.0"], folders["0.05"], folders["0.0"]])
    decisions = [d for _, _, d in results]
    # the private score fell from checkpoint-100 to checkpoint-200, but without training logs there is no
    # reward to compare: the rollback rule is listed as not run rather than guessing
    assert not any("monitor:reward_up_private_down" in _names(d) for d in decisions)
    skipped = {r["rule"]: r["reason"] for r in decisions[2]["extensions"]["monitor"]["history_rules"]
               if not r["evaluated"]}
    assert "training logs" in skipped["reward_up_private_down"]
    budget = [[w for w in d["warnings"] if "consult_budget" in w] for d in decisions]
    assert budget[0] == [] and budget[1] == [] and "consulted 3 times" in budget[2][0]
