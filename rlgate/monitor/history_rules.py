"""Rules across gated checkpoints of one training run (pure functions over the stored history).

The history holds, per checkpoint, a flat `{metric: value}` map: the contract's gate metrics
(`task/metric[/filter]`), the training reward at that step (`train/reward_mean` by default) and cost
figures (`cost/tokens`, `cost/seconds`). Each rule returns findings with an `action` for the run:
pause, pause_manual_review, rollback (naming the checkpoint to return to) or research_only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rlgate.monitor.findings import Finding
from rlgate.monitor.policy import MonitorPolicy
from rlgate.monitor.rules import RuleStatus
from rlgate.monitor.rules.base import fmt, make
from rlgate.store.history import CheckpointRecord

REWARD_KEY = "train/reward_mean"


@dataclass(frozen=True)
class HistoryTargets:
    """Which stored metrics the cross-checkpoint rules look at, with their directions."""

    primary: str | None = None
    primary_higher_is_better: bool = True
    hard: dict[str, bool] = field(default_factory=dict)
    private: dict[str, bool] = field(default_factory=dict)
    reward: str = REWARD_KEY


def targets_from_contract(resolved: object) -> HistoryTargets:
    """Primary, hard and private-split metrics of a `ResolvedContract` (directions from the gates), named as the
    history stores them: the verdict's name, with the filter the gate reads (a gate written without one, e.g.
    `gsm8k/answer_parse_failure_rate`, is stored as `gsm8k/answer_parse_failure_rate/flexible-extract`; looked
    up by the name as written, it would never match, and the rule would never fire)."""
    from rlgate.contract.loader import ResolvedContract
    from rlgate.contract.metrics import MetricRef, higher_is_better
    from rlgate.results.models import MetricKey

    assert isinstance(resolved, ResolvedContract)
    gates = resolved.gates

    def direction(metric: str, override: bool | None) -> bool:
        return override if override is not None else higher_is_better(MetricRef.parse(metric).metric)

    def stored(metric: str) -> str:
        ref = MetricRef.parse(metric)
        return str(MetricKey.from_ref(ref, gates.default_filter(ref.task)))

    primary = gates.primary
    hard = {stored(g.metric): (g.higher_is_better if g.higher_is_better is not None else g.max is None)
            for g in gates.hard}
    private: dict[str, bool] = {}
    for gate in [*([primary] if primary else []), *gates.regression]:
        split = resolved.split_of(MetricRef.parse(gate.metric).task)
        if split is not None and split.release_gate_only:
            private[stored(gate.metric)] = direction(gate.metric, gate.higher_is_better)
    return HistoryTargets(primary=stored(primary.metric) if primary else None,
                          primary_higher_is_better=direction(primary.metric, primary.higher_is_better)
                          if primary else True, hard=hard, private=private)


def _signed(value: float, higher_is_better: bool) -> float:
    return value if higher_is_better else -value


def primary_below_best(history: Sequence[CheckpointRecord], targets: HistoryTargets,
                       policy: MonitorPolicy) -> list[Finding]:
    """The primary metric below the run's best by more than `max_drop` on the last N checkpoints -> pause."""
    cfg = policy.history.primary_below_best
    key = targets.primary
    points = [(r, r.metrics[key]) for r in history if key and key in r.metrics]
    if len(points) <= cfg.consecutive:
        return []
    hib = targets.primary_higher_is_better
    best_rec, best = max(points[:-cfg.consecutive], key=lambda p: _signed(p[1], hib))
    tail = points[-cfg.consecutive:]
    if not all(_signed(best, hib) - _signed(v, hib) > cfg.max_drop for _, v in tail):
        return []
    finding = make("primary_below_best", "algorithm", cfg,
                   f"{key} is below the run's best ({fmt(best)} at {best_rec.checkpoint}) by more than "
                   f"{cfg.max_drop:g} on the last {cfg.consecutive} checkpoints ({', '.join(fmt(v) for _, v in tail)}):"
                   " pause training and inspect", window=(tail[0][0].step, tail[-1][0].step),
                   values={"best": best, "best_checkpoint": best_rec.checkpoint, "latest": tail[-1][1]},
                   threshold={"max_drop": cfg.max_drop, "consecutive": float(cfg.consecutive)}, metrics=[key or ""])
    return [finding.model_copy(update={"action": "pause", "source": history[-1].run})]


def safety_worse(history: Sequence[CheckpointRecord], targets: HistoryTargets, policy: MonitorPolicy) -> list[Finding]:
    """Any hard (safety) metric worse than at the previous checkpoint -> pause and manual review."""
    cfg = policy.history.safety_worse
    if len(history) < 2:
        return []
    prev, last = history[-2], history[-1]
    out = []
    for metric, hib in sorted(targets.hard.items()):
        if metric not in prev.metrics or metric not in last.metrics:
            continue
        worse = _signed(prev.metrics[metric], hib) - _signed(last.metrics[metric], hib)
        if worse > cfg.tolerance:
            finding = make("safety_worse", "algorithm", cfg,
                           f"hard metric {metric} got worse: {fmt(prev.metrics[metric])} at {prev.checkpoint} -> "
                           f"{fmt(last.metrics[metric])} at {last.checkpoint}: pause and review by hand",
                           window=(prev.step, last.step),
                           values={"previous": prev.metrics[metric], "latest": last.metrics[metric]},
                           threshold={"tolerance": cfg.tolerance}, metrics=[metric])
            out.append(finding.model_copy(update={"action": "pause_manual_review", "source": last.run}))
    return out


def reward_known(history: Sequence[CheckpointRecord], targets: HistoryTargets) -> bool:
    """The training reward is recorded at the last two gated checkpoints (it comes from training logs)."""
    return bool(history) and all(targets.reward in r.metrics for r in history[-2:])


def reward_up_private_down(history: Sequence[CheckpointRecord], targets: HistoryTargets,
                           policy: MonitorPolicy) -> list[Finding]:
    """Training reward up since the previous checkpoint but a private-split score down -> roll back to the best.

    It needs the training reward at both checkpoints (from training logs): without it the rule is not
    run (`reward_known`), since a private score moving alone between two checkpoints is mostly noise,
    which the release gate's own paired tests judge better.
    """
    cfg = policy.history.reward_up_private_down
    if len(history) < 2 or not reward_known(history, targets):
        return []
    prev, last = history[-2], history[-1]
    if last.metrics[targets.reward] <= prev.metrics[targets.reward]:
        return []
    out = []
    for metric, hib in sorted(targets.private.items()):
        if metric not in prev.metrics or metric not in last.metrics:
            continue
        drop = _signed(prev.metrics[metric], hib) - _signed(last.metrics[metric], hib)
        if drop <= cfg.min_private_drop:
            continue
        scored = [r for r in history if metric in r.metrics]
        best = max(scored, key=lambda r: _signed(r.metrics[metric], hib))
        reward = (f"training reward rose {fmt(prev.metrics[targets.reward])} -> "
                  f"{fmt(last.metrics[targets.reward])} but ")
        values = {"reward_previous": prev.metrics[targets.reward], "reward_latest": last.metrics[targets.reward]}
        finding = make("reward_up_private_down", "reward", cfg,
                       f"{reward}private-split {metric} fell {fmt(prev.metrics[metric])} -> "
                       f"{fmt(last.metrics[metric])} from {prev.checkpoint} to {last.checkpoint}:"
                       f" roll back to {best.checkpoint} ({metric} {fmt(best.metrics[metric])})",
                       window=(prev.step, last.step),
                       values={**values, "private_previous": prev.metrics[metric],
                               "private_latest": last.metrics[metric], "best_checkpoint": best.checkpoint},
                       threshold={"min_private_drop": cfg.min_private_drop},
                       metrics=[targets.reward, metric])
        out.append(finding.model_copy(update={"action": "rollback", "rollback_to": best.checkpoint,
                                              "source": last.run}))
    return out


def cost_over_budget(history: Sequence[CheckpointRecord], targets: HistoryTargets,
                     policy: MonitorPolicy) -> list[Finding]:
    """A primary gain bought with more than `max_relative_increase` extra tokens or time -> research_only."""
    cfg = policy.history.cost_over_budget
    key = targets.primary
    if not history or not key:
        return []
    first, last = history[0], history[-1]
    gain = (key in first.metrics and key in last.metrics and
            _signed(last.metrics[key], targets.primary_higher_is_better)
            > _signed(first.metrics[key], targets.primary_higher_is_better))
    if not gain:
        return []
    out = []
    for metric, budget in ((cfg.tokens_metric, cfg.tokens), (cfg.seconds_metric, cfg.seconds)):
        reference = budget if budget is not None else (first.metrics.get(metric) if first is not last else None)
        cost = last.metrics.get(metric)
        if reference is None or cost is None or reference <= 0:
            continue
        increase = cost / reference - 1.0
        if increase > cfg.max_relative_increase:
            finding = make("cost_over_budget", "configuration", cfg,
                           f"the {key} gain costs {metric} {fmt(cost)}, {increase:.0%} over the budget "
                           f"{fmt(reference)} ({'declared' if budget is not None else 'first checkpoint'}; limit "
                           f"{cfg.max_relative_increase:.0%}): research only",
                           window=(first.step, last.step), values={"cost": cost, "budget": reference,
                                                                   "increase": increase},
                           threshold={"max_relative_increase": cfg.max_relative_increase}, metrics=[metric])
            out.append(finding.model_copy(update={"action": "research_only", "source": last.run}))
    return out


def cost_known(history: Sequence[CheckpointRecord], policy: MonitorPolicy) -> bool:
    """Whether the latest checkpoint recorded a cost metric the rule compares (else it can never fire: a
    misspelt metric name, or a history that records no costs)."""
    cfg = policy.history.cost_over_budget
    return bool(history) and any(m in history[-1].metrics for m in (cfg.tokens_metric, cfg.seconds_metric))


HISTORY_RULES = (primary_below_best, safety_worse, reward_up_private_down, cost_over_budget)
#: The fault domain each cross-checkpoint rule's findings name (for the not-run list).
DOMAINS = {"primary_below_best": "algorithm", "safety_worse": "algorithm", "reward_up_private_down": "reward",
           "cost_over_budget": "configuration"}


def enabled(policy: MonitorPolicy, rule: str) -> bool:
    """Whether the policy runs the cross-checkpoint rule `rule`."""
    return bool(getattr(policy.history, rule).enabled)


def evaluate_history(history: Sequence[CheckpointRecord], targets: HistoryTargets,
                     policy: MonitorPolicy) -> list[Finding]:
    """Every enabled cross-checkpoint rule over one run's history (ordered by step)."""
    return evaluate_history_with_status(history, targets, policy)[0]


def evaluate_history_with_status(history: Sequence[CheckpointRecord], targets: HistoryTargets,
                                 policy: MonitorPolicy) -> tuple[list[Finding], list[RuleStatus]]:
    """The findings, and for every cross-checkpoint rule whether it ran and why not (for the report)."""
    out: list[Finding] = []
    statuses: list[RuleStatus] = []
    enabled = policy.history.model_dump()
    for rule in HISTORY_RULES:
        name = rule.__name__
        domain = DOMAINS[name]
        if not enabled[name]["enabled"]:
            statuses.append(RuleStatus(rule=name, domain=domain, evaluated=False, reason="disabled by the policy"))
            continue
        if not history:
            statuses.append(RuleStatus(rule=name, domain=domain, evaluated=False,
                                       reason="no gated checkpoint of this training run before this one"))
            continue
        if name == "reward_up_private_down" and not reward_known(history, targets):
            statuses.append(RuleStatus(rule=name, domain=domain, evaluated=False,
                                       reason="needs the training reward at the last two checkpoints, which only "
                                       "training logs provide (monitor.logs)"))
            continue
        if name == "cost_over_budget" and not cost_known(history, policy):
            cfg = policy.history.cost_over_budget
            statuses.append(RuleStatus(rule=name, domain=domain, evaluated=False,
                                       reason=f"no gated checkpoint recorded {cfg.tokens_metric} or "
                                       f"{cfg.seconds_metric} (cost_over_budget.tokens_metric / seconds_metric "
                                       "name the history metrics it compares)"))
            continue
        found = rule(history, targets, policy)
        out.extend(found)
        statuses.append(RuleStatus(rule=name, domain=domain, evaluated=True, findings=len(found)))
    return out, statuses
