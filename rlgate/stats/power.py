"""Minimum detectable effects: how large a true change a gate could find at alpha with given power.

One-sided normal approximations (gates are one-sided): MDE = (z_{1-alpha} + z_{power}) * sd / sqrt(n).
For 0/1 outcomes the standard deviation shrinks with the change itself, so the MDE is never below
(z_{1-alpha} + z_{power})^2 / n, the effect that n pairs could show if every change went one way.
"""

from __future__ import annotations

import math

from rlgate.stats.distributions import normal_quantile


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


def samples_to_settle(n: int, improvement: float, margin: float, alpha: float, power: float, *, binary: bool,
                      discordant_rate: float = 0.0, sd_difference: float = 0.0) -> tuple[str, int | None]:
    """Which way an inconclusive regression leans, and about how many more paired samples would settle it.

    Projected from the observed change and its per-pair spread (discordance for 0/1 outcomes), as if
    both stayed the same: leaning `non_inferior` (change above -margin) needs n with the
    non-inferiority test at `power`; leaning `regression` (change below -margin) needs n for the
    drop to become significant. None when the change sits on the margin (no finite n settles it).
    """
    z = _z_sum(alpha, power)
    if binary:
        spread = max(discordant_rate - improvement * improvement, 0.0)
        floor = margin * (1 - margin) if improvement > -margin else abs(improvement)
        sd = math.sqrt(max(spread, floor, 1.0 / max(n, 1)))
    else:
        sd = max(sd_difference, 0.0)
    if improvement > -margin:
        leaning, distance = "non_inferior", improvement + margin
    else:
        leaning, distance = "regression", -improvement
    if abs(improvement + margin) <= 1e-12 or distance <= 1e-12 or sd == 0:
        return leaning, None
    needed = (z * sd / distance) ** 2
    if not math.isfinite(needed) or needed > 1e9:
        return leaning, None
    return leaning, max(1, math.ceil(needed - n))
