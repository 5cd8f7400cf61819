"""The normal and fair-coin binomial distribution functions the gate path needs, from the standard library.

Why not scipy.special: importing it takes ~0.12 s beyond numpy (scipy 1.17's array-API layer clones
numpy's whole namespace on import, which loads numpy.f2py and numpy.testing), more than reading and
deciding a 12,000-document run. These two families cover every binary and normal-approximation test on
that path; scipy stays where only it has the function (Student's t, the exact Wilcoxon distribution).

- The fair-coin binomial tail is exact: the sum of binomial coefficients over 2**n in integer
  arithmetic, rounded once (Python's int / int division is correctly rounded). scipy's bdtr evaluates an
  incomplete beta function and is off by up to ~1e-11 relative for n in the thousands; it is used above
  50,000 trials, where the exact sum (quadratic in n) would take longer than importing scipy.
- The normal CDF uses math.erfc, accurate in both tails (1 + erf(x) would cancel below x = -5); the
  quantile is statistics.NormalDist.inv_cdf (Wichura's AS 241, accurate to about 1e-16 relative).
Scalars and numpy arrays are both accepted where the callers pass both.
"""

from __future__ import annotations

import math
import operator
from statistics import NormalDist
from typing import Any, overload

import numpy as np

_SQRT2 = math.sqrt(2.0)
#: Above this many trials the exact integer sum (quadratic in n: 0.2 s at 50,000) gives way to scipy.special.bdtr.
_EXACT_MAX_N = 50_000
_STANDARD = NormalDist()


def _cdf(x: float) -> float:
    if math.isnan(x):
        return math.nan
    return 0.5 * math.erfc(-x / _SQRT2)


def _ppf(q: float) -> float:
    if math.isnan(q) or q < 0.0 or q > 1.0:
        return math.nan
    if q == 0.0:
        return -math.inf
    if q == 1.0:
        return math.inf
    return _STANDARD.inv_cdf(q)


_cdf_array = np.frompyfunc(_cdf, 1, 1)
_ppf_array = np.frompyfunc(_ppf, 1, 1)


@overload
def normal_cdf(x: float) -> float: ...
@overload
def normal_cdf(x: np.ndarray) -> np.ndarray: ...
def normal_cdf(x: Any) -> Any:
    """P(Z <= x) for a standard normal Z (what scipy.special.ndtr computes)."""
    if isinstance(x, np.ndarray):
        return np.asarray(_cdf_array(x), dtype=float)
    return _cdf(float(x))


@overload
def normal_quantile(q: float) -> float: ...
@overload
def normal_quantile(q: np.ndarray) -> np.ndarray: ...
def normal_quantile(q: Any) -> Any:
    """The standard normal quantile (inverse CDF; scipy.special.ndtri): -inf at 0, inf at 1, nan outside [0, 1]."""
    if isinstance(q, np.ndarray):
        return np.asarray(_ppf_array(q), dtype=float)
    return _ppf(float(q))


def fair_coin_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exact up to the final rounding (scipy.special.bdtr(k, n, 0.5)).

    Sums the shorter side: below the middle directly, above it as 1 - P(X <= n - k - 1) by symmetry (still in
    integers, so values near 1 are exact too).
    """
    k, n = operator.index(k), operator.index(n)  # numpy integers would overflow in 1 << n
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n > _EXACT_MAX_N:  # the exact sum is quadratic in n: scipy's incomplete beta (1e-11 relative) beyond
        from scipy.special import bdtr

        return float(bdtr(k, n, 0.5))
    if 2 * k >= n:
        return ((1 << n) - _lower_sum(n - k - 1, n)) / (1 << n)
    return _lower_sum(k, n) / (1 << n)


def _lower_sum(k: int, n: int) -> int:
    """sum_{i <= k} C(n, i), by the recurrence C(n, i) = C(n, i - 1) (n - i + 1) / i (exact in integers)."""
    term = total = 1
    for i in range(1, k + 1):
        term = term * (n - i + 1) // i
        total += term
    return total
