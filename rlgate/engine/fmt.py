"""Numbers in gate reasons: fractions as percentages / points, other metrics as they are.

`metric` is a metric name (its kind decides, e.g. accuracy is a fraction, perplexity is not) or a
`Unit` the engine resolved from the harness's declared range (a 0-10 score is not a fraction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlgate.metrics import is_bounded


@dataclass(frozen=True)
class Unit:
    """How a metric's numbers read: as a fraction (percent, points) or on their own scale."""

    fraction: bool


def _fraction(metric: str | Unit) -> bool:
    return metric.fraction if isinstance(metric, Unit) else is_bounded(metric)


def value(v: float | None, metric: str | Unit) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v * 100:.2f}%" if _fraction(metric) else f"{v:.4g}"


def delta(v: float | None, metric: str | Unit) -> str:
    if v is None or math.isnan(v):
        return "n/a"
    return f"{v * 100:+.2f} pts" if _fraction(metric) else f"{v:+.4g}"


def interval(ci: tuple[float, float] | None, metric: str | Unit, level: float | None) -> str:
    if ci is None:
        return ""
    pct = f"{level * 100:.0f}% " if level else ""
    return f"{pct}CI {delta(ci[0], metric)} to {delta(ci[1], metric)}"


def p_number(v: float | None) -> str:
    """A p-value as every output writes it (terminal, reasons, HTML, Markdown): 0.180, 0.0031, <0.0001."""
    if v is None or not math.isfinite(v):
        return "–"
    if v < 1e-4:
        return "<0.0001"
    return f"{v:.4f}" if v < 0.01 else f"{v:.3f}"


def p(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "p n/a"
    text = p_number(v)
    return f"p{text}" if text.startswith("<") else f"p={text}"


def deciding_p(p_value: float | None, p_adjusted: float | None) -> float | None:
    """The p a gate's verdict rests on: Holm-adjusted where the gate is in a family, else its own."""
    return p_adjusted if p_adjusted is not None else p_value


#: Failure outcomes that are not their gate kind's plain `<kind>_fail`, with how reports name them.
SPECIAL_OUTCOMES = {"primary_regression": "primary regression", "regression_inconclusive": "regression inconclusive"}


def special_outcome(outcome: str) -> str | None:
    """How reports name a failure outcome that differs from `<kind>_fail` (e.g. primary_regression)."""
    return SPECIAL_OUTCOMES.get(outcome)
