"""Trajectory views for the report: every agent run of a shareable task, openable step by step.

Built from the runs' trajectories for the documents a task section may show (never a
`release_gate_only` split: the caller passes no documents for those). A report holds at most
`MAX_PER_TASK` trajectories per task and `TRAJECTORY_BUDGET` UTF-8 bytes of step text in all, each
text capped at `STEP_CAP`; regressed pairs, then improved ones, then failures come first, and a
trajectory past the budget keeps its outcome and cost but not its steps (`steps_left_out`).
"""

from __future__ import annotations

import json
from typing import Any

from rlgate._core.text import truncate, utf8_size
from rlgate.contract.models import SafetyRules
from rlgate.report.model import CHANGES, Change, StepKind, StepView, TaskSection, ToolCallView, TrajectoryView
from rlgate.results.agent_metrics import AGENT_KEY, rule_violations, tool_errors
from rlgate.results.models import NO_FILTER, DocId, SampleRecord, TaskResult, Trajectory, doc_order

#: UTF-8 bytes of step text kept in one report (on top of the sample text budget).
TRAJECTORY_BUDGET = 2_000_000
#: Longest single step text (message, tool arguments, tool result, final state) kept.
STEP_CAP = 4_000
#: Trajectories per task shown in the report; the rest are counted.
MAX_PER_TASK = 200


def _cap(text: str | None) -> str | None:
    if text is None:
        return None
    capped, missing = truncate(text, STEP_CAP)
    return capped + (f"\n… [{missing:,} more characters]" if missing else "")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def step_views(trajectory: Trajectory, rules: SafetyRules | None = None) -> list[StepView]:
    """The trajectory's messages as typed steps, with tool results named, retries and unsafe calls marked."""
    functions: dict[str, str] = {}
    failed: set[str] = set()
    last_assistant = max((i for i, s in enumerate(trajectory.steps) if s.role == "assistant"), default=-1)
    out: list[StepView] = []
    for index, step in enumerate(trajectory.steps):
        kind: StepKind
        function = None
        retry = False
        calls = []
        if step.role == "assistant":
            kind = "final" if index == last_assistant and not step.tool_calls else "action"
            for call in step.tool_calls:
                if call.id is not None:
                    functions[call.id] = call.function
                retry = retry or call.function in failed
                if call.parse_error:
                    failed.add(call.function)
                calls.append(ToolCallView(function=call.function, arguments=_cap(_json(call.arguments)) or "",
                                          parse_error=_cap(call.parse_error),
                                          unsafe=rule_violations([call], rules)))
        elif step.role == "tool":
            kind = "tool_result"
            function = functions.get(step.tool_call_id or "")
            if step.error and function:
                failed.add(function)
        else:
            kind = "instruction" if step.role == "system" else "observation"
        out.append(StepView(index=index + 1, role=step.role, kind=kind, text=_cap(step.content),
                            chars=len(step.content), tool_calls=calls, function=function, error=_cap(step.error),
                            retry=retry))
    return out


def trajectory_view(run: str, sample: SampleRecord, change: Change, rules: SafetyRules | None = None
                    ) -> TrajectoryView:
    """One sample's trajectory with its outcome, cost and steps."""
    trajectory = sample.trajectory
    assert trajectory is not None
    scores = {k: float(v) for k, v in sample.scores.get(NO_FILTER, {}).items() if isinstance(v, int | float)}
    calls, failed = tool_errors(trajectory)
    outcome = sample.extra.get(AGENT_KEY) or {}
    limits = sample.limits_reached()
    return TrajectoryView(
        run=run, doc_id=sample.doc_id, epoch=trajectory.epoch, change=change, success=scores.get("task_success"),
        scores=scores, answer=_cap(outcome.get("answer")), explanation=_cap(trajectory.explanation),
        final_state=_cap(_json(trajectory.final_state)) if trajectory.final_state is not None else None,
        turns=sum(1 for s in trajectory.steps if s.role == "assistant"), tool_calls=calls, tool_errors=failed,
        tokens=trajectory.total_tokens, time_s=trajectory.working_time_s, limits_hit=limits,
        error=_cap(trajectory.error), safety_violations=[str(v) for v in sample.extra.get("safety_violations") or []],
        steps=step_views(trajectory, rules), steps_total=len(trajectory.steps))


def _failed(view: TrajectoryView) -> bool:
    return not view.success or bool(view.error or view.limits_hit or view.safety_violations)


def task_trajectories(baseline: TaskResult | None, candidate: TaskResult | None,
                      changes: dict[DocId, Change], rules: SafetyRules | None = None
                      ) -> tuple[list[TrajectoryView], int]:
    """(views of the shown documents, most telling first, at most MAX_PER_TASK; trajectories in all)."""
    rank = {c: i for i, c in enumerate(CHANGES)}
    found: list[tuple[int, TrajectoryView]] = []
    total = 0
    for order, (run, result) in enumerate((("candidate", candidate), ("baseline", baseline))):
        for sample in result.samples if result is not None else []:
            if sample.trajectory is None:
                continue
            total += 1
            change = changes.get(sample.doc_id)
            if change is not None:
                found.append((order, trajectory_view(run, sample, change, rules)))
    failed_docs = {view.doc_id for _, view in found if _failed(view)}
    # a document's runs stay together (candidate first); changed pairs, then failures, then the rest
    found.sort(key=lambda item: (rank[item[1].change], item[1].doc_id not in failed_docs,
                                 doc_order(item[1].doc_id), item[0]))
    return [view for _, view in found[:MAX_PER_TASK]], total


def _cost(view: TrajectoryView) -> int:
    size = 0
    for step in view.steps:
        size += utf8_size(step.text) + utf8_size(step.error)
        size += sum(utf8_size(c.arguments) + utf8_size(c.parse_error) for c in step.tool_calls)
    return size


def apply_trajectory_budget(sections: list[TaskSection], budget: int = TRAJECTORY_BUDGET) -> int:
    """Keep steps of trajectories in section order's priority (tasks interleaved) until `budget` bytes are
    spent; later ones keep their outcome only. Returns how many lost their steps. Mutates the views."""
    order = sorted((i, t) for t, section in enumerate(sections) for i in range(len(section.trajectories)))
    used = 0
    left_out = 0
    for i, t in order:
        view = sections[t].trajectories[i]
        cost = _cost(view)
        if used + cost > budget:
            view.steps = []
            view.steps_left_out = True
            left_out += 1
            continue
        used += cost
    return left_out
