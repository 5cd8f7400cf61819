"""Gate verdicts for `<task>/judge_win_rate`, for the engine's `extra_gates`.

The win rate is compared with 50 % (a judge that cannot tell the two apart). Fail closed: judge
errors above the policy's tolerance, a judge below its calibration floor, or a judge whose position
or length bias exceeds the policy's limit (unless `on_bias: warn`) make the gate `error`, which the
decision policy maps to block; a task without judged pairs is `nodata`. The bias figures travel in
every verdict's details (`judge_trust`), next to the win rate.
"""

from __future__ import annotations

from typing import Any

from rlgate.contract.gatekinds import BY_KIND, keeping
from rlgate.contract.metrics import JUDGE_WIN_RATE, MetricRef
from rlgate.contract.models import DecisionPolicy, GateConfig
from rlgate.engine.models import GateVerdict
from rlgate.judge.report import JudgeReport, TaskJudgeReport
from rlgate.judge.stats import wilson_interval
from rlgate.results.models import MetricKey, RunResult

METRIC = JUDGE_WIN_RATE
CHANCE = 0.5


def _p(value: float | None) -> str:
    return "n/a (no decisive pairs)" if value is None else f"{value:.3g}"


def _fail_closed(task: TaskJudgeReport) -> str | None:
    """Why this task's judge cannot be trusted, or None."""
    tolerated = float(task.policy.get("max_error_rate", 0.0))
    if task.errors and (task.error_rate or 0.0) > tolerated:
        example = f" (e.g. {task.error_examples[0]})" if task.error_examples else ""
        return (f"{task.errors} judge error(s), error rate {task.error_rate:.1%} > tolerated {tolerated:.1%}"
                f"{example}")
    cal = task.calibration
    if cal is not None and cal.below_floor and (task.policy.get("calibration") or {}).get(
            "on_below_floor", "error") == "error":
        return f"judge below its calibration floor: {cal.message}"
    if task.trust is not None and not task.trust.trusted and task.trust.on_bias == "error":
        return f"{task.trust.message}; its gates are not evidence (on_bias: error)"
    return None


def trust_details(task: TaskJudgeReport) -> dict[str, Any]:
    """The judge's bias figures beside its win rate, for the verdict's details (every report shows them)."""
    trust = task.trust
    if trust is None:
        return {}
    out: dict[str, Any] = {"trusted": trust.trusted, "on_bias": trust.on_bias, "message": trust.message}
    for name, check in (("position_flip_rate", trust.position), ("length_follow_rate", trust.length)):
        if check is not None:
            out[name] = check.rate
            out[f"max_{name}"] = check.limit
            out[f"{name}_n"] = check.n
            out[f"{name}_enforced"] = check.enforced
    return {"judge_trust": out}


def _verdict(kind: str, gate: Any, task: TaskJudgeReport | None, ref: str, alpha: float,
             policy: DecisionPolicy) -> GateVerdict:
    name = gate.name or gate.metric
    base: dict[str, Any] = {"name": name, "kind": kind, "metric": ref, "baseline": CHANCE, "higher_is_better": True,
                            "test": "exact sign test vs 50% (binomial); Wilson interval"}
    fail_key = BY_KIND[kind].fail_key

    def out(verdict: str, key: str, reason: str, **numbers: Any) -> GateVerdict:
        effect = "release" if key == "pass" else getattr(policy, key)
        return GateVerdict(verdict=verdict, outcome=key, effect=effect, reason=reason, **base, **numbers)

    if task is None:
        return out("nodata", "nodata", f"{ref}: the task was not judged (no judge policy or no results)")
    broken = _fail_closed(task)
    details: dict[str, Any] = {"decided_by": task.decided_by, "errors": task.errors, **trust_details(task)}
    wr = task.win_rate
    if broken:
        measured: dict[str, Any] = {}
        if wr is not None and wr.win_rate is not None and wr.n:  # shown beside the bias figures, not counted
            measured = {"candidate": wr.win_rate, "n": wr.n}
            broken += f" (measured win rate {wr.win_rate:.3f} over {wr.n}, not counted)"
        return out("error", "error", f"{ref}: {broken}", details=details, **measured)
    if wr is None or wr.win_rate is None or wr.n == 0:
        return out("nodata", "nodata", f"{ref}: no judged pairs", details=details)
    level = 1 - alpha
    ci = wilson_interval(wr.successes, wr.n, level)
    assert ci is not None
    value = wr.win_rate
    details.update({"wins": wr.wins, "losses": wr.losses, "ties": wr.ties, "tie_policy": wr.tie_policy,
                    "p_two_sided": wr.p_value, "ci_of": "win rate",
                    "position_flip_rate": task.position_bias.flip_rate if task.position_bias else None})
    numbers: dict[str, Any] = {"candidate": value, "delta": value - CHANCE, "ci": ci, "ci_level": level, "n": wr.n,
                               "details": details}
    trust = task.trust
    note = f"; WARNING: {trust.message} (on_bias: warn keeps the verdict)" if trust and not trust.trusted else ""
    summary = f"win rate {value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] over {wr.n} (W{wr.wins}/L{wr.losses}/T{wr.ties})"
    undecided = task.decided_by.get("undecided", 0)
    if undecided:  # the rule could not score them (no parseable answer, no score): not in the win rate
        summary += f"; {undecided} of {len(task.items)} documents undecided by the rule, not counted"
    if kind == "primary":
        numbers |= {"threshold": {"min_delta": gate.min_delta}, "p_value": wr.p_greater}
        if gate.require == "lower_bound":
            ok = ci[0] - CHANCE >= gate.min_delta
            why = f"lower bound {ci[0]:.3f} {'>=' if ok else '<'} {CHANCE + gate.min_delta:.3f}"
        else:
            ok = value - CHANCE >= gate.min_delta and (wr.p_greater or 1.0) < alpha
            why = f"p={_p(wr.p_greater)} vs alpha {alpha:g}, min_delta {gate.min_delta:g}"
        numbers["threshold"]["max_drop"] = gate.max_drop
        if not ok and CHANCE - value > gate.max_drop and (wr.p_less if wr.p_less is not None else 1.0) < alpha:
            fail_key = "primary_regression"  # the judge prefers the baseline, significantly
            why = (f"significant regression: the judge prefers the baseline (drop {CHANCE - value:.3f} > max_drop "
                   f"{gate.max_drop:g}, p={_p(wr.p_less)} < alpha {alpha:g}); {why}")
    elif kind == "regression":
        numbers |= {"threshold": {"max_drop": gate.max_drop}, "p_value": wr.p_less}
        dropped = CHANCE - value > gate.max_drop and (wr.p_less or 1.0) < alpha
        if gate.test == "non_inferiority":
            ok = ci[0] >= CHANCE - gate.max_drop
            why = f"lower bound {ci[0]:.3f} {'>=' if ok else '<'} {CHANCE - gate.max_drop:.3f}"
        elif gate.test == "significance":
            ok = not dropped
            why = f"drop {CHANCE - value:.3f} vs max_drop {gate.max_drop:g}, p={_p(wr.p_less)}"
        else:  # three_way: one-sided bound at alpha (the interval is two-sided at 1 - alpha)
            lower = wilson_interval(wr.successes, wr.n, 1 - 2 * alpha)
            assert lower is not None
            ok = lower[0] >= CHANCE - gate.max_drop
            why = (f"one-sided lower bound {lower[0]:.3f} {'>=' if ok else '<'} {CHANCE - gate.max_drop:.3f}; "
                   f"drop {CHANCE - value:.3f} vs max_drop {gate.max_drop:g}, p={_p(wr.p_less)}")
            if not ok and not dropped:
                return out("inconclusive", "regression_inconclusive",
                           f"{ref}: {summary}; inconclusive: neither non-inferiority nor a significant drop; {why}"
                           f"{note}",
                           **numbers)
    else:
        bounds = {k: getattr(gate, k) for k in ("min", "max", "max_relative_increase", "max_relative_decrease")
                  if getattr(gate, k, None) is not None}
        numbers |= {"threshold": bounds}
        rel = (value - CHANCE) / CHANCE
        ok = not ((bounds.get("min") is not None and value < bounds["min"])
                  or (bounds.get("max") is not None and value > bounds["max"])
                  or (bounds.get("max_relative_increase") is not None and rel > bounds["max_relative_increase"])
                  or (bounds.get("max_relative_decrease") is not None and -rel > bounds["max_relative_decrease"]))
        why = ", ".join(f"{k}={v:g}" for k, v in bounds.items())
    return out("pass" if ok else "fail", "pass" if ok else fail_key,
               f"{ref}: {summary}; {why}{note}", **numbers)


def judge_gate_verdicts(report: JudgeReport, gates: GateConfig, candidate: RunResult | None = None,
                        baseline: RunResult | None = None) -> list[GateVerdict]:
    """One verdict per contract gate whose metric is `<task>/judge_win_rate`. With the runs given, the
    contract's min_coverage applies as to every other gate: a run that answered too few of the task's
    documents (a killed run) makes the gate nodata, whatever the judge said of the documents it reached."""
    out: list[GateVerdict] = []
    for spec, gate in gates.listed():
        kind = spec.kind
        ref = MetricRef.parse(gate.metric)
        if ref.metric != METRIC:
            continue
        verdict = _verdict(kind, gate, report.tasks.get(ref.task), f"{ref.task}/{METRIC}", gates.alpha,
                           gates.decision)
        out.append(_with_coverage(verdict, gate, gates, candidate, baseline))
    return out


def _with_coverage(verdict: GateVerdict, gate: Any, gates: GateConfig, candidate: RunResult | None,
                   baseline: RunResult | None) -> GateVerdict:
    """The engine's coverage check on a judge verdict: nodata below min_coverage, else the counts beside it."""
    from rlgate.engine.context import GateContext, NoData
    from rlgate.engine.gaps import coverage_gaps, judged, min_coverage, shown

    if candidate is None or verdict.verdict == "nodata":
        return verdict
    key = MetricKey.from_ref(gate.ref, gates.default_filter(gate.ref.task))
    try:
        # both runs' answers are judged, so both runs' coverage counts (a hard gate elsewhere checks the candidate)
        found = judged(coverage_gaps(GateContext(gates, baseline, candidate, seed=0), key, ("baseline", "candidate")),
                       key, min_coverage(gates, key.task))
    except NoData as exc:
        return verdict.model_copy(update={
            "verdict": "nodata", "outcome": "nodata", "effect": gates.decision.nodata,
            "reason": f"{verdict.metric}: {exc}; the judge's verdict on the documents it reached is not counted "
                      f"({verdict.reason})"})
    if not found:
        return verdict
    evidence, note = shown(found, computed=True, over="judged")
    return verdict.model_copy(update={"details": {**verdict.details, **evidence}, "reason": verdict.reason + note})


def without_judge_gates(gates: GateConfig) -> GateConfig:
    """The gate settings minus the judge-metric gates, which `judge_gate_verdicts` decides instead."""
    return gates.model_copy(update=keeping(gates, lambda _, gate: MetricRef.parse(gate.metric).metric != METRIC))
