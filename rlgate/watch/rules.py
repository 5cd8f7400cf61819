"""From one gated checkpoint to the run's control signal: the cross-checkpoint rules, then the monitor.

The history rules (`rlgate.monitor.history_rules`) run on the run's history *including* the checkpoint just
recorded (the decision's own monitor section saw only the earlier ones): `rollback` wins over `pause`, which
wins over `continue`. A critical finding of the monitor's log rules pauses too. The gate decision itself
(release, block, ...) is reported but does not stop training: an early checkpoint is often below the
baseline, and the release gate is the place where that decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rlgate.engine.models import Decision
from rlgate.monitor.findings import Finding
from rlgate.monitor.history_rules import (
    DOMAINS,
    REWARD_KEY,
    HistoryTargets,
    enabled,
    reward_up_private_down,
)
from rlgate.monitor.policy import MonitorPolicy
from rlgate.monitor.rules import RuleStatus
from rlgate.store.records import CheckpointRecord
from rlgate.watch.control import STRENGTH, ControlAction

_ACTION: dict[str, ControlAction] = {"pause": "pause", "pause_manual_review": "pause", "rollback": "rollback"}


@dataclass(frozen=True)
class StepVerdict:
    """What one gated step asks of the run, and why."""

    action: ControlAction = "continue"
    reasons: list[str] = field(default_factory=list)
    rollback_to: str | None = None
    rollback_to_step: int | None = None
    findings: list[Finding] = field(default_factory=list)
    statuses: list[RuleStatus] = field(default_factory=list)


def _reward_note(records: Sequence[CheckpointRecord]) -> str:
    """The training reward between the last two gated checkpoints, when the logs gave it."""
    if len(records) < 2 or not all(REWARD_KEY in r.metrics for r in records[-2:]):
        return ""
    prev, last = records[-2].metrics[REWARD_KEY], records[-1].metrics[REWARD_KEY]
    trend = "rose" if last > prev else "fell" if last < prev else "stayed"
    return f" (training reward {trend} {prev:.4g} -> {last:.4g} meanwhile)"


def step_verdict(decision: Decision, findings: Sequence[Finding], statuses: Sequence[RuleStatus],
                 records: Sequence[CheckpointRecord]) -> StepVerdict:
    """The control action for the step just gated: history findings (with their actions) and critical log rules."""
    action: ControlAction = "continue"
    reasons: list[str] = []
    rollback_to: str | None = None
    note = _reward_note(records)
    for finding in findings:
        wanted = _ACTION.get(finding.action or "", "continue")
        if wanted == "continue":
            if finding.action:
                reasons.append(f"{finding.rule} ({finding.action}, training goes on): {finding.message}")
            continue
        reasons.append(f"{finding.rule} ({finding.action}): {finding.message}{note}")
        if STRENGTH[wanted] > STRENGTH[action]:
            action = wanted
        if wanted == "rollback" and rollback_to is None:
            rollback_to = finding.rollback_to
    for gate in decision.gates:
        if gate.kind == "monitor" and gate.outcome == "monitor_critical" and gate.metric not in DOMAINS:
            reasons.append(f"monitor {gate.metric} (critical, pause): {gate.reason}")
            if STRENGTH[action] < STRENGTH["pause"]:
                action = "pause"
    step = next((r.step for r in records if rollback_to is not None and r.checkpoint == rollback_to), None)
    return StepVerdict(action, reasons, rollback_to, step, list(findings), list(statuses))


def private_findings(records: Sequence[CheckpointRecord], targets: HistoryTargets, policy: MonitorPolicy,
                     found: Sequence[Finding]) -> list[Finding]:
    """`reward_up_private_down` between the last two checkpoints that consulted the private splits.

    The watcher consults them only every `watch.private_every` checkpoints, so the checkpoint before the latest
    one seldom has a private score and the rule, which compares the last two records, would never run. Here it
    compares the last two *consulting* checkpoints (when the latest one consulted them); findings already made
    are not repeated.
    """
    if not targets.private or not records or not enabled(policy, "reward_up_private_down"):
        return []
    consulted = [r for r in records if any(m in r.metrics for m in targets.private)]
    if not consulted or consulted[-1] is not records[-1]:
        return []
    messages = {f.message for f in found}
    return [f for f in reward_up_private_down(consulted, targets, policy) if f.message not in messages]

