"""Issue 31 on the agent demo's inspect logs (mockllm toolbox policies, run by `rlgate eval`): unknown is never
zero. A log saved before scoring, a log that did not finish, a sample the scorer never scored, and a trajectory
the log's header promises but lacks (the one with the unsafe call) never release."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.demo.agent import write_project
from rlgate.harness import read_results

runner = CliRunner()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent_cov")
    paths = write_project(root)
    for policy in ("baseline", "candidate_unsafe"):
        result = runner.invoke(app, ["eval", str(paths.contract), "--checkpoint", f"mockllm/toolbox-{policy}",
                                     "--out", str(root / "runs" / policy), "--cache", str(root / "cache")])
        assert result.exit_code == 0, result.output
    return root


def _log(project: Path, policy: str) -> Path:
    return next((project / "runs" / policy / "logs").glob("*.eval"))


def _rewritten(project: Path, policy: str, dest: Path, edit: Any) -> Path:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(_log(project, policy)))
    edit(log)
    (dest / "logs").mkdir(parents=True)
    write_eval_log(log, str(dest / "logs" / _log(project, policy).name))
    shutil.copy(project / "runs" / policy / "run_manifest.json", dest / "run_manifest.json")  # the same run
    return dest


def _gate(project: Path, baseline: Path, candidate: Path, out: Path, contract: Path | None = None
          ) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["gate", str(contract or project / "contract.yaml"), "--baseline", str(baseline),
                                 "--candidate", str(candidate), "--out", str(out)],
                           env={"RLGATE_HISTORY": str(out.parent / "h.sqlite")})
    decision = json.loads((out / "decision.json").read_text()) if (out / "decision.json").exists() else {}
    return result.exit_code, decision, result.output


def _unscored(log: Any) -> None:
    for sample in log.samples:
        sample.scores = None
    log.results = None


def test_a_log_saved_before_scoring_is_refused_not_read_as_zero(project: Path, tmp_path: Path) -> None:
    folder = _rewritten(project, "baseline", tmp_path / "unscored", _unscored)
    code, _, output = _gate(project, folder, project / "runs" / "baseline", tmp_path / "out")
    assert code == 2, output
    assert "no sample of this log has a score" in output and "inspect score" in output
    assert "Traceback" not in output


@pytest.mark.parametrize("status", ["cancelled", "error", "started"])
def test_a_log_that_did_not_finish_is_refused_with_its_status(project: Path, tmp_path: Path, status: str) -> None:
    def edit(log: Any) -> None:
        log.status = status

    folder = _rewritten(project, "baseline", tmp_path / status, edit)
    with pytest.raises(Exception) as info:
        read_results(folder)
    assert f"status is '{status}'" in str(info.value) and "eval-retry" in str(info.value)


def test_a_sample_the_scorer_never_scored_is_unknown(project: Path, tmp_path: Path) -> None:
    def edit(log: Any) -> None:
        log.samples[0].scores = None  # a scorer error: the other 23 are scored

    folder = _rewritten(project, "baseline", tmp_path / "one", edit)
    task = read_results(folder).tasks["toolbox"]
    first = task.samples[0]
    assert "task_success" not in first.scores["none"]  # unknown, not a failure
    code, decision, output = _gate(project, folder, project / "runs" / "baseline", tmp_path / "out")
    assert code == 1, output
    primary = next(g for g in decision["gates"] if g["kind"] == "primary")
    assert primary["verdict"] in ("nodata", "error"), primary["reason"]
    assert "1 of 24" in primary["reason"] or "order-1" in primary["reason"]  # unknown: nodata or corrupt


def _without_unsafe(log: Any) -> None:
    log.samples = [s for s in log.samples if s.id != "order-3"]  # the header still lists it


def test_a_removed_unsafe_trajectory_fails_the_safety_gate_closed(project: Path, tmp_path: Path) -> None:
    code, decision, _ = _gate(project, project / "runs" / "baseline", project / "runs" / "candidate_unsafe",
                              tmp_path / "complete")
    assert code == 1 and next(g for g in decision["gates"] if g["kind"] == "hard")["verdict"] == "fail"
    folder = _rewritten(project, "candidate_unsafe", tmp_path / "hidden", _without_unsafe)
    task = read_results(folder).tasks["toolbox"]
    placeholder = next(s for s in task.samples if s.doc_id == "order-3")
    assert placeholder.extra["missing"] and placeholder.scores["none"]["task_success"] == 0.0
    assert "safety_violation_rate" not in placeholder.scores["none"]  # unknown, never 0 violations
    code, decision, output = _gate(project, project / "runs" / "baseline", folder, tmp_path / "out")
    assert code == 1, output
    hard = next(g for g in decision["gates"] if g["kind"] == "hard")
    assert hard["verdict"] == "error" and "order-3" in hard["reason"] and "unknown" in hard["reason"]
    drops = decision["extensions"]["drops"]["runs"]
    assert any(d["doc_id"] == "order-3" and d["kind"] == "missing" and "unknown" in d["counted_as"] for d in drops)
    # a contract that tolerates one unknown trajectory: at most research_only, never release
    contract = yaml.safe_load((project / "contract.yaml").read_text())
    contract["gates"]["allow_missing_trajectories"] = 1
    (project / "tolerant.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))
    code, decision, output = _gate(project, project / "runs" / "baseline", folder, tmp_path / "tolerant",
                                   project / "tolerant.yaml")
    assert decision["decision"] in ("research_only", "block") and code in (1, 3), output
    hard = next(g for g in decision["gates"] if g["kind"] == "hard")
    assert hard["verdict"] == "pass" and hard["effect"] == "research_only"
