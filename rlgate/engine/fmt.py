"""Numbers in gate reasons: fractions as percentages / points, other metrics as they are.

`metric` is a metric name (its kind decides, e.g. accuracy is a fraction, perplexity is not) or a
`Unit` the engine resolved from the harness's declared range (a 0-10 score is not a fraction).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rlgate.contract.metrics import is_bounded


@dataclass(frozen=True)
class Unit:
    """How a metric's numbers read: as a fraction (percent, points) or on their own scale."""

    fraction: bool


def _fraction(metric: str | Unit) -> bool:
    return metric.fraction if isinstance(metric, Unit) else is_bounded(metric)


#: The most decimals (or extra significant digits) a figure gets to stay apart from its threshold.
MOST_DIGITS = 6

_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d*)?(?:[eE][-+]?\d+)?")


def _shown(text: str) -> float | None:
    """The number a printed figure reads as ("+1.96 pp" -> 1.96, "1,024" -> 1024), None if it has none."""
    found = _NUMBER.search(text)
    return float(found.group().replace(",", "")) if found else None


def _side(a: float, b: float) -> int:
    return (a > b) - (a < b)


def apart(x: float, limits: Iterable[tuple[float, str]], texts: Iterable[str]) -> str:
    """`x` printed so that it never reads as a threshold it is compared with, nor on the threshold's other side.

    `texts` are `x` printed ever more precisely, the usual text first; `limits` are (threshold, its printed
    text). The first text whose number lies on the same side of every printed threshold as `x` lies of the
    threshold itself wins: 0.0496 against alpha 0.05 reads "0.0496", not "0.050"; far from any threshold,
    the usual text. If even the most precise text cannot tell them apart, the most precise one. Where the
    threshold's own text is rounded past `x` (min_delta 0.0205 shown "+2.0", x 0.0203), no text of `x` can
    lie on the right side of it: there `x` need only not read as it.
    """
    pairs: list[tuple[int, float]] = []
    for lim, text in limits:
        shown = _shown(text)
        if math.isfinite(lim) and lim != x and shown is not None:
            side = _side(x, lim)
            pairs.append((side if _side(x, shown) == side else 0, shown))
    last = ""
    for text in texts:
        last = text
        number = _shown(text)
        if number is None or all(_side(number, shown) == side if side else number != shown
                                 for side, shown in pairs):
            return text
    return last


def exact(v: float, texts: Iterable[str]) -> str:
    """The first of `texts` (a threshold printed ever more precisely) that reads as `v` itself, else the last:
    a contract's max 0.0178 reads "1.78%", not "1.8%", so a figure of 1.79% beside it reads on its true side."""
    last = ""
    for text in texts:
        last = text
        number = _shown(text)
        if number is not None and math.isclose(number, v, rel_tol=1e-9, abs_tol=1e-12):
            return text
    return last


def _fixed(start: int, render: Callable[[int], str]) -> Iterable[str]:
    """`render(d)` for d decimals from `start` to MOST_DIGITS: the candidates `apart` tries."""
    return (render(d) for d in range(start, max(start, MOST_DIGITS) + 1))


def _figure(v: float, frac: bool, limits: Iterable[float], threshold: bool, sign: str, unit: str) -> str:
    """`value` (sign "", unit "%") and `delta` (sign "+", unit " pts"): a threshold printed exactly, any other
    figure kept apart from the thresholds it is compared with."""

    def render(d: int) -> str:
        return f"{v * 100:{sign}.{d}f}{unit}" if frac else f"{v:{sign}.{d + 2}g}"

    if threshold:
        return exact(v * 100 if frac else v, _fixed(2, render))
    return apart(v, [(lim, _figure(lim, frac, (), True, sign, unit)) for lim in limits], _fixed(2, render))


def value(v: float | None, metric: str | Unit, limits: Iterable[float] = (), *, threshold: bool = False) -> str:
    """A value; `limits` are thresholds it is compared with (a hard gate's max/min): see `apart`. A `threshold`
    itself gets the decimals (up to 6) that print it as it is."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return _figure(v, _fraction(metric), limits, threshold, "", "%")


def delta(v: float | None, metric: str | Unit, limits: Iterable[float] = (), *, threshold: bool = False) -> str:
    """A signed change; `limits` are thresholds it is compared with (min_delta, -max_drop): see `apart`;
    a `threshold` as in `value`."""
    if v is None or math.isnan(v):
        return "n/a"
    return _figure(v, _fraction(metric), limits, threshold, "+", " pts")


def interval(ci: tuple[float, float] | None, metric: str | Unit, level: float | None) -> str:
    if ci is None:
        return ""
    pct = f"{level * 100:.0f}% " if level else ""
    return f"{pct}CI {delta(ci[0], metric)} to {delta(ci[1], metric)}"


def p_number(v: float | None, alpha: float | None = None) -> str:
    """A p-value as every output writes it (terminal, reasons, HTML, Markdown): 0.180, 0.0031, <0.0001.

    Given the alpha it is compared with, never printed as alpha nor across it: 0.0496 and 0.0504 against
    0.05 read "0.0496" and "0.0504", not both "0.050".
    """
    if v is None or not math.isfinite(v):
        return "–"
    if v < 1e-4 and not (alpha is not None and v >= alpha):
        return "<0.0001"
    usual = 4 if v < 0.01 else 3
    limits = [(alpha, f"{alpha:g}")] if alpha is not None else []
    return apart(v, limits, _fixed(usual, lambda d: f"{v:.{d}f}"))


def p(v: float | None, alpha: float | None = None) -> str:
    if v is None or not math.isfinite(v):
        return "p n/a"
    text = p_number(v, alpha)
    return f"p{text}" if text.startswith("<") else f"p={text}"


def change_limits(threshold: Mapping[str, float], higher_is_better: bool) -> list[float]:
    """The thresholds a gate's change (Δ = candidate - baseline, and its CI bounds) is compared with:
    min_delta and -max_drop, turned round for a metric where lower is better."""
    sign = 1.0 if higher_is_better else -1.0
    return [sign * s * threshold[k] for k, s in (("min_delta", 1.0), ("max_drop", -1.0)) if k in threshold]


def value_limits(threshold: Mapping[str, float]) -> list[float]:
    """The thresholds a one-run gate's value (and its CI bounds) is compared with: max and min."""
    return [threshold[k] for k in ("max", "min") if k in threshold]


def size_limits(threshold: Mapping[str, float]) -> list[float]:
    """The thresholds an unsigned size (the MDE) is compared with: min_delta and max_drop."""
    return [threshold[k] for k in ("min_delta", "max_drop") if k in threshold]


def deciding_p(p_value: float | None, p_adjusted: float | None) -> float | None:
    """The p a gate's verdict rests on: Holm-adjusted where the gate is in a family, else its own."""
    return p_adjusted if p_adjusted is not None else p_value


#: Failure outcomes that are not their gate kind's plain `<kind>_fail`, with how reports name them.
SPECIAL_OUTCOMES = {"primary_regression": "primary regression", "regression_inconclusive": "regression inconclusive"}


def special_outcome(outcome: str) -> str | None:
    """How reports name a failure outcome that differs from `<kind>_fail` (e.g. primary_regression)."""
    return SPECIAL_OUTCOMES.get(outcome)
