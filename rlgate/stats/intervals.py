"""Confidence intervals for single proportions."""

from __future__ import annotations

import math

from rlgate.stats.distributions import normal_quantile


def wilson_interval(successes: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion: well-behaved near 0 and 1, unlike the Wald interval.

    `successes` may be fractional (a mean times n); n = 0 gives the uninformative (0, 1).
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0.0 < level < 1.0:
        raise ValueError("level must be in (0, 1)")
    p = min(max(successes / n, 0.0), 1.0)
    z = normal_quantile(0.5 + level / 2)
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lower = 0.0 if p == 0.0 else max(0.0, center - half)
    upper = 1.0 if p == 1.0 else min(1.0, center + half)
    return (lower, upper)
