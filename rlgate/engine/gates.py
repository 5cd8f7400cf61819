"""Classify each gate: pass / fail / nodata / error, with its numbers and a one-line reason.

Semantics (the issue's defaults, each overridable in the contract):
- hard: the candidate's value (point estimate) must respect `max` / `min`.
- primary: the improvement must be >= `min_delta` and significant (one-sided paired test,
  p < alpha); `require: lower_bound` instead needs the interval's lower bound >= `min_delta`.
  A primary that fails because the metric significantly *dropped* (the regression test below,
  against `primary.max_drop`, default 0) is `primary_regression` (block by default), not a
  `primary_fail` (a missed improvement, research_only by default).
- regression (`test: three_way`, the default): passes only when non-inferiority is shown (the
  one-sided lower bound of the change at its Holm step level, i.e. Holm across the regression
  family, is >= -`max_drop`); fails when the drop exceeds `max_drop` and is significant
  (Holm-adjusted one-sided p < alpha); otherwise `inconclusive` (outcome `regression_inconclusive`,
  research_only by default) with the way it leans and roughly how many more paired samples would
  settle it. `test: significance` is the fail rule alone (else pass); `test: non_inferiority`
  fails unless the interval's lower bound is >= -`max_drop` (its exact form: rlgate.engine.bounds).
- diagnostic: relative increase / decrease against the baseline, or absolute bounds, on point
  estimates.
Intervals are two-sided at 1 - alpha. "Improvement" follows the metric's direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlgate.contract.models import (
    AnyGate,
    DecisionPolicy,
    DiagnosticGate,
    GateConfig,
    HardGate,
    PrimaryGate,
    RegressionGate,
)
from rlgate.engine import fmt
from rlgate.engine.bounds import margin_note, oriented_lower
from rlgate.engine.compare import Comparison
from rlgate.engine.context import GateContext, NoData
from rlgate.engine.models import GateKind, GateVerdict, Verdict
from rlgate.results.models import MetricKey
from rlgate.stats.distributions import normal_quantile
from rlgate.stats.intervals import wilson_interval
from rlgate.stats.noninferiority import (
    binary_lower_bound,
    binary_noninferiority_p,
    continuous_noninferiority,
    normal_noninferiority,
)
from rlgate.stats.power import mde_one_sample, mde_paired, samples_to_settle


def make_verdict(name: str, kind: GateKind, metric: str, verdict: Verdict, policy: DecisionPolicy,
                 reason: str, *, outcome: str | None = None, **fields: Any) -> GateVerdict:
    """A GateVerdict with its policy outcome and effect filled in.

    A failing verdict's outcome is `<kind>_fail` unless `outcome` names another policy key
    (e.g. `primary_regression`).
    """
    if verdict == "pass":
        outcome, effect = "pass", "release"
    else:
        if verdict in ("nodata", "error") or outcome is None:
            outcome = verdict if verdict in ("nodata", "error") else f"{kind}_fail"
        effect = getattr(policy, outcome)
    return GateVerdict(name=name, kind=kind, metric=metric, verdict=verdict, outcome=outcome, effect=effect,
                       reason=reason, **fields)


def key_of(gate: AnyGate, config: GateConfig) -> MetricKey:
    """The gate's metric key; a reference without a filter reads its harness's default (from the vocabulary)."""
    ref = gate.ref
    return MetricKey.from_ref(ref, config.default_filter(ref.task))


_THRESHOLD_FIELDS = ("min_delta", "max_drop", "max", "min")


def check_range(gate: AnyGate, ctx: GateContext) -> None:
    """A threshold outside the range the harness declared for the metric makes the gate an error."""
    key = key_of(gate, ctx.config)
    declared = ctx.candidate.metric_range(key.task, key.metric)
    if declared is None:
        return
    for field in _THRESHOLD_FIELDS:
        value = getattr(gate, field, None)
        if value is None:
            continue
        bounds = field in ("max", "min")
        if (bounds and not declared.low <= value <= declared.high) or (
                not bounds and abs(value) > declared.high - declared.low):
            raise ValueError(f"{field}={value:g} does not fit {key.metric}'s range [{declared.low:g}, "
                             f"{declared.high:g}] declared by the harness; declare metric_ranges in the suite")


def _oriented(comp: Comparison, hib: bool) -> tuple[float, tuple[float, float], float, float]:
    """(improvement, its interval, p for improvement, p for a drop) in the metric's direction."""
    if hib:
        return comp.delta, comp.ci, comp.p_greater, comp.p_less
    return -comp.delta, (-comp.ci[1], -comp.ci[0]), comp.p_less, comp.p_greater


def _mde(comp: Comparison, alpha: float, power: float) -> float:
    return mde_paired(comp.n, alpha, power, binary=comp.binary, discordant_rate=comp.discordant_rate,
                      sd_difference=comp.sd_difference)


def _numbers(comp: Comparison, key: MetricKey, ctx: GateContext) -> dict[str, Any]:
    details = dict(comp.details)
    details["paired"] = comp.paired
    details["p_two_sided"] = comp.p_two_sided
    return {"baseline": comp.baseline, "candidate": comp.candidate, "delta": comp.delta, "ci": comp.ci,
            "ci_level": comp.ci_level, "n": comp.n, "n_unpaired": ctx.unpaired(key), "test": comp.test,
            "details": details}


def significant_drop(improvement: float, p_drop: float, limit: float, alpha: float,
                     metric: str | fmt.Unit) -> tuple[bool, str]:
    """The regression test: a drop larger than `limit` whose one-sided p (for a drop) is < alpha.

    Shared by regression gates (with their Holm-adjusted p) and the primary gate's
    `primary_regression` check, so both call the same change a regression.
    """
    drop = -improvement
    big, sig = drop > limit, p_drop < alpha
    size = (f"drop {fmt.delta(drop, metric, [limit]).lstrip('+')} {'>' if big else '<='} max_drop "
            f"{fmt.delta(limit, metric, threshold=True).lstrip('+')}"
            if drop > 0 else f"no drop ({fmt.delta(improvement, metric)})")
    return big and sig, f"{size}, one-sided {fmt.p(p_drop, alpha)} {'<' if sig else '>='} alpha {alpha:g}"


def evaluate_primary(gate: PrimaryGate, ctx: GateContext, name: str) -> GateVerdict:
    cfg = ctx.config
    key = key_of(gate, cfg)
    hib = ctx.direction(gate.ref, gate.higher_is_better)
    comp = ctx.compare(key)
    improvement, imp_ci, p_imp, p_drop = _oriented(comp, hib)
    m = gate.min_delta
    if gate.require == "lower_bound":
        bound = oriented_lower(comp, hib)  # no Monte-Carlo error: the verdict never depends on the seed
        ok = bound >= m
        mde = _mde(comp, cfg.alpha / 2, cfg.power)
        why = (f"improvement {fmt.delta(improvement, ctx.unit(key))}, "
               f"lower bound {fmt.delta(bound, ctx.unit(key), [m])} "
               f"{'>=' if ok else '<'} min_delta {fmt.delta(m, ctx.unit(key), threshold=True)}"
               + margin_note(imp_ci[0], bound, m))
    else:
        big, sig = improvement >= m, p_imp < cfg.alpha
        ok = big and sig
        mde = _mde(comp, cfg.alpha, cfg.power)
        parts = [(big, f"improvement {fmt.delta(improvement, ctx.unit(key), [m])} {'>=' if big else '<'} min_delta "
                       f"{fmt.delta(m, ctx.unit(key), threshold=True)}"),
                 (sig, f"one-sided {fmt.p(p_imp, cfg.alpha)} {'<' if sig else '>='} alpha {cfg.alpha:g}")]
        # the clause that failed leads (a reviewer reads why first); the ones that held follow
        why = ", ".join(text for _, text in sorted(parts, key=lambda part: part[0]))
    verdict: Verdict = "pass" if ok else "fail"
    outcome = None
    if not ok:
        regressed, drop_why = significant_drop(improvement, p_drop, gate.max_drop, cfg.alpha, ctx.unit(key))
        if regressed:
            outcome = "primary_regression"
            why = f"significant regression of the primary metric: {drop_why}; {why}"
    numbers = _numbers(comp, key, ctx)
    numbers["details"].update(p_improvement=p_imp, p_drop=p_drop)
    # p_value is the p of the test that decided: the drop's for a primary_regression
    return make_verdict(name, "primary", str(key), verdict, cfg.decision, f"{verdict}: {why}", outcome=outcome,
                        p_value=p_drop if outcome else p_imp, mde=mde,
                        threshold={"min_delta": m, "max_drop": gate.max_drop}, higher_is_better=hib, **numbers)


@dataclass
class PreparedRegression:
    gate: RegressionGate
    name: str
    key: MetricKey
    hib: bool
    comp: Comparison
    p_drop: float
    p_noninferior: float


def _oriented_counts(comp: Comparison, hib: bool) -> tuple[int, int]:
    """(pairs where only the candidate was better, only the baseline) in the metric's direction."""
    up = int(comp.details.get("candidate_only_right", 0))
    down = int(comp.details.get("baseline_only_right", 0))
    return (up, down) if hib else (down, up)


def noninferiority_p(comp: Comparison, hib: bool, margin: float) -> float:
    """One-sided p that the oriented change is above -margin.

    Binary: Tango's score test; continuous: shifted paired t; unpaired: normal on the stderrs.
    """
    improvement = comp.delta if hib else -comp.delta
    if comp.binary and comp.paired:
        up, down = _oriented_counts(comp, hib)
        return float(binary_noninferiority_p(up, down, comp.n, margin))
    if comp.paired:
        return float(continuous_noninferiority(improvement, comp.sd_difference, comp.n, margin, 0.5)[0])
    return normal_noninferiority(improvement, float(comp.details.get("standard_error", 0.0)), margin, 0.5)[0]


def noninferiority_bound(comp: Comparison, hib: bool, level: float) -> float:
    """The one-sided 1 - level lower confidence bound of the oriented change (the same three tests inverted)."""
    improvement = comp.delta if hib else -comp.delta
    if comp.binary and comp.paired:
        up, down = _oriented_counts(comp, hib)
        return float(binary_lower_bound(up, down, comp.n, level))
    if comp.paired:
        return float(continuous_noninferiority(improvement, comp.sd_difference, comp.n, 0.0, level)[1])
    return normal_noninferiority(improvement, float(comp.details.get("standard_error", 0.0)), 0.0, level)[1]


def prepare_regression(gate: RegressionGate, ctx: GateContext, name: str) -> PreparedRegression:
    key = key_of(gate, ctx.config)
    hib = ctx.direction(gate.ref, gate.higher_is_better)
    comp = ctx.compare(key)
    _, _, _, p_drop = _oriented(comp, hib)
    p_ni = noninferiority_p(comp, hib, gate.max_drop)
    return PreparedRegression(gate, name, key, hib, comp, p_drop, p_ni)


def finish_regression(prep: PreparedRegression, p_adjusted: float, family: int, ctx: GateContext,
                      ni_level: float | None = None, p_ni_adjusted: float | None = None) -> GateVerdict:
    """The regression verdict once the Holm-adjusted p (and, for three_way, the Holm level of the
    non-inferiority test) across the family is known."""
    gate, key, comp, cfg = prep.gate, prep.key, prep.comp, ctx.config
    improvement, imp_ci, _, _ = _oriented(comp, prep.hib)
    limit, unit = gate.max_drop, ctx.unit(key)
    extra: dict[str, Any] = {}
    outcome: str | None = None
    verdict: Verdict
    if gate.test == "non_inferiority":
        bound = oriented_lower(comp, prep.hib)  # no Monte-Carlo error: the verdict never depends on the seed
        ok = bound >= -limit
        mde = _mde(comp, cfg.alpha / 2, cfg.power)
        why = (f"change {fmt.delta(improvement, unit)}, lower bound {fmt.delta(bound, unit, [-limit])} "
               f"{'>=' if ok else '<'} -max_drop {fmt.delta(-limit, unit, threshold=True)}"
               + margin_note(imp_ci[0], bound, -limit))
        verdict = "pass" if ok else "fail"
    elif gate.test == "significance":
        regressed, why = significant_drop(improvement, p_adjusted, limit, cfg.alpha, unit)
        mde = _mde(comp, cfg.alpha / max(family, 1), cfg.power)
        why = why.replace("one-sided", "Holm-adjusted one-sided", 1)
        verdict = "fail" if regressed else "pass"
    else:
        level = ni_level if ni_level is not None and ni_level == ni_level else cfg.alpha / max(family, 1)
        bound = noninferiority_bound(comp, prep.hib, level)
        shown = bound >= -limit
        regressed, drop_why = significant_drop(improvement, p_adjusted, limit, cfg.alpha, unit)
        drop_why = drop_why.replace("one-sided", "Holm-adjusted one-sided", 1)
        mde = _mde(comp, level, cfg.power)
        ni_why = (f"Holm-adjusted lower bound {fmt.delta(bound, unit, [-limit])} {'>=' if shown else '<'} -max_drop "
                  f"{fmt.delta(-limit, unit, threshold=True)} (one-sided level {level:.3g})")
        extra = {"noninferiority_p": prep.p_noninferior, "noninferiority_p_adjusted": p_ni_adjusted,
                 "lower_bound_holm": bound, "lower_bound_level": 1 - level}
        if shown:
            verdict, why = "pass", f"non-inferior: {ni_why}"
        elif regressed:
            verdict, why = "fail", f"regression: {drop_why}; {ni_why}"
        else:
            leaning, more = samples_to_settle(comp.n, improvement, limit, level, cfg.power, binary=comp.binary,
                                              discordant_rate=comp.discordant_rate,
                                              sd_difference=comp.sd_difference)
            towards = ("non-inferiority" if leaning == "non_inferior"
                       else f"a drop beyond max_drop {fmt.delta(limit, unit, threshold=True).lstrip('+')}")
            settle = (f"about {more} more paired samples would settle it (projected at power {cfg.power:g} "
                      f"from the observed {'discordance' if comp.binary else 'variance'})"
                      if more is not None else "the change sits on the margin: no suite size is likely to settle it")
            verdict, outcome = "inconclusive", "regression_inconclusive"
            why = f"leaning towards {towards}: neither shown; {ni_why}; {drop_why}; {settle}"
            extra |= {"leaning": leaning, "more_samples": more}
    fields = _numbers(comp, key, ctx)
    fields["details"].update(extra, regression_test=gate.test)
    return make_verdict(prep.name, "regression", str(key), verdict, cfg.decision, f"{verdict}: {why}",
                        outcome=outcome, p_value=prep.p_drop, p_adjusted=p_adjusted, mde=mde,
                        threshold={"max_drop": limit}, higher_is_better=prep.hib, **fields)


def _relative(base: float, cand: float) -> float:
    if base == 0:
        return 0.0 if cand == 0 else math.copysign(math.inf, cand)
    return (cand - base) / abs(base)


def _relative_text(rel: float, limit: float) -> str:
    """A relative change in percent, apart from the limit it is compared with (see `fmt.apart`)."""
    return fmt.apart(rel, [(limit, f"{limit * 100:.0f}%")],
                     (f"{rel * 100:+.{d}f}%" for d in range(1, fmt.MOST_DIGITS + 1)))


def evaluate_diagnostic(gate: DiagnosticGate, ctx: GateContext, name: str) -> GateVerdict:
    cfg = ctx.config
    key = key_of(gate, cfg)
    hib = ctx.direction(gate.ref, gate.higher_is_better)
    problems: list[str] = []
    fields: dict[str, Any] = {"higher_is_better": hib}
    threshold = {k: v for k, v in (("max_relative_increase", gate.max_relative_increase),
                                   ("max_relative_decrease", gate.max_relative_decrease),
                                   ("max", gate.max), ("min", gate.min)) if v is not None}
    notes: list[str] = []
    if gate.max_relative_increase is not None or gate.max_relative_decrease is not None:
        comp = ctx.compare(key)
        fields.update(_numbers(comp, key, ctx))
        fields["p_value"] = comp.p_two_sided
        fields["mde"] = _mde(comp, cfg.alpha, cfg.power)
        rel = _relative(comp.baseline, comp.candidate)
        fields["details"]["relative_change"] = rel
        notes.append(f"{fmt.value(comp.baseline, ctx.unit(key))} -> {fmt.value(comp.candidate, ctx.unit(key))} "
                     f"({rel * 100:+.1f}%)")
        if gate.max_relative_increase is not None and rel > gate.max_relative_increase:
            problems.append(f"relative increase {_relative_text(rel, gate.max_relative_increase)} > "
                            f"{gate.max_relative_increase * 100:.0f}%")
        if gate.max_relative_decrease is not None and -rel > gate.max_relative_decrease:
            problems.append(f"relative decrease {_relative_text(-rel, gate.max_relative_decrease).lstrip('+')} > "
                            f"{gate.max_relative_decrease * 100:.0f}%")
    if gate.max is not None or gate.min is not None:
        value = ctx.values("candidate", key).aggregate
        assert value is not None
        fields.setdefault("candidate", value)
        unit = ctx.unit(key)
        if gate.max is not None and value > gate.max:
            problems.append(f"{fmt.value(value, unit, [gate.max])} > max {fmt.value(gate.max, unit, threshold=True)}")
        if gate.min is not None and value < gate.min:
            problems.append(f"{fmt.value(value, unit, [gate.min])} < min {fmt.value(gate.min, unit, threshold=True)}")
        if not notes:
            notes.append(fmt.value(value, ctx.unit(key), fmt.value_limits(threshold)))
            fields.update(_one_sample(ctx, key))
    verdict: Verdict = "fail" if problems else "pass"
    why = "; ".join(problems) if problems else "within bounds"
    return make_verdict(name, "diagnostic", str(key), verdict, cfg.decision,
                        f"{verdict}: {', '.join(notes)}: {why}", threshold=threshold, **fields)


def _one_sample(ctx: GateContext, key: MetricKey) -> dict[str, Any]:
    """Interval and MDE of the candidate's own value (hard gates, absolute diagnostics)."""
    found = ctx.values("candidate", key)
    cfg = ctx.config
    value = found.aggregate or 0.0
    out: dict[str, Any] = {"n": found.n, "ci_level": ctx.level}
    if found.values is not None:
        per_sample, epochs = ctx.sample_values("candidate", key)  # epochs of a sample are one unit
        vals = per_sample[~np.isnan(per_sample)]
        out["n"] = int(vals.size)
        if epochs > 1:
            out["details"] = {"units": {"samples": int(vals.size), "records": found.n,
                                        "epochs_per_sample": str(epochs)}}
        binary = bool(((vals == 0) | (vals == 1)).all())
        sd = float(vals.std(ddof=1)) if vals.size > 1 else 0.0
        if binary:
            out["ci"] = wilson_interval(float(vals.sum()), int(vals.size), ctx.level)
            out["test"] = "point estimate; Wilson interval"
        else:
            half = normal_quantile(0.5 + ctx.level / 2) * sd / math.sqrt(max(vals.size, 1))
            out["ci"] = (value - half, value + half)
            out["test"] = "point estimate; normal interval"
        out["mde"] = mde_one_sample(int(vals.size), cfg.alpha, cfg.power, binary=binary, value=value, sd=sd)
    elif not cfg.allow_unpaired:
        raise NoData(f"{key.metric}/{key.filter} of {key.task} has no per-sample values in the candidate run: "
                     f"{cfg.samples_hint(key.task)} (or set allow_unpaired: true in the contract to judge the "
                     "reported aggregate; the decision is then at most research_only)")
    elif found.stderr is not None:
        half = normal_quantile(0.5 + ctx.level / 2) * found.stderr
        out["ci"] = (value - half, value + half)
        out["test"] = "point estimate (reported aggregate); normal interval from its stderr"
        out["mde"] = (normal_quantile(1 - cfg.alpha) + normal_quantile(cfg.power)) * found.stderr
    else:
        out["test"] = "point estimate (reported aggregate)"
    return out


def evaluate_hard(gate: HardGate, ctx: GateContext, name: str) -> GateVerdict:
    cfg = ctx.config
    key = key_of(gate, cfg)
    value = ctx.values("candidate", key).aggregate
    assert value is not None
    problems = []
    if gate.max is not None and value > gate.max:
        problems.append(f"> max {fmt.value(gate.max, ctx.unit(key), threshold=True)}")
    if gate.min is not None and value < gate.min:
        problems.append(f"< min {fmt.value(gate.min, ctx.unit(key), threshold=True)}")
    bounds = " and ".join(f"{k} {fmt.value(v, ctx.unit(key), threshold=True)}"
                          for k, v in (("max", gate.max), ("min", gate.min)) if v is not None)
    verdict: Verdict = "fail" if problems else "pass"
    threshold = {k: v for k, v in (("max", gate.max), ("min", gate.min)) if v is not None}
    shown = fmt.value(value, ctx.unit(key), fmt.value_limits(threshold))
    why = f"candidate {shown} " + (" and ".join(problems) if problems else f"within {bounds}")
    return make_verdict(name, "hard", str(key), verdict, cfg.decision, f"{verdict}: {why}", candidate=value,
                        threshold=threshold, higher_is_better=ctx.direction(gate.ref, gate.higher_is_better),
                        **_one_sample(ctx, key))
