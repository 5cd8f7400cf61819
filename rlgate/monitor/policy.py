"""Monitor thresholds: typed defaults, the policy file format, and per-contract overrides.

The defaults live here as pydantic defaults (so the monitor works from an installed wheel) and are
written out, with their sources, in `gates/monitor_default.yaml`; a test keeps the two identical.
A contract's `monitor.policy` names another file (a partial one is fine: unset values inherit), and
`monitor.overrides` changes single thresholds: `{rule: {key: value}}`. Unknown rules or keys are
errors with a close-match suggestion, never silently ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate.monitor.findings import Severity

MONITOR_POLICY_VERSION = 1


class _Strict(BaseModel):
    """Unknown keys, nan and inf are errors (a nan threshold compares false both ways: its rule never fires)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, allow_inf_nan=False)


class WindowConfig(_Strict):
    fraction: float = Field(0.1, gt=0, le=0.5, description="first/last window as a fraction of the points")
    min_points: int = Field(5, ge=1)
    bins: int = Field(200, ge=10, description="bins for rank correlations (bin medians)")
    min_z: float = Field(3.0, ge=0, description="robust z a change must reach to count as a trend")
    min_rho: float = Field(0.3, ge=0, le=1, description="Spearman rho a change must reach to count as a trend")


class RuleConfig(_Strict):
    enabled: bool = True
    severity: Severity = "warning"


class RewardHacking(RuleConfig):
    severity: Severity = "critical"
    min_reward_rise: float = 0.02
    min_heldout_drop: float = 0.01
    min_peak_drop: float = 0.03
    max_heldout_gain: float = Field(0.1, ge=0, description="held-out gain below this share of the reward's rise: "
                                    "the reward's gains did not transfer")
    min_proxy_gap: float = Field(0.3, ge=0, description="reward ending this far above a held-out score that did "
                                 "not improve: the reward is being gamed (proxy vs true reward)")
    min_relative_drop: float = Field(0.1, gt=0, le=1, description="a held-out score that ends this share of its own "
                                     "start below it counts as a drop however small its values (0.045 -> 0.038)")
    min_drop_z: float = Field(3.0, gt=0, description="... when that fall is this many times its own noise (the "
                              "scatter of its step-to-step changes), on at least 5 evaluations")
    verifiable: Literal["auto", "yes", "no"] = "auto"


class TrainValDivergence(RewardHacking):
    severity: Severity = "warning"


class RewardRange(RuleConfig):
    severity: Severity = "critical"
    min: float | None = None
    max: float | None = None
    tolerance: float = 1e-6


class ZeroStd(RuleConfig):
    max_frac: float = 0.5
    near_edge: float = 0.05


class KlSpike(RuleConfig):
    factor: float = 10.0
    min_value: float = 0.05
    min_count: int = 3
    block: int = 20


class KlNegative(RuleConfig):
    severity: Severity = "warning"
    tolerance: float = 0.001
    max_frac: float = 0.1


class KlTarget(RuleConfig):
    severity: Severity = "info"
    target: float = 0.1
    blowup_factor: float = 5.0


class PolicyStep(RuleConfig):
    max_kl_step: float = 0.015
    max_clipfrac: float = 0.2
    max_frac: float = 0.2


class EntropyCollapse(RuleConfig):
    min_value: float = 0.03
    max_ratio: float = 0.1
    note_ratio: float = 0.2


class EntropyBlowup(RuleConfig):
    max_ratio: float = 3.0


class LengthBlowup(RuleConfig):
    max_ratio: float = 2.0


class LengthRewardCorrelation(RuleConfig):
    min_rho: float = 0.8
    min_growth: float = 1.5


class TruncationHigh(RuleConfig):
    max: float = 0.1


class TruncationRising(RuleConfig):
    min_rise: float = 0.05


class Mismatch(RuleConfig):
    max: float = 0.05
    max_ratio: float = 3.0


class GradNorm(RuleConfig):
    factor: float = 10.0
    note_factor: float = 20.0
    block: int = 20


class NonFinite(RuleConfig):
    severity: Severity = "critical"


class RewardStuck(RuleConfig):
    epsilon: float = 1e-6
    min_run: int = 20


class RewardPinned(RuleConfig):
    epsilon: float = 1e-9
    min_run: int = 10


class ToolFailures(RuleConfig):
    max: float = 0.05
    max_single: float = 0.5


class CriticEV(RuleConfig):
    min: float = 0.0


class PrimaryBelowBest(RuleConfig):
    max_drop: float = 0.01
    consecutive: int = 2


class SafetyWorse(RuleConfig):
    severity: Severity = "critical"
    tolerance: float = 0.0


class RewardUpPrivateDown(RuleConfig):
    severity: Severity = "critical"
    min_private_drop: float = 0.0


class CostOverBudget(RuleConfig):
    max_relative_increase: float = 0.30
    tokens: float | None = Field(None, description="token budget per sample; default: the run's first checkpoint")
    seconds: float | None = Field(None, description="time budget; default: the run's first checkpoint")
    tokens_metric: str = "cost/tokens"
    seconds_metric: str = "cost/seconds"


class HistoryRules(_Strict):
    primary_below_best: PrimaryBelowBest = Field(default_factory=PrimaryBelowBest)
    safety_worse: SafetyWorse = Field(default_factory=SafetyWorse)
    reward_up_private_down: RewardUpPrivateDown = Field(default_factory=RewardUpPrivateDown)
    cost_over_budget: CostOverBudget = Field(default_factory=CostOverBudget)


class Rules(_Strict):
    reward_hacking: RewardHacking = Field(default_factory=RewardHacking)
    train_val_divergence: TrainValDivergence = Field(default_factory=TrainValDivergence)
    reward_out_of_range: RewardRange = Field(default_factory=RewardRange)
    zero_std: ZeroStd = Field(default_factory=ZeroStd)
    kl_spike: KlSpike = Field(default_factory=KlSpike)
    kl_negative: KlNegative = Field(default_factory=KlNegative)
    kl_above_target: KlTarget = Field(default_factory=KlTarget)
    large_policy_step: PolicyStep = Field(default_factory=PolicyStep)
    entropy_collapse: EntropyCollapse = Field(default_factory=EntropyCollapse)
    entropy_blowup: EntropyBlowup = Field(default_factory=EntropyBlowup)
    length_blowup: LengthBlowup = Field(default_factory=LengthBlowup)
    length_reward_correlation: LengthRewardCorrelation = Field(default_factory=LengthRewardCorrelation)
    truncation_high: TruncationHigh = Field(default_factory=TruncationHigh)
    truncation_rising: TruncationRising = Field(default_factory=TruncationRising)
    train_inference_mismatch: Mismatch = Field(default_factory=Mismatch)
    grad_norm_explosion: GradNorm = Field(default_factory=GradNorm)
    non_finite: NonFinite = Field(default_factory=NonFinite)
    reward_stuck: RewardStuck = Field(default_factory=RewardStuck)
    reward_pinned: RewardPinned = Field(default_factory=RewardPinned)
    tool_failures: ToolFailures = Field(default_factory=ToolFailures)
    critic_explained_variance: CriticEV = Field(default_factory=CriticEV)


class MonitorPolicy(_Strict):
    """Every monitor threshold; `gates/monitor_default.yaml` spells out the defaults with sources."""

    schema_version: Literal[1] = 1
    name: str = "monitor_default"
    description: str = ""
    window: WindowConfig = Field(default_factory=WindowConfig)
    rules: Rules = Field(default_factory=Rules)
    history: HistoryRules = Field(default_factory=HistoryRules)

    def rule(self, name: str) -> RuleConfig:
        found = getattr(self.rules, name, None) or getattr(self.history, name, None)
        if not isinstance(found, RuleConfig):
            raise KeyError(name)
        return found


RULE_NAMES = tuple(Rules.model_fields)
HISTORY_RULE_NAMES = tuple(HistoryRules.model_fields)


def _merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in layer.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_policy_file(path: Path) -> MonitorPolicy:
    """A monitor policy file laid over the defaults; errors name file, line and column."""
    from rlgate.contract.kinds import check_kind
    from rlgate.contract.yamlpos import load_yaml, validation_to_input_error

    doc = load_yaml(path)
    check_kind(doc, "monitor policy")
    if not isinstance(doc.data, dict):
        raise InputError("a monitor policy must be a mapping", file=path, line=1, column=1,
                         fix="start from gates/monitor_default.yaml")
    try:
        return MonitorPolicy.model_validate(_merge(MonitorPolicy().model_dump(), doc.data))
    except ValidationError as exc:
        raise validation_to_input_error(exc, doc, MonitorPolicy) from None


def apply_overrides(policy: MonitorPolicy, overrides: dict[str, dict[str, Any]], *,
                    origin: str | Path | None = None) -> MonitorPolicy:
    """`{rule: {key: value}}` from a contract's `monitor.overrides`, checked key by key."""
    from rlgate.contract.yamlpos import suggest

    data = policy.model_dump()
    for rule, values in overrides.items():
        section = "rules" if rule in RULE_NAMES else "history" if rule in HISTORY_RULE_NAMES else None
        if section is None:
            close = suggest(rule, [*RULE_NAMES, *HISTORY_RULE_NAMES])
            raise InputError(f"unknown monitor rule '{rule}'", file=origin, field=f"monitor.overrides.{rule}",
                             fix=f"did you mean '{close}'?" if close else f"rules: {', '.join(RULE_NAMES)}")
        if not isinstance(values, dict):
            raise InputError("an override is a mapping of threshold names to values", file=origin,
                             field=f"monitor.overrides.{rule}", fix=f"e.g. {rule}: {{enabled: false}}")
        allowed = list(data[section][rule])
        for key in values:
            if key not in allowed:
                close = suggest(key, allowed)
                raise InputError(f"rule '{rule}' has no threshold '{key}'", file=origin,
                                 field=f"monitor.overrides.{rule}.{key}",
                                 fix=f"did you mean '{close}'?" if close else f"valid keys: {', '.join(allowed)}")
        data[section][rule] = {**data[section][rule], **values}
    try:
        return MonitorPolicy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"][1:])
        fix = "write a finite number" if first["type"] == "finite_number" else None
        raise InputError(first["msg"].removeprefix("Value error, ") + f"; got {first.get('input')!r}", file=origin,
                         field=f"monitor.overrides.{where}", fix=fix) from None


def default_policy_path() -> Path | None:
    """`gates/monitor_default.yaml` of a source checkout, when there is one."""
    candidate = Path(__file__).resolve().parents[2] / "gates" / "monitor_default.yaml"
    return candidate if candidate.is_file() else None
