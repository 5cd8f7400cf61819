"""Minimum detectable effects: how large a true change a gate could find at alpha with given power.

One-sided normal approximations (gates are one-sided): MDE = (z_{1-alpha} + z_{power}) * sd / sqrt(n).
For 0/1 outcomes the standard deviation shrinks with the change itself, so the MDE is never below
(z_{1-alpha} + z_{power})^2 / n, the effect that n pairs could show if every change went one way.
"""

from __future__ import annotations

import math

from rlgate.stats.intervals import normal_quantile


def _z_sum(alpha: float, power: float) -> float:
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must be in (0, 1)")
    return normal_quantile(1.0 - alpha) + normal_quantile(power)


def mde_paired(n: int, alpha: float, power: float, *, binary: bool, discordant_rate: float = 0.0,
               sd_difference: float = 0.0) -> float:
    """MDE of a paired mean difference over n pairs.

    Binary: sd of a paired difference is sqrt(p_disc - delta^2) <= sqrt(p_disc), with p_disc the share
    of discordant pairs. Continuous: the standard deviation of the differences.
    """
    if n <= 0:
        return math.inf
    z = _z_sum(alpha, power)
    if binary:
        return max(z * math.sqrt(max(discordant_rate, 0.0) / n), z * z / n)
    return z * max(sd_difference, 0.0) / math.sqrt(n)


def mde_one_sample(n: int, alpha: float, power: float, *, binary: bool, value: float = 0.0,
                   sd: float = 0.0) -> float:
    """MDE of one run's mean against a fixed threshold (hard gates, absolute diagnostics)."""
    if n <= 0:
        return math.inf
    z = _z_sum(alpha, power)
    if binary:
        p = min(max(value, 0.0), 1.0)
        return max(z * math.sqrt(p * (1 - p) / n), z * z / n)
    return z * max(sd, 0.0) / math.sqrt(n)
