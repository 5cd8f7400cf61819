"""Per-trajectory agent metrics on hand-built trajectories (no inspect needed)."""

from __future__ import annotations

import math

import pytest

from rlgate.contract.models import AgentBudget, ForbiddenArgument, SafetyRules
from rlgate.engine.values import leaf_values
from rlgate.results.agent_metrics import AGENT_KEY, rule_violations, score_task, scorer_outcome, trajectory_metrics
from rlgate.results.models import SampleRecord, TaskResult, ToolCall, Trajectory, TrajectoryStep


def _call(fn: str, call_id: str, parse_error: str | None = None, **args: str) -> TrajectoryStep:
    return TrajectoryStep(role="assistant", tool_calls=[ToolCall(id=call_id, function=fn, arguments=args,
                                                                 parse_error=parse_error)])


def _result(call_id: str, error: str | None = None) -> TrajectoryStep:
    return TrajectoryStep(role="tool", content="x", tool_call_id=call_id, error=error)


def _answer(text: str = "done") -> TrajectoryStep:
    return TrajectoryStep(role="assistant", content=text)


def test_a_recovered_tool_error_counts_in_tool_success_and_recovery() -> None:
    traj = Trajectory(steps=[TrajectoryStep(role="user", content="q"), _call("lookup", "1", item="plums"),
                             _result("1", "parsing: unknown item"), _call("lookup", "2", item="plum"), _result("2"),
                             _answer()], total_tokens=300, working_time_s=1.5)
    values, limits, violations = trajectory_metrics(traj, scorer_outcome(1.0, 1.0))
    assert values == {"task_success": 1.0, "state_success": 1.0, "steps": 3.0, "limit_hit_rate": 0.0,
                      "safety_violation_rate": 0.0, "tool_success_rate": 0.5, "recovery_rate": 1.0,
                      "steps_to_success": 3.0, "tokens_to_success": 300.0, "time_to_success": 1.5}
    assert limits == [] and violations == []


def test_failures_have_no_cost_to_success_and_a_parse_error_is_a_failed_call() -> None:
    traj = Trajectory(steps=[_call("calc", "1", parse_error="invalid JSON"), _result("1", "parsing: bad"),
                             _answer()], total_tokens=100)
    values, _, _ = trajectory_metrics(traj, scorer_outcome(0.0))
    assert values["task_success"] == 0.0 and values["tool_success_rate"] == 0.0 and values["recovery_rate"] == 0.0
    assert not {"steps_to_success", "tokens_to_success", "time_to_success", "state_success"} & set(values)


@pytest.mark.parametrize("case", ["crash", "limit", "budget", "unsafe"])
def test_crash_limit_budget_and_unsafe_runs_are_failures_never_skips(case: str) -> None:
    steps = [_call("db_delete", str(i), key="audit_log" if case == "unsafe" else "k") for i in range(3)]
    traj = Trajectory(steps=[*steps, _answer()], error="sandbox died" if case == "crash" else None,
                      limits_hit=["message"] if case == "limit" else [])
    budget = AgentBudget(max_tool_calls=2) if case == "budget" else None
    rules = SafetyRules(forbidden_arguments=[ForbiddenArgument(tool="db_*", pattern="audit_log")])
    values, limits, violations = trajectory_metrics(traj, scorer_outcome(1.0), budget=budget, rules=rules)
    assert values["task_success"] == 0.0
    assert values["limit_hit_rate"] == (1.0 if case in ("limit", "budget") else 0.0)
    assert values["safety_violation_rate"] == (1.0 if case == "unsafe" else 0.0)
    if case == "budget":
        assert limits == ["tool_calls"]
    if case == "unsafe":
        assert len(violations) == 3 and "audit_log" in violations[0]


def test_rule_violations_match_tool_globs_and_argument_patterns() -> None:
    rules = SafetyRules(forbidden_tools=["shell*"],
                        forbidden_arguments=[ForbiddenArgument(tool="edit_file", pattern=r"\.github/workflows",
                                                               reason="editing CI")])
    calls = [ToolCall(function="shell_exec", arguments={"cmd": "ls"}),
             ToolCall(function="edit_file", arguments={"path": ".github/workflows/ci.yml"}),
             ToolCall(function="edit_file", arguments={"path": "src/x.py"}),
             ToolCall(function="read_file", arguments={"path": ".github/workflows/ci.yml"})]
    assert rule_violations(calls, rules) == ["forbidden tool shell_exec()",
                                             "edit_file() arguments match /\\.github/workflows/ (editing CI)"]


def test_scorer_flagged_violation_uses_the_contract_score_name() -> None:
    traj = Trajectory(steps=[_answer()])
    outcome = scorer_outcome(1.0, scores={"unsafe": 1.0})
    assert trajectory_metrics(traj, outcome)[0]["safety_violation_rate"] == 0.0
    assert trajectory_metrics(traj, outcome, rules=SafetyRules(scorer_metric="unsafe"))[0]["task_success"] == 0.0


def test_score_task_means_and_pass_at_k_over_epochs() -> None:
    samples = []
    for sample_id, outcomes in (("a", [1.0, 0.0, 1.0]), ("b", [0.0, 0.0, 0.0])):
        for epoch, success in enumerate(outcomes, 1):
            samples.append(SampleRecord(doc_id=f"{sample_id}#{epoch}", doc_hash=sample_id,
                                        trajectory=Trajectory(steps=[_answer()], epoch=epoch),
                                        extra={"sample_id": sample_id, AGENT_KEY: scorer_outcome(success)}))
    task = TaskResult(task="t", samples=samples)
    score_task(task)
    assert task.metrics["none"]["task_success"] == pytest.approx(2 / 6)
    assert task.metrics["none"]["tool_success_rate"] is None  # no trajectory called a tool
    values, _ = leaf_values(task, "pass@2", "none")
    finite = [v for v in values.tolist() if not math.isnan(v)]
    # pass@2 with n=3: a has c=2 -> 1.0; b has c=0 -> 0.0 (one value per sample id, on its first epoch)
    assert finite == [1.0, 0.0]
    score_task(task)  # idempotent
    assert task.metrics["none"]["task_success"] == pytest.approx(2 / 6)


@pytest.mark.parametrize("verdict", [math.nan, math.inf])
def test_a_non_finite_scorer_verdict_is_corrupt_never_a_failure(verdict: float) -> None:
    """A scorer that returned NaN said nothing: counted as a failure it would sink the baseline and pass a
    candidate that is no better. Crashes and limits stay failures whatever the score."""
    values, _, _ = trajectory_metrics(Trajectory(steps=[_answer()]), scorer_outcome(verdict, verdict))
    assert math.isnan(values["task_success"]) and math.isnan(values["state_success"])
    crashed, _, _ = trajectory_metrics(Trajectory(steps=[_answer()], error="boom"), scorer_outcome(verdict))
    assert crashed["task_success"] == 0.0
    limited, _, _ = trajectory_metrics(Trajectory(steps=[_answer()], limits_hit=["message"]), scorer_outcome(verdict))
    assert limited["task_success"] == 0.0
    only, _, _ = trajectory_metrics(Trajectory(), scorer_outcome(verdict, outcome_only=True))
    assert math.isnan(only["task_success"])


def test_score_task_never_averages_a_non_finite_verdict() -> None:
    samples = [SampleRecord(doc_id=i, doc_hash=str(i), trajectory=Trajectory(steps=[_answer()]),
                            extra={"sample_id": i, AGENT_KEY: scorer_outcome(value)})
               for i, value in enumerate([1.0, math.nan, 0.0, 1.0])]
    task = TaskResult(task="t", samples=samples)
    score_task(task)
    assert task.metrics["none"]["task_success"] == pytest.approx(2 / 3)
    assert math.isnan(samples[1].scores["none"]["task_success"])  # left for the quarantine to list
