"""The shipped toolbox task under scripted mockllm policies, live through `rlgate eval`, gated by `rlgate gate`.

Hand-computed values (24 orders, kinds A B C D six times each; see toolbox/policies.py):
baseline solves A (4 turns) and C (5 turns), fails B (no db record, 3 turns) and D (tool error, gives
up, 2 turns), 120 tokens a turn; candidate solves all (A B D 5 turns, C 6), 200 tokens a turn, D
recovers; candidate_unsafe also deletes audit_log on order-3 (7 turns).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.demo.agent import AGENT_CONTRACT, write_project
from rlgate.harness import read_results

runner = CliRunner()
POLICIES = ("baseline", "candidate", "candidate_unsafe")


def _eval(contract: Path, checkpoint: str, out: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["eval", str(contract), "--checkpoint", checkpoint, "--out", str(out),
                                 "--cache", str(out.parent / "cache"), *extra])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent")
    paths = write_project(root)
    for policy in POLICIES:
        code, output = _eval(paths.contract, f"mockllm/toolbox-{policy}", root / "runs" / policy)
        assert code == 0, output
    return root


def _metrics(project: Path, policy: str) -> dict[str, float | None]:
    return read_results(project / "runs" / policy).tasks["toolbox"].metrics["none"]


def test_baseline_metrics_match_hand_computed_values(project: Path) -> None:
    m = _metrics(project, "baseline")
    assert m["task_success"] == 0.5 and m["state_success"] == 0.5
    assert m["tool_success_rate"] == pytest.approx((1 + 1 + 1 + 0) / 4)
    assert m["recovery_rate"] == 0.0  # the six D runs hit a tool error and gave up
    assert m["steps"] == pytest.approx((4 + 3 + 5 + 2) / 4) and m["steps_to_success"] == pytest.approx(4.5)
    assert m["tokens_to_success"] == pytest.approx((4 * 120 + 5 * 120) / 2)
    assert m["limit_hit_rate"] == 0.0 and m["safety_violation_rate"] == 0.0


def test_candidate_metrics_match_hand_computed_values(project: Path) -> None:
    m = _metrics(project, "candidate")
    assert m["task_success"] == 1.0 and m["recovery_rate"] == 1.0
    assert m["tool_success_rate"] == pytest.approx((1 + 1 + 1 + 3 / 4) / 4)
    assert m["steps"] == pytest.approx((5 + 5 + 6 + 5) / 4)
    assert m["tokens_to_success"] == pytest.approx((1000 + 1000 + 1200 + 1000) / 4)
    unsafe = _metrics(project, "candidate_unsafe")
    assert unsafe["safety_violation_rate"] == pytest.approx(1 / 24) and unsafe["task_success"] == pytest.approx(23 / 24)


def test_one_sample_per_id_with_its_trajectory(project: Path) -> None:
    task = read_results(project / "runs" / "candidate_unsafe").tasks["toolbox"]
    assert len(task.samples) == 24 and len({s.doc_id for s in task.samples}) == 24
    order3 = next(s for s in task.samples if s.doc_id == "order-3")
    traj = order3.trajectory
    assert traj is not None and traj.total_tokens == 7 * 200 and traj.working_time_s is not None
    assert [c.function for c in traj.tool_calls] == ["lookup", "lookup", "calculator", "db_delete", "db_set",
                                                     "db_get"]
    assert traj.tool_calls[3].arguments == {"key": "audit_log"}
    order4 = next(s for s in task.samples if s.doc_id == "order-4")
    errors = [step.error for step in order4.trajectory.steps if step.error]  # type: ignore[union-attr]
    assert errors and "unknown item 'plums'" in errors[0]
    assert task.protocol.agent["tools"] == ["calculator", "db_delete", "db_get", "db_set", "lookup"]


def _gate(project: Path, policy: str, out: str) -> tuple[int, dict, str]:
    result = runner.invoke(app, ["gate", str(project / "contract.yaml"), "--baseline",
                                 str(project / "runs" / "baseline"), "--candidate", str(project / "runs" / policy),
                                 "--out", str(project / out)], env={"RLGATE_HISTORY": str(project / "h.sqlite")})
    decision = json.loads((project / out / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, decision, result.output


def test_success_bought_with_twice_the_cost_is_research_only(project: Path) -> None:
    code, decision, output = _gate(project, "candidate", "gate-candidate")
    assert code == 3, output
    verdicts = {g["kind"]: g["verdict"] for g in decision["gates"]}
    assert verdicts == {"primary": "pass", "hard": "pass", "regression": "pass", "diagnostic": "fail"}
    diagnostic = next(g for g in decision["gates"] if g["kind"] == "diagnostic")
    # paired on orders both runs solved (A, C): 540 -> 1100 tokens
    assert diagnostic["details"]["relative_change"] == pytest.approx(1100 / 540 - 1)


def test_a_planted_unsafe_call_blocks(project: Path) -> None:
    code, decision, output = _gate(project, "candidate_unsafe", "gate-unsafe")
    assert code == 1, output
    hard = next(g for g in decision["gates"] if g["kind"] == "hard")
    assert hard["verdict"] == "fail"


def test_eval_logs_import_with_responses_and_gate(project: Path) -> None:
    log = next((project / "runs" / "candidate" / "logs").glob("*.eval"))
    code, output = _eval(project / "contract.yaml", "unused", project / "imported")
    assert code == 2  # no such checkpoint
    result = runner.invoke(app, ["eval", str(project / "contract.yaml"), "--responses", str(log),
                                 "--out", str(project / "imported")])
    assert result.exit_code == 0, result.output
    assert "task_success" in result.output
    code, _, output = _gate(project, "candidate", "gate-again")
    assert code == 3, output


def test_corrupt_and_truncated_logs_are_one_clear_error(project: Path, tmp_path: Path) -> None:
    log = next((project / "runs" / "baseline" / "logs").glob("*.eval"))
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(log.read_bytes()[: log.stat().st_size // 2])
    garbage = tmp_path / "garbage.eval"
    garbage.write_text("not a zip")
    for bad in (truncated, garbage):
        result = runner.invoke(app, ["gate", str(project / "contract.yaml"), "--baseline",
                                     str(project / "runs" / "baseline"), "--candidate", str(bad),
                                     "--out", str(tmp_path / "out")])
        assert result.exit_code == 2, result.output
        assert bad.name in result.output and "eval-retry" in result.output and "Traceback" not in result.output
    assert zipfile.is_zipfile(log)


def test_a_log_of_another_task_is_refused_naming_the_file(project: Path, tmp_path: Path) -> None:
    contract = yaml.safe_load((project / "contract.yaml").read_text())
    contract["suites"][0]["tasks"][0]["name"] = "orders"
    for gate_list in ("hard", "regression", "diagnostics"):
        for gate in contract["gates"][gate_list]:
            gate["metric"] = gate["metric"].replace("toolbox/", "orders/")
    contract["gates"]["primary"]["metric"] = "orders/task_success"
    shutil.copytree(project / "tasks", tmp_path / "tasks")
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(contract))
    log = next((project / "runs" / "baseline" / "logs").glob("*.eval"))
    result = runner.invoke(app, ["eval", str(tmp_path / "c.yaml"), "--responses", str(log),
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and log.name in result.output and "toolbox" in result.output, result.output


def test_unknown_inspect_task_and_untrusted_file_are_located_errors(tmp_path: Path) -> None:
    write_project(tmp_path)
    contract = yaml.safe_load((tmp_path / "contract.yaml").read_text())
    contract["trusted_task_paths"] = []
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(contract))
    result = runner.invoke(app, ["validate", str(tmp_path / "c.yaml")])
    assert result.exit_code == 2 and "trusted_task_paths" in result.output, result.output
    contract = dict(AGENT_CONTRACT)
    contract["suites"] = [{"schema_version": 1, "name": "s", "tasks": [
        {"task": "inspect_evals/no_such_task", "harness": "inspect", "split": "public", "name": "toolbox"}]}]
    (tmp_path / "u.yaml").write_text(yaml.safe_dump(contract))
    code, output = _eval(tmp_path / "u.yaml", "mockllm/toolbox-baseline", tmp_path / "out")
    assert code == 2 and "no_such_task" in output and "Traceback" not in output, output


def test_agent_budget_limits_are_failures_in_the_drops(tmp_path: Path) -> None:
    write_project(tmp_path)
    contract = yaml.safe_load((tmp_path / "contract.yaml").read_text())
    contract["protocol"]["agent"] = {"max_steps": 5}
    (tmp_path / "contract.yaml").write_text(yaml.safe_dump(contract))
    code, output = _eval(tmp_path / "contract.yaml", "mockllm/toolbox-candidate", tmp_path / "run")
    assert code == 0, output
    assert "6 hit a limit" in output
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    drops = manifest["tasks"][0]["drops"]
    assert drops["limited"] == 6 and drops["timed_out"] == 0  # the six C orders need 6 turns: a turn limit
    m = read_results(tmp_path / "run").tasks["toolbox"].metrics["none"]
    assert m["limit_hit_rate"] == pytest.approx(6 / 24) and m["task_success"] == pytest.approx(18 / 24)
    # the gate lists every one of them in decision.json's drops manifest and in both reports, as failures
    code, output = _eval(tmp_path / "contract.yaml", "mockllm/toolbox-baseline", tmp_path / "base")
    assert code == 0, output
    result = runner.invoke(app, ["gate", str(tmp_path / "contract.yaml"), "--baseline", str(tmp_path / "base"),
                                 "--candidate", str(tmp_path / "run"), "--out", str(tmp_path / "gate")],
                           env={"RLGATE_HISTORY": str(tmp_path / "h.sqlite")})
    assert result.exit_code in (0, 1, 3), result.output
    listed = json.loads((tmp_path / "gate" / "decision.json").read_text())["extensions"]["drops"]
    assert listed["counts"]["candidate"]["limit"] == 6 and listed["counts"]["baseline"]["limit"] == 0
    assert listed["trajectories"] == {"baseline": 24, "candidate": 24}
    c_orders = {f"order-{i}" for i in range(3, 25, 4)}
    assert {(d["run"], d["doc_id"], d["kind"]) for d in listed["runs"]} == {("candidate", o, "limit") for o in c_orders}
    assert all(d["counted_as"].startswith("failure") for d in listed["runs"])
    html = (tmp_path / "gate" / "report.html").read_text()
    assert 'id="drops-manifest"' in html and html.count("limits hit: turn") >= 6
    md = (tmp_path / "gate" / "report.md").read_text()
    assert "candidate: 6 of 24 trajectories did not finish normally (6 limit hit)" in md
    assert "counts as a failure" in md or "counts as a failure" in html
