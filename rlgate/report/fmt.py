"""Number formatting shared by every renderer, so HTML, Markdown and JUnit say the same thing."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from datetime import datetime, timezone

from rlgate.contract.metrics import MetricRef, is_bounded
from rlgate.engine import fmt as engine_fmt
from rlgate.engine.models import GateVerdict

DECISION_LABEL = {"release": "RELEASE", "research_only": "RESEARCH ONLY", "block": "BLOCK"}
VERDICT_LABEL = {"pass": "pass", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "nodata": "NO DATA", "error": "ERROR"}


def gate_bounded(gate: GateVerdict) -> bool:
    """Whether a gate's metric is a fraction (shown in percent and deltas in points)."""
    if gate.fraction is not None:
        return gate.fraction
    try:
        return is_bounded(MetricRef.parse(gate.metric).metric)
    except ValueError:
        return False


def _points(x: float, sign: str = "", limits: list[tuple[float, str]] | None = None, threshold: bool = False) -> str:
    """`x` (percent or points) to one decimal, or to as many more (up to 4) as keep a nonzero figure from
    reading as 0 or 100: a 0.04-point drop is "-0.04", one failure in 100,000 "0.001", never "0.0".
    `limits` (threshold in the same unit, its printed text) it is compared with add decimals where it would
    read as one of them (see `engine.fmt.apart`); a `threshold` gets those that print it as it is."""
    usual = f"{x:{sign}.1f}"  # 0 or 100 to four decimals (float noise included): one decimal, as ever
    for digits in range(1, 5):
        text = f"{x:{sign}.{digits}f}"
        if abs(float(text)) not in (0.0, 100.0):
            usual = text
            break
    if not limits and not threshold:
        return usual
    start = len(usual.partition(".")[2]) + 1
    finer = (f"{x:{sign}.{d}f}" for d in range(start, engine_fmt.MOST_DIGITS + 1))
    if threshold:
        return engine_fmt.exact(x, itertools.chain([usual], finer))
    return engine_fmt.apart(x, limits or [], itertools.chain([usual], finer))


def _general(usual: str, x: float, spec: str, limits: list[tuple[float, str]], threshold: bool = False) -> str:
    """A non-fraction number as usual (4 significant digits), or with up to 6 more where it would read as a
    limit (or, for a `threshold`, as it is not): `spec` is the format with `{k}` for the digits, e.g. "+,.{k}g"."""
    if not limits and not threshold:
        return usual
    finer = (f"{x:{spec.format(k=k)}}" for k in range(5, 5 + engine_fmt.MOST_DIGITS))
    if threshold:
        return engine_fmt.exact(x, itertools.chain([usual], finer))
    return engine_fmt.apart(x, limits, itertools.chain([usual], finer))


def value(x: float | None, bounded: bool, limits: Iterable[float] = (), *, threshold: bool = False) -> str:
    """A metric value: fractions in percent, other numbers with 4 significant digits; `limits` are the
    thresholds it is compared with (a hard gate's max/min), which it never reads as; a `threshold` itself
    printed as it is (up to 6 decimals: max 0.0178 is "1.78%", not "1.8%")."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    marks = [(v, value(v, bounded, threshold=True)) for v in limits]
    if bounded:
        return f"{_points(100 * x, limits=[(100 * v, t) for v, t in marks], threshold=threshold)}%"
    usual = f"{x:,.4g}" if abs(x) < 1e6 else f"{x:,.0f}"
    return _general(usual, x, ",.{k}g", marks, threshold)


def delta(x: float | None, bounded: bool, limits: Iterable[float] = (), *, threshold: bool = False) -> str:
    """A signed difference: fractions in percentage points; `limits` (min_delta, -max_drop) and `threshold`
    as in `value`."""
    if x is None or not math.isfinite(x):
        return "–"
    marks = [(v, delta(v, bounded, threshold=True)) for v in limits]
    if bounded:
        return f"{_points(100 * x, '+', [(100 * v, t) for v, t in marks], threshold)} pp"
    return _general(f"{x:+,.4g}", x, "+,.{k}g", marks, threshold)


def interval(ci: tuple[float, float] | None, bounded: bool, limits: Iterable[float] = ()) -> str:
    """`[lo, hi]` of a change; `limits` as in `delta`."""
    if ci is None:
        return ""
    lo, hi = ci
    limits = list(limits)
    if bounded:
        return f"[{delta(lo, True, limits).removesuffix(' pp')}, {delta(hi, True, limits).removesuffix(' pp')}]"
    marks = [(v, delta(v, False, threshold=True)) for v in limits]
    return f"[{_general(f'{lo:+.4g}', lo, '+.{k}g', marks)}, {_general(f'{hi:+.4g}', hi, '+.{k}g', marks)}]"


def p_value(p: float | None, alpha: float | None = None) -> str:
    return engine_fmt.p_number(p, alpha)


def count(n: int | None) -> str:
    return "–" if n is None else f"{n:,}"


def gate_n(gate: GateVerdict) -> str:
    """The gate's n: samples, with the epochs (records) per sample beside it where a sample has several."""
    units = gate.details.get("units") if isinstance(gate.details, dict) else None
    if not isinstance(units, dict) or gate.n is None:
        return count(gate.n)
    if "responses_per_sample" in units:
        return f"{count(gate.n)} samples × {units['responses_per_sample']} responses"
    return f"{count(gate.n)} samples × {units.get('epochs_per_sample')} epochs"


def gate_agreement(gate: GateVerdict) -> str:
    """How often a sample's epochs agree, per run ("" when not measured: one epoch, or values not 0/1)."""
    units = gate.details.get("units") if isinstance(gate.details, dict) else None
    if not isinstance(units, dict):
        return ""
    parts = [f"{role} {100 * value:.0f}%" for role in ("baseline", "candidate")
             if isinstance(value := units.get(f"agreement_{role}"), (int, float))]
    return f"epochs agree: {', '.join(parts)}" if parts else ""


def gate_label(gate: GateVerdict) -> str:
    """The gate's name, or "<kind> gate" when the name is just its metric (shown beside it anyway)."""
    same = gate.name == gate.metric or gate.metric.startswith(gate.name + "/")
    return f"{gate.kind} gate" if same else gate.name


def outcome_note(gate: GateVerdict) -> str:
    """"primary regression → block" for a failure whose outcome is not its kind's plain `<kind>_fail`, and
    "monitor info → research_only" for a gate that passed yet decides (the contract's decision policy); with
    "by gates/lenient.yaml:3 decision.regression_fail" where a policy file, not rlgate's default, mapped it."""
    from rlgate.engine.fmt import special_outcome

    name = special_outcome(gate.outcome)
    if not name and gate.verdict == "pass" and gate.effect != "release":
        name = gate.outcome.replace("_", " ") or "pass"
    if not name and gate.verdict != "pass" and gate.effect == "release":  # a failure the policy lets through
        name = gate.outcome.replace("_", " ")
    if gate.policy_line:  # a policy file mapped it: the line that did, so the reader can check it
        return f"{name or gate.outcome.replace('_', ' ')} → {gate.effect} by {gate.policy_line}"
    return f"{name} → {gate.effect}" if name else ""


def gate_p(gate: GateVerdict, alpha: float | None = None) -> str:
    """The p the verdict rests on (Holm-adjusted in a family) — the figure the terminal and the reason quote;
    given the decision's alpha, never printed as alpha nor across it."""
    return p_value(engine_fmt.deciding_p(gate.p_value, gate.p_adjusted), alpha)


def gate_p_note(gate: GateVerdict) -> str:
    """What the p is, for a tooltip or detail row: Holm-adjusted or not, and the unadjusted value."""
    if gate.p_adjusted is not None and gate.p_value is not None and gate.p_adjusted != gate.p_value:
        return f"Holm-adjusted across the regression family (unadjusted {p_value(gate.p_value)})"
    return "one-sided" if gate.p_value is not None else ""


def gate_change_limits(gate: GateVerdict) -> list[float]:
    """The thresholds the gate's Δ and its CI bounds are compared with (min_delta, -max_drop)."""
    return engine_fmt.change_limits(gate.threshold, gate.higher_is_better)


def gate_value_limits(gate: GateVerdict) -> list[float]:
    """The thresholds a one-run gate's value and its CI bounds are compared with (max, min)."""
    return engine_fmt.value_limits(gate.threshold)


def gate_delta(gate: GateVerdict) -> str:
    """Δ with its CI; for one-run gates (hard bounds) the CI is of the candidate's value."""
    bounded = gate_bounded(gate)
    if gate.delta is None:
        if gate.ci is None:
            return "–"
        level = f"{100 * gate.ci_level:.0f}% CI " if gate.ci_level else "CI "
        bounds = gate_value_limits(gate)
        return f"value {level}[{value(gate.ci[0], bounded, bounds)}, {value(gate.ci[1], bounded, bounds)}]"
    moves = gate_change_limits(gate)
    text = delta(gate.delta, bounded, moves)
    if gate.ci is not None:
        level = f"{100 * gate.ci_level:.0f}% CI " if gate.ci_level else "CI "
        text += f" {level}{interval(gate.ci, bounded, moves)}"
    return text


def gate_values(gate: GateVerdict) -> str:
    bounded = gate_bounded(gate)
    if gate.baseline is None:
        return value(gate.candidate, bounded, gate_value_limits(gate))
    return f"{value(gate.baseline, bounded)} → {value(gate.candidate, bounded, gate_value_limits(gate))}"


def seconds(s: float | None) -> str:
    if s is None:
        return "–"
    if s < 120:
        return f"{s:.1f} s"
    return f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.2f} h"


def magnitude(x: float | None, bounded: bool, limits: Iterable[float] = (), *, threshold: bool = False) -> str:
    """An unsigned size such as an MDE or a threshold: fractions in points; `limits` and `threshold` as in
    `value`."""
    if x is None or not math.isfinite(x):
        return "–"
    marks = [(v, magnitude(v, bounded, threshold=True)) for v in limits]
    if bounded:
        return f"{_points(100 * x, limits=[(100 * v, t) for v, t in marks], threshold=threshold)} pp"
    return _general(f"{x:,.4g}", x, ",.{k}g", marks, threshold)


def gate_mde(gate: GateVerdict) -> str:
    return magnitude(gate.mde, gate_bounded(gate), engine_fmt.size_limits(gate.threshold))


def iso_utc(value: object) -> str:
    """A time as ISO 8601 UTC (`2026-01-02T03:04:05Z`) from an ISO string or a Unix timestamp; else as given."""
    if value is None or value == "":
        return "–"
    text = str(value).strip()
    moment: datetime | None = None
    try:
        number = float(text)
        if math.isfinite(number) and 1e8 < number < 1e11:
            moment = datetime.fromtimestamp(number, tz=timezone.utc)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
    if moment is None:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def short_name(name: str | None) -> str:
    """A run's name for titles: a local path's last folder, a hub id as it is."""
    if not name:
        return "–"
    if name.startswith(("/", "./", "../", "~")) or "\\" in name:
        parts = [p for p in name.replace("\\", "/").split("/") if p]
        return parts[-1] if parts else name
    return name
