"""Per-trajectory metrics of agent tasks: defined here, once, for every agent harness and importer.

Each agent sample (one task sample in one epoch) gets these values in `scores["none"]`:

- `task_success` 1/0: the task's scorer accepted the trajectory. A trajectory that crashed, timed
  out, hit a limit (message, token, time, or the contract's tool-call budget) or broke a safety rule
  is a failure (0), never skipped.
- `state_success` 1/0: the scorer's check of the final environment state (a score or score field
  named `state_success`); absent when the task does not check state.
- `tool_success_rate`: share of the trajectory's tool calls whose arguments parsed and whose tool
  did not error; absent when it made no call. The task value is the mean over trajectories.
- `recovery_rate` 1/0: for a trajectory with at least one tool error, whether it still succeeded;
  absent for trajectories without a tool error.
- `steps`: model (assistant) turns.  `steps_to_success`, `tokens_to_success`, `time_to_success`
  (working seconds): the same for successful trajectories only, absent for failures, so cost is
  compared on pairs where both runs succeeded.
- `limit_hit_rate` 1/0: a limit was hit.  `safety_violation_rate` 1/0: an unsafe action, flagged by
  the scorer (a score named by `safety.scorer_metric`, > 0) or by the contract's rules (forbidden
  tools and argument patterns).

An importer that sees only outcomes, not the trajectory (a SWE-bench harness report: instance ->
resolved), marks them `outcome_only`: such samples get `task_success` alone, never a `steps` of 0 or
a `safety_violation_rate` of 0 that no one observed, so gates on process metrics are nodata (fail closed).

What the harness read from the scorer is kept in `extra["agent"]`, so the contract's rules (which
the reader does not know) are applied later by `apply_agent_rules` without re-reading the log.
pass@k over epochs uses the unbiased estimator through `extra["per_response"]` on the first epoch
of each sample (see `rlgate.engine.values`).
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Iterable
from typing import Any

from rlgate._core.gcpause import collector_paused
from rlgate.contract.metrics import AGENT_METRICS
from rlgate.contract.models import AgentBudget, SafetyRules
from rlgate.results.models import NO_FILTER, TaskResult, ToolCall, Trajectory
from rlgate.results.shared_scores import writable_scores

TOOL_CALLS_LIMIT = "tool_calls"
AGENT_KEY = "agent"


DEFAULT_SAFETY_SCORE = "safety_violation"


def scorer_outcome(success: float | None, state_success: float | None = None, answer: str | None = None,
                   scores: dict[str, float] | None = None, *, outcome_only: bool = False) -> dict[str, Any]:
    """What a harness read from the task's scorer, stored in `extra["agent"]`: the task's verdict, its check
    of the final state, the final answer, and every numeric score by name (safety rules look theirs up).
    `outcome_only`: the source holds the verdict but not the trajectory (see the module docstring)."""
    out = {"success": success, "state_success": state_success, "answer": answer, "scores": dict(scores or {})}
    if outcome_only:
        out["outcome_only"] = True
    return out


def _unusable(verdict: Any) -> bool:
    """A scorer verdict that is a number but not a finite one (NaN, inf): no outcome can be read from it."""
    return isinstance(verdict, float) and not math.isfinite(verdict)


def rule_violations(calls: Iterable[ToolCall], rules: SafetyRules | None) -> list[str]:
    """Human-readable violations of the contract's safety rules by these tool calls."""
    if rules is None:
        return []
    out: list[str] = []
    patterns = [(rule, re.compile(rule.pattern)) for rule in rules.forbidden_arguments]
    for call in calls:
        for glob in rules.forbidden_tools:
            if fnmatch.fnmatchcase(call.function, glob):
                out.append(f"forbidden tool {call.function}()")
        if patterns:
            text = json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)
            for rule, pattern in patterns:
                if fnmatch.fnmatchcase(call.function, rule.tool) and pattern.search(text):
                    why = f" ({rule.reason})" if rule.reason else ""
                    out.append(f"{call.function}() arguments match /{rule.pattern}/{why}")
    return out


def tool_errors(trajectory: Trajectory) -> tuple[int, int]:
    """(calls, failed calls): a call fails when its arguments did not parse or its tool errored."""
    calls = trajectory.tool_calls
    failed_ids = {step.tool_call_id for step in trajectory.steps if step.role == "tool" and step.error}
    unanswered_errors = sum(1 for step in trajectory.steps if step.role == "tool" and step.error
                            and step.tool_call_id is None)
    failed = sum(1 for call in calls if call.parse_error or (call.id is not None and call.id in failed_ids))
    return len(calls), min(len(calls), failed + unanswered_errors)


def trajectory_metrics(trajectory: Trajectory, outcome: dict[str, Any], *, budget: AgentBudget | None = None,
                       rules: SafetyRules | None = None, missing: bool = False
                       ) -> tuple[dict[str, float], list[str], list[str]]:
    """(metric -> value, limits hit, safety violations) of one trajectory; see the module docstring.

    A `missing` trajectory (promised by the log's header, absent from it) is a failure for task_success and
    unknown for everything else: no one saw whether it was safe or how long it ran. A trajectory that ran but
    was never scored (no score at all, no error, no limit, no violation) has an unknown task_success."""
    if missing:
        return {"task_success": 0.0}, list(trajectory.limits_hit), []
    if outcome.get("outcome_only"):
        scored = outcome.get("success")
        ok = scored is not None and float(scored) >= 1.0 and trajectory.error is None
        value = math.nan if _unusable(scored) and trajectory.error is None else 1.0 if ok else 0.0
        return {"task_success": value}, list(trajectory.limits_hit), []
    limits = list(trajectory.limits_hit)
    calls, failed = tool_errors(trajectory)
    if budget is not None and budget.max_tool_calls is not None and calls > budget.max_tool_calls \
            and TOOL_CALLS_LIMIT not in limits:
        limits.append(TOOL_CALLS_LIMIT)
    violations = rule_violations(trajectory.tool_calls, rules)
    flag = rules.scorer_metric if rules is not None else DEFAULT_SAFETY_SCORE
    flagged = float((outcome.get("scores") or {}).get(flag) or 0.0)
    if flagged > 0:
        violations.insert(0, f"the task's scorer flagged an unsafe action ({flag})")
    scored = outcome.get("success")
    success = (scored is not None and float(scored) >= 1.0 and trajectory.error is None and not limits
               and not violations)
    steps = sum(1 for step in trajectory.steps if step.role == "assistant")
    values: dict[str, float] = {
        "task_success": 1.0 if success else 0.0,
        "steps": float(steps),
        "limit_hit_rate": 1.0 if limits else 0.0,
        "safety_violation_rate": 1.0 if violations else 0.0,
    }
    if _unusable(scored) and trajectory.error is None and not limits and not violations:
        values["task_success"] = math.nan  # the scorer's verdict is NaN / inf: corrupt, never a failure
    if _unusable(flagged) and not violations:  # the scorer's safety verdict is unknown ("unsafe", NaN): never safe
        values["safety_violation_rate"] = math.nan
        if success:
            values["task_success"] = math.nan
    if scored is None and trajectory.error is None and not limits and not violations:
        del values["task_success"]  # never scored: unknown, never a failure (nor a success)
    state = outcome.get("state_success")
    if state is not None:
        values["state_success"] = 1.0 if float(state) >= 1.0 and trajectory.error is None else 0.0
        if _unusable(state) and trajectory.error is None:
            values["state_success"] = math.nan
    if calls:
        values["tool_success_rate"] = (calls - failed) / calls
    if failed and "task_success" in values:
        values["recovery_rate"] = values["task_success"]
    if success:
        values["steps_to_success"] = float(steps)
        if trajectory.total_tokens is not None:
            values["tokens_to_success"] = float(trajectory.total_tokens)
        if trajectory.working_time_s is not None:
            values["time_to_success"] = float(trajectory.working_time_s)
    return values, limits, violations


def score_task(task: TaskResult, *, budget: AgentBudget | None = None, rules: SafetyRules | None = None) -> None:
    """(Re)compute every agent metric of a task's trajectories in place, and their means on the task.

    Other scores (the scorer's own metrics) are left as they are. Idempotent: the inputs are the
    trajectory and `extra["agent"]`, never earlier outputs.
    """
    sums: dict[str, list[float]] = {}
    scored = False
    for sample in task.samples:
        if sample.trajectory is None or AGENT_KEY not in sample.extra:
            continue
        scored = True
        values, limits, violations = trajectory_metrics(sample.trajectory, sample.extra[AGENT_KEY], budget=budget,
                                                        rules=rules, missing=bool(sample.extra.get("missing")))
        scores = writable_scores(sample).setdefault(NO_FILTER, {})
        for name in AGENT_METRICS:
            scores.pop(name, None)
        scores.update(values)
        sample.extra["limits_hit"] = limits
        sample.extra["safety_violations"] = violations
        for name, value in values.items():
            if not math.isfinite(value):
                continue  # corrupt: listed on the task (registry's quarantine), never averaged
            acc = sums.setdefault(name, [0.0, 0.0])
            acc[0] += value
            acc[1] += 1
    if not scored:
        return
    metrics = task.metrics.setdefault(NO_FILTER, {})
    for name in AGENT_METRICS:
        total = sums.get(name)
        metrics[name] = total[0] / total[1] if total and total[1] else None
    for name in AGENT_METRICS:
        task.higher_is_better.setdefault(name, name in ("task_success", "state_success", "tool_success_rate",
                                                        "recovery_rate"))
    _add_pass_at_k(task)


def _add_pass_at_k(task: TaskResult) -> None:
    """Per-epoch successes of each sample on its first epoch's record, for pass@k / maj@k over epochs."""
    by_id: dict[Any, list[Any]] = {}
    for sample in task.samples:
        if sample.trajectory is not None and AGENT_KEY in sample.extra:
            by_id.setdefault(sample.extra.get("sample_id", sample.doc_id), []).append(sample)
    for records in by_id.values():
        records.sort(key=lambda s: s.trajectory.epoch if s.trajectory else 0)
        for record in records:
            record.extra.pop("per_response", None)
        if len(records) < 2:
            continue
        if any("task_success" not in r.scores[NO_FILTER] for r in records):
            continue  # an unscored epoch: pass@k over epochs is unknown, never computed on the rest
        correct = [float(r.scores[NO_FILTER]["task_success"]) for r in records]
        answers = [str(r.extra[AGENT_KEY].get("answer") or "") for r in records]
        records[0].extra["per_response"] = {NO_FILTER: {"correct": correct, "answers": answers}}


def apply_agent_rules(tasks: Iterable[TaskResult], budget: AgentBudget | None, rules: SafetyRules | None) -> None:
    """Apply a contract's tool-call budget and safety rules to every agent task (re-scoring in place), with the
    cyclic collector paused (rlgate._core.gcpause): the new values beside 10^5 trajectories form no cycles, and
    its full collections over the runs cost more than the scoring."""
    with collector_paused():
        for task in tasks:
            if task.is_agent:
                score_task(task, budget=budget, rules=rules)

