"""Group-sequential boundaries with Lan-DeMets alpha spending, for a fixed set of planned looks.

Method: Lan, K. K. G. & DeMets, D. L. (1983), "Discrete sequential boundaries for clinical trials",
Biometrika 70(3), 659-663; Jennison, C. & Turnbull, B. W. (2000), "Group Sequential Methods with
Applications to Clinical Trials", Chapman & Hall/CRC (Ch. 7 spending functions, Ch. 19 numerical
integration). Under the null the z statistics Z_1..Z_K at information fractions t_1 < ... < t_K
have the canonical joint distribution: multivariate normal, unit variances, corr(Z_i, Z_j) =
sqrt(t_i / t_j) (i <= j), i.e. Z_k = W(t_k) / sqrt(t_k) for a Brownian motion W. The one-sided
upper boundaries c_k solve

    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = alpha(t_k) - alpha(t_{k-1}),

so the probability of crossing at any planned look is exactly alpha(t_K) (= alpha at t_K = 1).
The spending functions (one-sided level alpha):
- pocock (Lan-DeMets Pocock type):            alpha * ln(1 + (e - 1) t)
- obrien_fleming (Lan-DeMets O'Brien-Fleming type): 2 - 2 Phi(z_{alpha/2} / sqrt(t))
The guarantee holds at the planned looks only: a look added later (not in `fractions`) spends
alpha it was never given. The probabilities are computed by recursive numerical integration of
the sub-density of W on the continuation region (Armitage, McPherson & Rowe 1969; Jennison &
Turnbull Ch. 19) with Simpson's rule: deterministic, no random draws.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Literal

import numpy as np

from rlgate.stats.distributions import normal_cdf, normal_quantile

Spending = Literal["pocock", "obrien_fleming"]
SPENDING_NAMES: dict[str, str] = {
    "pocock": "Lan-DeMets Pocock-type spending alpha*ln(1+(e-1)t)",
    "obrien_fleming": "Lan-DeMets O'Brien-Fleming-type spending 2-2*Phi(z_{alpha/2}/sqrt(t))",
}
_LOW = -10.0  # z below which the continuation density is negligible (Phi(-10) ~ 1e-23)
_TOP = 40.0  # a boundary above this spends nothing: reported as +inf
_STEP = 0.02  # grid spacing in z units (finer when an information increment is small)
_MAX_POINTS = 3001


def spent(t: float, alpha: float, spending: Spending) -> float:
    """alpha(t): the type I error spent by information fraction t in [0, 1] (alpha at t = 1)."""
    if t <= 0:
        return 0.0
    t = min(t, 1.0)
    if spending == "pocock":
        return alpha * math.log(1.0 + (math.e - 1.0) * t)
    if spending == "obrien_fleming":
        return 2.0 * normal_cdf(-normal_quantile(1.0 - alpha / 2.0) / math.sqrt(t))
    raise ValueError(f"unknown spending function {spending!r}: pocock or obrien_fleming")


def _pdf(z: np.ndarray) -> np.ndarray:
    """The standard normal density."""
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _simpson(n: int, h: float) -> np.ndarray:
    """Simpson's rule weights for n (odd) equally spaced points of spacing h."""
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w * h / 3.0


def _grid(top_z: float, t: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Points on the W scale covering z in [_LOW, top_z] at fraction t, and their Simpson weights."""
    step = min(_STEP, math.sqrt(dt / t) / 6.0)
    n = int(min(_MAX_POINTS, max(101, math.ceil((top_z - _LOW) / step))))
    n += (n + 1) % 2  # odd, for Simpson
    s = np.linspace(_LOW * math.sqrt(t), top_z * math.sqrt(t), n)
    return s, _simpson(n, s[1] - s[0])


class _Recursion:
    """The sub-density of W(t_k) on paths that have not crossed c_1..c_k, carried look by look."""

    def __init__(self) -> None:
        self.s: np.ndarray | None = None  # grid of the previous look (W scale)
        self.w: np.ndarray | None = None  # Simpson weights times the sub-density there
        self.t = 0.0

    def crossing(self, c: float, t: float) -> float:
        """P(not crossed before, Z(t) >= c)."""
        from scipy.special import ndtr  # vectorised over the grid (the stdlib one is per element)

        if self.s is None or self.w is None:
            return normal_cdf(-c)
        sd = math.sqrt(t - self.t)
        return float(np.sum(self.w * ndtr((self.s - c * math.sqrt(t)) / sd)))

    def advance(self, c: float, t: float) -> None:
        """Condition on Z(t) < c and move to look t."""
        top = min(c, _TOP)
        s, weights = _grid(top, t, t - self.t)
        if self.s is None or self.w is None:
            density = _pdf(s / math.sqrt(t)) / math.sqrt(t)
        else:
            sd = math.sqrt(t - self.t)
            density = (_pdf((s[:, None] - self.s[None, :]) / sd) / sd) @ self.w
        self.s, self.w, self.t = s, weights * density, t


def _check(fractions: tuple[float, ...]) -> None:
    if not fractions or any(b <= a for a, b in itertools.pairwise(fractions)):
        raise ValueError(f"information fractions must be strictly increasing: {fractions}")
    if fractions[0] <= 0 or fractions[-1] > 1 + 1e-12:
        raise ValueError(f"information fractions must lie in (0, 1]: {fractions}")


@lru_cache(maxsize=256)
def boundaries(fractions: tuple[float, ...], alpha: float, spending: Spending = "pocock") -> tuple[float, ...]:
    """One-sided upper z boundaries c_1..c_K at the planned information fractions (strictly increasing, in
    (0, 1]); +inf where a look spends (numerically) nothing. Reject "mean <= m" at the first look k with
    Z_k >= c_k. Deterministic; cached (the same looks recur for every gate of a replay)."""
    from scipy.optimize import brentq

    _check(fractions)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), not {alpha}")
    rec = _Recursion()
    out: list[float] = []
    previous = 0.0
    for t in fractions:
        target = spent(t, alpha, spending) - previous
        if target <= 1e-15 or rec.crossing(_TOP, t) >= target:
            c = math.inf
        else:
            c = float(brentq(lambda z, t=t, target=target: rec.crossing(z, t) - target, _LOW, _TOP,
                             xtol=1e-10, rtol=1e-12))
        previous += target if math.isfinite(c) else 0.0  # an unspent share carries to the next look
        out.append(c)
        rec.advance(c, t)
    return tuple(out)


def crossing_probabilities(bounds: tuple[float, ...], fractions: tuple[float, ...],
                           drift: float = 0.0) -> tuple[float, ...]:
    """P(first crossing at look k) for given one-sided boundaries, under the null (drift 0) or under
    Z_k ~ N(drift * sqrt(t_k), 1) (drift: the z the full suite would expect). For checks and power."""
    _check(fractions)
    rec = _Recursion()
    out = []
    for c, t in zip(bounds, fractions, strict=True):
        shift = drift * math.sqrt(t)  # Z_k >= c_k  <=>  (W(t_k) - drift t_k) / sqrt(t_k) >= c_k - drift sqrt(t_k)
        out.append(rec.crossing(c - shift, t) if math.isfinite(c) else 0.0)
        rec.advance(c - shift if math.isfinite(c) else _TOP, t)
    return tuple(out)


__all__ = ["SPENDING_NAMES", "Spending", "boundaries", "crossing_probabilities", "spent"]
