"""Anytime-valid inference for bounded means: the betting confidence sequence.

Method: Waudby-Smith, I. & Ramdas, A. (2024), "Estimating means of bounded random variables by
betting", Journal of the Royal Statistical Society Series B 86(1), 1-27 (arXiv:2010.09686).
For observations x_1, x_2, ... in [0, 1] with conditional mean m, the capital processes

    K+_t(m) = prod_{i<=t} (1 + l_i (x_i - m)),   K-_t(m) = prod_{i<=t} (1 - l_i (x_i - m))

are nonnegative supermartingales whenever the true mean is <= m (K+) or >= m (K-), for any
predictable bets l_i in [0, c/m] (resp. [0, c/(1-m)]). By Ville's inequality, P(exists t:
K+_t(m) >= 1/alpha) <= alpha, so {m : K+_t(m) < 1/alpha} is a one-sided (lower) confidence
sequence valid at every look, however the looks are chosen and whenever one stops: optional
stopping cannot inflate its error. We use the paper's aGRAPA bets (Section 5.3), which in our
simulations of paired 0/1 differences had more power at a fixed margin than its predictable plug-in
bets, with the truncation c = 1/2 it recommends.

Paired differences d = candidate - baseline of scores in [0, 1] lie in [-1, 1]; `to_unit` maps
any bounded range onto [0, 1]. Everything is vectorised over leading axes so simulations of
thousands of replays run in well under a second per setting.
"""

from __future__ import annotations

import math

import numpy as np

TRUNCATION = 0.5  # c in Waudby-Smith & Ramdas (2024), Section 5: bets never exceed c/m (resp. c/(1-m))


def to_unit(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map values known to lie in [low, high] onto [0, 1]; ValueError when one lies outside."""
    if not high > low:
        raise ValueError(f"empty range [{low}, {high}]")
    arr = np.asarray(values, dtype=float)
    if arr.size and (np.nanmin(arr) < low - 1e-12 or np.nanmax(arr) > high + 1e-12):
        raise ValueError(f"values outside the declared range [{low:g}, {high:g}]: the betting confidence "
                         "sequence needs bounded observations")
    return np.clip((arr - low) / (high - low), 0.0, 1.0)


def _previous(arr: np.ndarray, first: float) -> np.ndarray:
    """arr shifted one step right along the last axis (the value known before observation t)."""
    return np.concatenate([np.full((*arr.shape[:-1], 1), first), arr[..., :-1]], axis=-1)


def log_capital(x: np.ndarray, m: float | np.ndarray, side: str) -> np.ndarray:
    """log K_t(m) along the last axis of x (in [0, 1]); side "greater" tests mean <= m (K+), "less" mean >= m.

    Bets: the paper's aGRAPA (adaptive growth-rate adaptive to the particular alternative, Section 5.3):
    l_t = (mu_{t-1} - m) / (sigma2_{t-1} + (mu_{t-1} - m)^2), clipped to [0, c/m] (K+) or, mirrored,
    [0, c/(1-m)] (K-), with the regularised running mean mu_t = (1/2 + sum x_i) / (t + 1) and variance
    sigma2_t = (1/4 + sum (x_i - mu_i)^2) / (t + 1). Bet t uses only x_1..x_{t-1} (predictable), which
    is all Ville's inequality needs. `m` broadcasts against x[..., :1].
    """
    x = np.asarray(x, dtype=float)
    m_arr = np.asarray(m, dtype=float)[..., None] if np.ndim(m) else np.asarray(float(m))
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    gap = _previous(mu, 0.5) - m_arr
    kelly = gap / (_previous(sigma2, 0.25) + gap * gap)
    if side == "greater":
        bet = np.clip(kelly, 0.0, TRUNCATION / np.maximum(m_arr, 1e-12))
        step = bet * (x - m_arr)
    elif side == "less":
        bet = np.clip(-kelly, 0.0, TRUNCATION / np.maximum(1.0 - m_arr, 1e-12))
        step = -bet * (x - m_arr)
    else:
        raise ValueError(f"side must be 'greater' or 'less', not {side!r}")
    return np.cumsum(np.log1p(step), axis=-1)


def rejects(x: np.ndarray, m: float | np.ndarray, alpha: float, side: str) -> np.ndarray:
    """For each time t: has the test of (mean <= m for "greater", mean >= m for "less") rejected by t?

    Monotone in t (once rejected, always rejected): the anytime-valid test at level alpha.
    """
    crossed = log_capital(x, m, side) >= math.log(1.0 / alpha)
    return np.logical_or.accumulate(crossed, axis=-1)


def confidence_sequence(x: np.ndarray, alpha: float, *, grid: int = 2001) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) one-sided betting confidence bounds for the mean of x (1-D, in [0, 1]) at every t.

    Each bound holds at level 1 - alpha simultaneously over all t (running intersection applied), so
    "lower_t > m" at any look is a level-alpha test of mean <= m. Bounds are exact up to the grid
    spacing, rounded outwards (conservative).
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 1:
        raise ValueError("confidence_sequence takes one sequence")
    if x.size == 0:
        return np.zeros(0), np.zeros(0)
    ms = np.linspace(0.0, 1.0, grid)
    threshold = math.log(1.0 / alpha)
    plus = log_capital(np.broadcast_to(x, (grid, x.size)), ms, "greater") >= threshold
    minus = log_capital(np.broadcast_to(x, (grid, x.size)), ms, "less") >= threshold
    plus = np.logical_or.accumulate(plus, axis=1)  # m rejected as the mean (mean <= m ruled out) by time t
    minus = np.logical_or.accumulate(minus, axis=1)
    # lower bound: the smallest m not rejected by K+ (all m below it are rejected); upper: largest not rejected by K-
    kept_plus = ~plus
    kept_minus = ~minus
    lower_idx = np.where(kept_plus.any(axis=0), kept_plus.argmax(axis=0), grid - 1)
    upper_idx = np.where(kept_minus.any(axis=0), grid - 1 - kept_minus[::-1].argmax(axis=0), 0)
    step = ms[1] - ms[0]
    lower = np.maximum.accumulate(np.maximum(ms[lower_idx] - step, 0.0))
    upper = np.minimum.accumulate(np.minimum(ms[upper_idx] + step, 1.0))
    return lower, upper


def from_unit(value: np.ndarray | float, low: float, high: float) -> np.ndarray:
    """Inverse of `to_unit` (bounds back in the metric's units)."""
    return np.asarray(value, dtype=float) * (high - low) + low
