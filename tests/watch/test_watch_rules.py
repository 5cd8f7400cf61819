"""From the history to the control action: rollback beats pause beats continue; private scores compared
between the checkpoints that consulted them."""

from __future__ import annotations

from rlgate.engine.models import Decision, GateVerdict
from rlgate.monitor.history_rules import HistoryTargets, evaluate_history_with_status
from rlgate.monitor.policy import MonitorPolicy
from rlgate.store.records import CheckpointRecord
from rlgate.watch.rules import private_findings, step_verdict

PRIVATE = "held_task/acc/none"


def record(step: int, reward: float, private: float | None = None, hard: float = 0.0) -> CheckpointRecord:
    metrics = {"train/reward_mean": reward, "gsm8k/answer_parse_failure_rate/flexible-extract": hard}
    if private is not None:
        metrics[PRIVATE] = private
    return CheckpointRecord(run="r", checkpoint=f"/run/checkpoint-{step}", step=step, metrics=metrics,
                            recorded_at=float(step))


def decision(*gates: GateVerdict) -> Decision:
    return Decision(decision="release", summary="s", gates=list(gates), contract="c", alpha=0.05, seed=0)


TARGETS = HistoryTargets(primary=None, hard={"gsm8k/answer_parse_failure_rate/flexible-extract": False},
                         private={PRIVATE: True})


def test_reward_up_private_down_across_checkpoints_between_consultations_rolls_back_to_the_best() -> None:
    records = [record(2, 0.1, private=0.8), record(4, 0.2), record(6, 0.3, private=0.6)]
    policy = MonitorPolicy()
    findings, statuses = evaluate_history_with_status(records, TARGETS, policy)
    assert not findings  # the rule compares the last two records, and step 4 has no private score
    extra = private_findings(records, TARGETS, policy, findings)
    verdict = step_verdict(decision(), [*findings, *extra], statuses, records)
    assert verdict.action == "rollback" and verdict.rollback_to == "/run/checkpoint-2" and verdict.rollback_to_step == 2
    assert any("reward_up_private_down (rollback)" in r for r in verdict.reasons)
    # not when the latest checkpoint did not consult the private split
    assert private_findings(records[:2], TARGETS, policy, []) == []


def test_a_worse_hard_metric_pauses_with_the_reward_trend_and_a_critical_log_rule_pauses_too() -> None:
    records = [record(2, 0.2, hard=0.0), record(4, 0.6, hard=0.5)]
    findings, statuses = evaluate_history_with_status(records, TARGETS, MonitorPolicy())
    verdict = step_verdict(decision(), findings, statuses, records)
    assert verdict.action == "pause"
    assert any("safety_worse" in r and "training reward rose 0.2 -> 0.6 meanwhile" in r for r in verdict.reasons)
    critical = GateVerdict(name="monitor:kl_spike", kind="monitor", metric="kl_spike", verdict="fail",
                           outcome="monitor_critical", effect="block", reason="[algorithm] KL spiked")
    calm = step_verdict(decision(critical), [], [], records[:1])
    assert calm.action == "pause" and calm.reasons == ["monitor kl_spike (critical, pause): [algorithm] KL spiked"]
    assert step_verdict(decision(), [], [], records[:1]).action == "continue"
