"""The rule registry and the evaluator that runs every rule a log has the metrics for.

Order matters only for the diagnosis: among findings of equal severity the earliest rule here names
the fault domain (reward hacking explains a length blow-up, not the other way round).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rlgate.monitor.findings import Finding
from rlgate.monitor.policy import MonitorPolicy, RewardRange
from rlgate.monitor.rules import algorithm, reward, system
from rlgate.monitor.rules.base import Rule, RuleInput
from rlgate.monitor.series import TrainingLog

RULES: tuple[Rule, ...] = (
    Rule("non_finite", "infrastructure", "NaN or Inf in any metric", system.non_finite),
    Rule("reward_hacking", "reward", "reward up while the held-out score falls (with signs of exploitation)",
         reward.reward_hacking, requires=("reward_mean", "val_score")),
    Rule("reward_out_of_range", "reward", "reward outside its declared range", reward.reward_out_of_range,
         requires=("reward_mean",)),
    Rule("train_val_divergence", "data", "training reward up while validation falls on a verifiable task",
         reward.train_val_divergence, requires=("reward_mean", "val_score")),
    Rule("length_blowup", "reward", "response length grows far beyond its start", reward.length_blowup,
         requires=("len_mean",)),
    Rule("length_reward_correlation", "reward", "reward rises with length while length grows",
         reward.length_reward_correlation, requires=("len_mean", "reward_mean")),
    Rule("zero_std", "data", "most groups have zero reward variance at a reward near 0 or 1", reward.zero_std,
         requires=("zero_std_frac", "reward_mean")),
    Rule("reward_stuck", "environment", "reward and reward_std stuck at exactly 0", system.reward_stuck,
         requires=("reward_mean", "reward_std")),
    Rule("reward_pinned", "environment", "reward pinned at one exact value (mean = min = max) for many steps",
         system.reward_pinned, requires=("reward_mean",), any_of=("reward_max", "reward_std")),
    Rule("tool_failures", "environment", "aborted rollouts or tool failures", system.tool_failures,
         any_of=("aborted_ratio", "tool_failure_ratio")),
    Rule("grad_norm_explosion", "infrastructure", "gradient norm rises and stays high", system.grad_norm_explosion,
         requires=("grad_norm",)),
    Rule("train_inference_mismatch", "infrastructure", "rollout engine and trainer logprobs disagree",
         system.train_inference_mismatch, requires=("mismatch_kl",)),
    Rule("kl_spike", "algorithm", "KL far above its recent median", algorithm.kl_spike, requires=("kl_ref",)),
    Rule("entropy_collapse", "algorithm", "policy entropy collapses", algorithm.entropy_collapse,
         requires=("entropy",)),
    Rule("entropy_blowup", "algorithm", "policy entropy blows up", algorithm.entropy_blowup, requires=("entropy",)),
    Rule("large_policy_step", "algorithm", "approx-KL between updates or clip fraction too high",
         algorithm.large_policy_step, any_of=("kl_step", "clipfrac")),
    Rule("critic_explained_variance", "algorithm", "critic explained variance below 0 (PPO)",
         algorithm.critic_explained_variance, requires=("critic_ev",)),
    Rule("kl_negative", "configuration", "KL estimate negative on many steps", algorithm.kl_negative,
         requires=("kl_ref",)),
    Rule("kl_above_target", "configuration", "KL above its target", algorithm.kl_above_target, requires=("kl_ref",)),
    Rule("truncation_high", "configuration", "many responses hit the length limit", system.truncation_high,
         requires=("trunc_ratio",)),
    Rule("truncation_rising", "configuration", "truncation ratio rising", system.truncation_rising,
         requires=("trunc_ratio",)),
)
RULE_ORDER = {rule.name: i for i, rule in enumerate(RULES)}


class RuleStatus(BaseModel):
    """Whether a rule ran on a log, and why not when it did not."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    domain: str
    evaluated: bool
    reason: str | None = None
    needs: list[str] = Field(default_factory=list, description="metrics (with example log keys) a rule not run "
                             "lacks; map a key with monitor.metrics or --map canonical=key")
    findings: int = 0


def evaluate(log: TrainingLog, policy: MonitorPolicy) -> tuple[list[Finding], list[RuleStatus]]:
    """Run every enabled rule the log has metrics for; pure (no I/O)."""
    inp = RuleInput(log, policy)
    findings: list[Finding] = []
    statuses: list[RuleStatus] = []
    for rule in RULES:
        cfg = policy.rule(rule.name)
        if not cfg.enabled:
            statuses.append(RuleStatus(rule=rule.name, domain=rule.domain, evaluated=False,
                                       reason="disabled by the policy"))
            continue
        missing = rule.missing(log)
        if missing:
            statuses.append(RuleStatus(rule=rule.name, domain=rule.domain, evaluated=False,
                                       reason=_lacking(log, missing), needs=rule.needs(log)))
            continue
        if isinstance(cfg, RewardRange) and cfg.min is None and cfg.max is None:
            statuses.append(RuleStatus(rule=rule.name, domain=rule.domain, evaluated=False,
                                       reason="no declared reward range (monitor.overrides.reward_out_of_range)"))
            continue
        found = [f.model_copy(update={"source": log.path}) for f in rule.check(inp)]
        findings.extend(found)
        statuses.append(RuleStatus(rule=rule.name, domain=rule.domain, evaluated=True, findings=len(found)))
    return findings, statuses


def _lacking(log: TrainingLog, missing: list[str]) -> str:
    """Why a rule did not run: metrics absent, or logged with no finite value (all NaN/Inf)."""
    nan = [m for m in missing if log.get(m) is not None]
    absent = [m for m in missing if m not in nan]
    parts = ([f"log has no {', '.join(absent)}"] if absent else []) + \
        ([f"{', '.join(nan)} logged with no finite value"] if nan else [])
    return "; ".join(parts)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first; within a severity, in registry order (history rules after log rules)."""
    return sorted(findings, key=lambda f: (f.rank, RULE_ORDER.get(f.rule, len(RULE_ORDER))))
