"""Root cause: rank the fault domains the findings point at, with the evidence for each.

Findings are symptoms, and one fault shows up as several (a truncation limit that is too low makes
length and reward move together; a hacked reward drags length, truncation and KL with it; NaNs make
every curve spike). Each finding is first attributed to the finding that explains it, when one does
(`EXPLAINS`, with the condition under which the explanation holds); the rest stand for their own
domain. A domain's candidate then scores by its worst severity first and the weight of everything
it accounts for second, and the best-scoring candidate names the root cause. Notes (info) are never
a root cause, so a healthy run has no diagnosis. Pure: findings in, ranking out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from rlgate.monitor.findings import FAULT_DOMAINS, FaultDomain, Finding, Severity
from rlgate.monitor.rules import RULE_ORDER

WEIGHT: dict[str, int] = {"critical": 3, "warning": 2, "info": 0}
Condition = Callable[[Mapping[str, list[Finding]]], bool]


def _always(_: Mapping[str, list[Finding]]) -> bool:
    return True


def _limit_not_reward(found: Mapping[str, list[Finding]]) -> bool:
    """Truncation explains length/reward co-movement when nothing says the reward is gamed: no held-out
    fall, the reward inside its range and the length grown moderately (no blow-up)."""
    return not any(found.get(r) for r in ("reward_hacking", "train_val_divergence", "reward_out_of_range",
                                          "length_blowup"))


#: explaining rule -> (rules whose findings it explains, when).
EXPLAINS: dict[str, tuple[frozenset[str], Condition]] = {
    "non_finite": (frozenset({"grad_norm_explosion", "kl_spike", "entropy_blowup", "large_policy_step",
                              "critic_explained_variance"}), _always),
    "reward_hacking": (frozenset({"length_blowup", "length_reward_correlation", "truncation_high",
                                  "truncation_rising", "kl_above_target", "reward_out_of_range",
                                  "entropy_collapse"}), _always),
    "reward_pinned": (frozenset({"zero_std", "entropy_collapse", "train_val_divergence"}), _always),
    "reward_stuck": (frozenset({"zero_std", "entropy_collapse", "train_val_divergence"}), _always),
    "tool_failures": (frozenset({"zero_std", "reward_stuck"}), _always),
    "train_inference_mismatch": (frozenset({"kl_spike", "grad_norm_explosion", "large_policy_step",
                                            "entropy_blowup", "kl_negative"}), _always),
    "truncation_high": (frozenset({"length_reward_correlation", "truncation_rising"}), _limit_not_reward),
    "truncation_rising": (frozenset({"length_reward_correlation"}), _limit_not_reward),
}


class Candidate(BaseModel):
    """One fault domain the findings point at, its score and the evidence behind it."""

    model_config = ConfigDict(extra="forbid")

    domain: FaultDomain
    rule: str = Field(description="the candidate's leading finding")
    severity: Severity
    score: int = Field(description="weight of its own findings plus the findings it explains (critical 3, warning 2)")
    evidence: list[str] = Field(default_factory=list)
    explains: list[str] = Field(default_factory=list,
                                description="rules of other domains accounted for as symptoms")


def _order(f: Finding) -> int:
    return RULE_ORDER.get(f.rule, len(RULE_ORDER))


def rank_causes(findings: list[Finding]) -> list[Candidate]:
    """Candidates best first; empty when only notes were found."""
    serious = sorted((f for f in findings if f.severity != "info"), key=lambda f: (f.rank, _order(f)))
    by_rule: dict[str, list[Finding]] = {}
    for f in serious:
        by_rule.setdefault(f.rule, []).append(f)
    owner: dict[str, str] = {}  # explained rule -> explaining rule
    for explainer in sorted(EXPLAINS, key=lambda r: RULE_ORDER.get(r, len(RULE_ORDER))):
        rules, holds = EXPLAINS[explainer]
        if explainer in by_rule and explainer not in owner and holds(by_rule):
            for rule in rules:
                if rule in by_rule and rule not in owner and rule != explainer:
                    owner[rule] = explainer
    groups: dict[str, list[Finding]] = {}
    explained: dict[str, list[Finding]] = {}
    for f in serious:
        if f.rule in owner:
            explained.setdefault(owner[f.rule], []).append(f)
        else:
            groups.setdefault(f.domain, []).append(f)
    candidates = []
    for own in groups.values():
        top = own[0]
        symptoms = [s for f in own for s in explained.get(f.rule, [])]
        # Symptoms explained by a symptom of this candidate follow it (truncation_high -> length/reward).
        symptoms += [s for f in symptoms for s in explained.get(f.rule, [])]
        evidence = [f"{f.rule} ({f.severity}): {f.message}" for f in own]
        evidence += [f"explains {s.rule} [{s.domain}]: {s.message}" for s in symptoms]
        worst = min([*own, *symptoms], key=lambda f: f.rank).severity
        candidates.append(Candidate(domain=top.domain, rule=top.rule, severity=worst,
                                    score=sum(WEIGHT[f.severity] for f in [*own, *symptoms]), evidence=evidence,
                                    explains=sorted({s.rule for s in symptoms})))
    return sorted(candidates, key=lambda c: (-WEIGHT[c.severity], -c.score, RULE_ORDER.get(c.rule, 99),
                                             FAULT_DOMAINS.index(c.domain)))
