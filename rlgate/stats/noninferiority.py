"""Non-inferiority of a paired change: is the candidate no worse than the baseline by more than a margin?

Binary outcomes use Tango's score test for the difference of paired proportions (Tango 1998,
"Equivalence test and confidence interval for the difference in proportions for the paired-sample
design", Stat. Med. 17:891-908), which keeps its level for small discordance where the Wald test
does not; its one-sided confidence bound is the test inverted. Continuous differences use the
shifted paired t test. Everything is vectorised over numpy arrays, so simulations can run
thousands of replications at once.
"""

from __future__ import annotations

import numpy as np

from rlgate.stats.distributions import normal_cdf, normal_quantile


def tango_z(better: np.ndarray | float, worse: np.ndarray | float, n: np.ndarray | float,
            delta0: np.ndarray | float) -> np.ndarray:
    """Tango's score statistic for H0: p_better - p_worse = delta0 (large values favour a larger change).

    `better` / `worse` count the pairs where only the candidate / only the baseline was right.
    """
    b, c = np.asarray(better, float), np.asarray(worse, float)
    nn, d0 = np.asarray(n, float), np.asarray(delta0, float)
    a = 2 * nn
    bb = -b - c + (2 * nn - b + c) * d0
    cc = -c * d0 * (1 - d0)
    p_worse = (np.sqrt(np.maximum(bb * bb - 4 * a * cc, 0.0)) - bb) / (2 * a)
    var = nn * (2 * p_worse + d0 * (1 - d0))
    diff = b - c - nn * d0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, diff / np.sqrt(np.maximum(var, 1e-300)), np.sign(diff) * np.inf)
    return np.asarray(z, float)


def _upper_tail(z: np.ndarray) -> np.ndarray:
    return normal_cdf(-np.asarray(z, float))


def binary_noninferiority_p(better: np.ndarray | float, worse: np.ndarray | float, n: np.ndarray | float,
                            margin: float) -> np.ndarray:
    """One-sided p for H0: change <= -margin against change > -margin (Tango score test)."""
    return _upper_tail(tango_z(better, worse, n, -margin))


def binary_lower_bound(better: np.ndarray | float, worse: np.ndarray | float, n: np.ndarray | float,
                       alpha: np.ndarray | float, iterations: int = 60) -> np.ndarray:
    """One-sided 1 - alpha lower confidence bound of the paired change (Tango's test inverted, bisection)."""
    b, c, nn = (np.asarray(x, float) for x in (better, worse, n))
    b, c, nn, a = np.broadcast_arrays(b, c, nn, np.asarray(alpha, float))
    z_crit = normal_quantile(1 - a)
    lo = np.full(b.shape, -1.0 + 1e-9)
    hi = (b - c) / np.maximum(nn, 1)
    for _ in range(iterations):  # Z decreases in delta0: the bound is where Z crosses z_crit
        mid = (lo + hi) / 2
        reject = tango_z(b, c, nn, mid) >= z_crit
        lo = np.where(reject, mid, lo)
        hi = np.where(reject, hi, mid)
    return np.asarray(lo, float)


def continuous_noninferiority(mean: np.ndarray | float, sd: np.ndarray | float, n: np.ndarray | float, margin: float,
                              alpha: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(one-sided p for H0: change <= -margin, one-sided 1 - alpha lower bound): shifted paired t test.

    Student's t through scipy.special (what scipy.stats.t calls), without importing scipy.stats (~0.3 s)."""
    from scipy.special import stdtr, stdtrit

    m, s, nn = (np.asarray(x, float) for x in (mean, sd, n))
    df = np.maximum(nn - 1, 1)
    se = s / np.sqrt(np.maximum(nn, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, (m + margin) / np.where(se > 0, se, 1.0), np.sign(m + margin) * np.inf)
    p = np.asarray(stdtr(df, -t), float)
    bound = m - np.asarray(stdtrit(df, 1 - np.asarray(alpha, float)), float) * se
    return p, np.asarray(bound, float)


def normal_noninferiority(delta: float, se: float, margin: float, alpha: float) -> tuple[float, float]:
    """(p, lower bound) from a normal approximation (unpaired runs compared through reported stderrs)."""
    if se <= 0:
        return (0.0 if delta > -margin else 1.0), delta
    return normal_cdf(-(delta + margin) / se), delta - normal_quantile(1 - alpha) * se


def holm_levels(p_values: list[float], alpha: float) -> list[float]:
    """The one-sided level Holm's step-down procedure tests each hypothesis at, in input order.

    The smallest p is tested at alpha/m, the next at alpha/(m-1), ...; once one is not rejected the
    procedure stops and the rest keep that level, so "bound at this level >= -margin" is exactly
    "Holm rejects". NaN p-values get NaN.
    """
    indexed = sorted((p, i) for i, p in enumerate(p_values) if p == p)
    m = len(indexed)
    out = [float("nan")] * len(p_values)
    stopped: float | None = None
    for rank, (p, i) in enumerate(indexed):
        level = alpha / (m - rank) if stopped is None else stopped
        out[i] = level
        if stopped is None and p >= level:
            stopped = level
    return out
