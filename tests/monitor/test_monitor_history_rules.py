"""Rules across gated checkpoints: pause, manual review, rollback (named), research_only."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate.monitor.api import history_findings
from rlgate.monitor.history_rules import (
    HistoryTargets,
    cost_over_budget,
    evaluate_history,
    evaluate_history_with_status,
    primary_below_best,
    reward_up_private_down,
    safety_worse,
)
from rlgate.monitor.policy import MonitorPolicy
from rlgate.store.history import CheckpointHistory, CheckpointRecord

PRIMARY = "gsm8k/exact_match/flexible-extract"
HARD = "gsm8k/answer_parse_failure_rate"
PRIVATE = "gsm8k_private/exact_match/flexible-extract"
TARGETS = HistoryTargets(primary=PRIMARY, hard={HARD: False}, private={PRIVATE: True})
POLICY = MonitorPolicy()


def runs(*metrics: dict[str, float]) -> list[CheckpointRecord]:
    return [CheckpointRecord(run="r", checkpoint=f"ckpt-{(i + 1) * 100}", step=(i + 1) * 100, metrics=m,
                             recorded_at=float(i)) for i, m in enumerate(metrics)]


def test_primary_below_best_on_two_consecutive_checkpoints_pauses() -> None:
    history = runs({PRIMARY: 0.50}, {PRIMARY: 0.60}, {PRIMARY: 0.585}, {PRIMARY: 0.58})
    [f] = primary_below_best(history, TARGETS, POLICY)
    assert f.action == "pause" and f.values["best_checkpoint"] == "ckpt-200"


@pytest.mark.parametrize("tail", [(0.585, 0.595), (0.595, 0.585), (0.591, 0.592)])
def test_primary_below_best_near_misses(tail: tuple[float, float]) -> None:
    # Only one of the two last checkpoints is more than 1 point below the best, or neither is.
    history = runs({PRIMARY: 0.50}, {PRIMARY: 0.60}, {PRIMARY: tail[0]}, {PRIMARY: tail[1]})
    assert primary_below_best(history, TARGETS, POLICY) == []


def test_safety_metric_worse_asks_for_manual_review() -> None:
    [f] = safety_worse(runs({HARD: 0.02}, {HARD: 0.03}), TARGETS, POLICY)
    assert (f.action, f.severity) == ("pause_manual_review", "critical")
    assert safety_worse(runs({HARD: 0.03}, {HARD: 0.02}), TARGETS, POLICY) == []


def test_reward_up_private_down_rolls_back_to_the_best_checkpoint() -> None:
    history = runs({"train/reward_mean": 0.3, PRIVATE: 0.40}, {"train/reward_mean": 0.5, PRIVATE: 0.46},
                   {"train/reward_mean": 0.6, PRIVATE: 0.44}, {"train/reward_mean": 0.7, PRIVATE: 0.41})
    [f] = reward_up_private_down(history, TARGETS, POLICY)
    assert (f.action, f.rollback_to) == ("rollback", "ckpt-200")
    assert "roll back to ckpt-200" in f.message


def test_reward_up_private_up_or_reward_down_is_fine() -> None:
    up = runs({"train/reward_mean": 0.3, PRIVATE: 0.40}, {"train/reward_mean": 0.5, PRIVATE: 0.42})
    assert reward_up_private_down(up, TARGETS, POLICY) == []
    down = runs({"train/reward_mean": 0.5, PRIVATE: 0.42}, {"train/reward_mean": 0.4, PRIVATE: 0.40})
    assert reward_up_private_down(down, TARGETS, POLICY) == []


def test_without_the_training_reward_the_rollback_rule_is_not_run() -> None:
    """Gated without training logs the history has no reward: the rule says so instead of guessing."""
    history = runs({PRIVATE: 0.40}, {PRIVATE: 0.46}, {PRIVATE: 0.41})
    assert reward_up_private_down(history, TARGETS, POLICY) == []
    found, statuses = evaluate_history_with_status(history, TARGETS, POLICY)
    status = next(s for s in statuses if s.rule == "reward_up_private_down")
    assert not status.evaluated and "training logs" in (status.reason or "")
    assert not [f for f in found if f.rule == "reward_up_private_down"]


def test_rule_statuses_say_which_history_rules_ran() -> None:
    found, statuses = evaluate_history_with_status([], TARGETS, POLICY)
    assert found == [] and [s.rule for s in statuses] == ["primary_below_best", "safety_worse",
                                                          "reward_up_private_down", "cost_over_budget"]
    assert all(not s.evaluated and "no gated checkpoint" in (s.reason or "") for s in statuses)
    disabled = POLICY.model_copy(deep=True)
    disabled.history.safety_worse.enabled = False
    history = runs({HARD: 0.01, PRIMARY: 0.5}, {HARD: 0.05, PRIMARY: 0.52})
    found, statuses = evaluate_history_with_status(history, TARGETS, disabled)
    by_rule = {s.rule: s for s in statuses}
    assert by_rule["safety_worse"].reason == "disabled by the policy" and found == []
    found, statuses = evaluate_history_with_status(history, TARGETS, POLICY)
    assert {s.rule: s.findings for s in statuses}["safety_worse"] == 1
    # no reward and no cost recorded: those two rules say so instead of reporting a check that cannot fire
    assert [s.rule for s in statuses if not s.evaluated] == ["reward_up_private_down", "cost_over_budget"]


def test_cost_rule_with_a_metric_no_checkpoint_recorded_is_not_run_not_silently_clean() -> None:
    from rlgate.monitor.policy import apply_overrides

    history = runs({PRIMARY: 0.50, "cost/tokens": 400}, {PRIMARY: 0.55, "cost/tokens": 900})
    typo = apply_overrides(POLICY, {"cost_over_budget": {"tokens_metric": "cost/tokns"}})
    found, statuses = evaluate_history_with_status(history, TARGETS, typo)
    status = next(s for s in statuses if s.rule == "cost_over_budget")
    assert not status.evaluated and "cost/tokns" in (status.reason or "") and found == []
    found, statuses = evaluate_history_with_status(history, TARGETS, POLICY)
    assert [f.rule for f in found] == ["cost_over_budget"]


def test_gain_costing_over_30_percent_more_tokens_is_research_only() -> None:
    history = runs({PRIMARY: 0.50, "cost/tokens": 400}, {PRIMARY: 0.55, "cost/tokens": 560})
    [f] = cost_over_budget(history, TARGETS, POLICY)
    assert f.action == "research_only" and f.values["increase"] == pytest.approx(0.4)
    cheap = runs({PRIMARY: 0.50, "cost/tokens": 400}, {PRIMARY: 0.55, "cost/tokens": 510})
    assert cost_over_budget(cheap, TARGETS, POLICY) == []
    no_gain = runs({PRIMARY: 0.50, "cost/tokens": 400}, {PRIMARY: 0.49, "cost/tokens": 900})
    assert cost_over_budget(no_gain, TARGETS, POLICY) == []


def test_declared_time_budget() -> None:
    from rlgate.monitor.policy import apply_overrides

    policy = apply_overrides(POLICY, {"cost_over_budget": {"seconds": 100.0}})
    [f] = cost_over_budget(runs({PRIMARY: 0.5, "cost/seconds": 90}, {PRIMARY: 0.6, "cost/seconds": 140}),
                           TARGETS, policy)
    assert f.values["budget"] == 100.0 and "declared" in f.message


def test_history_findings_read_the_store(tmp_path: Path) -> None:
    db = CheckpointHistory(tmp_path / "h.sqlite")
    assert history_findings(db, "r", TARGETS, POLICY) == []  # a new store: no history yet
    for rec in runs({HARD: 0.01, PRIMARY: 0.5}, {HARD: 0.05, PRIMARY: 0.52}):
        db.record(rec.run, rec.step, rec.checkpoint, rec.metrics, "release")
    [f] = history_findings(db, "r", TARGETS, POLICY)
    assert f.rule == "safety_worse"
    disabled = POLICY.model_copy(deep=True)
    disabled.history.safety_worse.enabled = False
    assert evaluate_history(db.history("r"), TARGETS, disabled) == []


def test_history_findings_compare_one_contracts_checkpoints(tmp_path: Path) -> None:
    """Another contract's record of the same checkpoint (its own sampling of the same metric) is not a later
    checkpoint of this contract: the rules look at the gating contract's records only."""
    db = CheckpointHistory(tmp_path / "h.sqlite")
    for rec in runs({HARD: 0.01, PRIMARY: 0.5}, {HARD: 0.01, PRIMARY: 0.52}):
        db.record(rec.run, rec.step, rec.checkpoint, rec.metrics, "release", contract="a")
    db.record("r", 200, "ckpt-200", {HARD: 0.05, PRIMARY: 0.40}, "block", contract="b")
    assert [f.rule for f in history_findings(db, "r", TARGETS, POLICY)] == ["safety_worse"]  # both mixed: wrong
    assert history_findings(db, "r", TARGETS, POLICY, contract="a") == []
    assert history_findings(db, "r", TARGETS, POLICY, contract="b") == []  # one checkpoint: nothing to compare
