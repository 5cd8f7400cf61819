"""Numbers in gate reasons: fractions as percentages / points, other metrics as they are."""

from __future__ import annotations

import math

from rlgate.metrics import is_bounded


def value(v: float | None, metric: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v * 100:.2f}%" if is_bounded(metric) else f"{v:.4g}"


def delta(v: float | None, metric: str) -> str:
    if v is None or math.isnan(v):
        return "n/a"
    return f"{v * 100:+.2f} pts" if is_bounded(metric) else f"{v:+.4g}"


def interval(ci: tuple[float, float] | None, metric: str, level: float | None) -> str:
    if ci is None:
        return ""
    pct = f"{level * 100:.0f}% " if level else ""
    return f"{pct}CI {delta(ci[0], metric)} to {delta(ci[1], metric)}"


def p(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "p n/a"
    return f"p={v:.2g}" if v >= 1e-4 else "p<1e-4"
