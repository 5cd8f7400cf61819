"""Agent failure taxonomy, its clusters and explanation, next actions, and the trajectory export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlgate.badcases.actions import ActionContext, shorter_paths_actions
from rlgate.badcases.agent import AgentClassifier, classify_trajectory, error_category
from rlgate.badcases.classify import classifier_for, classify_run
from rlgate.badcases.export import export_badcases
from rlgate.badcases.report import build_badcase_report
from rlgate.badcases.taxonomy import ClassifyOptions
from rlgate.results.models import (
    RunProvenance,
    RunResult,
    SampleRecord,
    TaskResult,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)


def _call(i: int, function: str, **arguments: Any) -> TrajectoryStep:
    return TrajectoryStep(role="assistant", tool_calls=[ToolCall(id=f"c{i}", function=function, arguments=arguments)])


def _result(i: int, content: str = "ok", error: str | None = None) -> TrajectoryStep:
    return TrajectoryStep(role="tool", content=content, tool_call_id=f"c{i}", error=error)


ANSWER = TrajectoryStep(role="assistant", content="The total is 6.")
USER = TrajectoryStep(role="user", content="order-1: 2 apples")


def _sample(doc_id: int | str, steps: list[TrajectoryStep], success: bool, *, limits: list[str] | None = None,
            error: str | None = None, violations: list[str] | None = None, state: float | None = None,
            tokens: int = 100) -> SampleRecord:
    scores: dict[str, float] = {"task_success": float(success), "steps": float(sum(s.role == "assistant"
                                                                                      for s in steps))}
    if success:
        scores |= {"steps_to_success": scores["steps"], "tokens_to_success": float(tokens)}
    if state is not None:
        scores["state_success"] = state
    return SampleRecord(doc_id=doc_id, doc_hash=f"h{doc_id}", prompt="order", target="6",
                        scores={"none": scores},
                        trajectory=Trajectory(steps=[USER, *steps], limits_hit=limits or [], error=error,
                                              total_tokens=tokens),
                        extra={"agent": {"success": float(success), "answer": "6"},
                               "safety_violations": violations or [], "limits_hit": limits or []})


def _classes(sample: SampleRecord) -> set[str]:
    return {f.cls for f in classify_trajectory(sample)[1]}


def test_each_failure_class_from_its_trajectory() -> None:
    bad_json = TrajectoryStep(role="assistant", tool_calls=[ToolCall(id="c1", function="calc", parse_error="bad")])
    assert _classes(_sample(1, [bad_json, _result(1, error="parsing: bad json"), ANSWER], False)) >= {
        "agent_invalid_tool_call_json"}
    assert _classes(_sample(1, [_call(1, "shell"), _result(1, error="parsing: Tool shell not found"), ANSWER],
                            False)) == {"agent_wrong_function"}
    assert _classes(_sample(1, [_call(1, "calc", x=1), _result(1, error="parsing: 1 validation error"), ANSWER],
                            False)) == {"agent_wrong_arguments", "agent_unrecovered_tool_error"}
    timeout = _sample(1, [_call(1, "search", q="a"), _result(1, error="timeout: took too long"), ANSWER], False)
    assert _classes(timeout) == {"agent_unrecovered_tool_error"}
    assert classify_trajectory(timeout)[2] == ["timeout"]
    recovered = _sample(1, [_call(1, "search", q="a"), _result(1, error="timeout: slow"), _call(2, "search", q="a"),
                            _result(2, "42"), ANSWER], False, state=0.0)
    assert _classes(recovered) == {"agent_wrong_final_state"}
    loop = _sample(1, [*(x for i in range(3) for x in (_call(i, "read", path="a"), _result(i, "same"))), ANSWER],
                   False)
    assert "agent_repeated_call_loop" in _classes(loop)
    assert _classes(_sample(1, [_call(1, "read", path="a")], False, limits=["message"])) == {"agent_budget_exhausted"}
    assert _classes(_sample(1, [_call(1, "read", path="a"), _result(1, "x")], False)) == {"agent_no_final_answer"}
    assert _classes(_sample(1, [_call(1, "db_delete", key="audit_log"), _result(1, "deleted"), ANSWER], False,
                            violations=["forbidden"])) == {"agent_unsafe_action"}
    assert _classes(_sample(1, [], False, error="sandbox died")) >= {"agent_run_error"}
    assert _classes(_sample(1, [ANSWER], True)) == set()


def test_error_categories_for_the_recovery_curriculum() -> None:
    assert error_category("timeout: took 30s") == "timeout"
    assert error_category("permission: denied writing /etc") == "permission denied"
    assert error_category("unknown: no key 'x'") == "empty or missing result"
    assert error_category("parsing: validation error") == "schema error"
    assert error_category("unknown: boom") == "other error"


def _run(name: str, samples: list[SampleRecord]) -> RunResult:
    return RunResult(provenance=RunProvenance(source=name, model=name),
                     tasks={"shop": TaskResult(task="shop", n_samples=len(samples), samples=samples)})


def _pair(n: int = 30) -> tuple[RunResult, RunResult]:
    """Baseline recovers from timeouts and answers in 3 steps; the candidate gives up on them, loops, is longer."""
    base, cand = [], []
    for i in range(n):
        base.append(_sample(i, [_call(1, "search", q="a"), _result(1, error="timeout: slow"),
                                _call(2, "search", q="a"), _result(2, "6"), ANSWER], True, tokens=300))
        if i % 3 == 0:
            cand.append(_sample(i, [_call(1, "search", q="a"), _result(1, error="timeout: slow"), ANSWER], False))
        elif i % 3 == 1:
            cand.append(_sample(i, [*(x for k in range(3) for x in (_call(k, "search", q="a"), _result(k, "6"))),
                                    ANSWER], False))
        else:
            cand.append(_sample(i, [*(x for k in range(4) for x in (_call(k, "search", q=str(k)), _result(k, "6"))),
                                    ANSWER], True, tokens=900))
    return _run("base", base), _run("cand", cand)


def test_agent_tasks_get_the_agent_classifier_and_clusters_explain_what_changed() -> None:
    base, cand = _pair()
    assert isinstance(classifier_for("shop", cand.tasks["shop"]), AgentClassifier)
    assert not isinstance(classifier_for("shop"), AgentClassifier)
    outcomes = classify_run(cand, ClassifyOptions())
    assert sum(not o.correct for o in outcomes.values()) == 20
    report = build_badcase_report(cand, base)
    grew = {c.cluster for c in report.clusters if c.grew}
    assert {"agent_unrecovered_tool_error", "agent_repeated_call_loop"} <= grew
    text = report.explanations[0].text
    assert text.startswith("shop: task success 100.0% → 33.3%") and "20 lost" in text
    assert "unrecovered tool error 0 → 10" in text
    rules = {a.rule: a for a in report.next_actions}
    curriculum = rules["agent_tool_error_recovery"]
    assert "timeout 10" in curriculum.evidence and "permission denied" in curriculum.action
    assert rules["repeated_call_loop"].area == "reward" and "duplicate call" in rules["repeated_call_loop"].action
    assert "steps 3.0 → 5.0" in rules["shorter_successful_paths"].evidence


def test_one_new_unsafe_action_gets_the_rule_gate_action_without_significance() -> None:
    base = _run("base", [_sample(i, [ANSWER], True) for i in range(20)])
    cand = _run("cand", [_sample(0, [_call(1, "rm", path="/"), _result(1), ANSWER], False, violations=["rm"]),
                         *(_sample(i, [ANSWER], True) for i in range(1, 20))])
    report = build_badcase_report(cand, base)
    unsafe = next(a for a in report.next_actions if a.rule == "unsafe_action")
    assert unsafe.area == "safety" and "rule gate for dangerous actions" in unsafe.action


def test_shorter_paths_only_when_successes_got_costlier() -> None:
    assert shorter_paths_actions(ActionContext(agent_costs={"t": ((4.0, 4.2), (500.0, 520.0))})) == []
    found = shorter_paths_actions(ActionContext(agent_costs={"t": ((4.0, 4.2), (500.0, 1000.0))}))
    assert found and "tokens 500 → 1,000" in found[0].evidence


def test_export_writes_failed_trajectories_with_the_baselines_success_as_chosen(tmp_path: Path) -> None:
    base, cand = _pair(6)
    summary = export_badcases(tmp_path / "next.jsonl", cand, base, frozenset())
    rows = [json.loads(line) for line in (tmp_path / "next.jsonl").read_text().splitlines()]
    assert summary.written == len(rows) == 4
    first = rows[0]
    assert first["failure_classes"] == ["agent_unrecovered_tool_error"] and first["error_categories"] == ["timeout"]
    assert first["trajectory"]["steps"][1]["tool_calls"][0]["function"] == "search"
    assert len(first["chosen_trajectory"]["steps"]) == 6
    assert first["suggested_uses"] == ["sft", "preference", "recovery_curriculum", "reward_data"]
    assert export_badcases(tmp_path / "p.jsonl", cand, base, frozenset({"shop"})).written == 0


@pytest.mark.parametrize("name", ["gsm8k", "mmlu_pro_math"])
def test_text_families_keep_their_classifier(name: str) -> None:
    assert not isinstance(classifier_for(name), AgentClassifier)
