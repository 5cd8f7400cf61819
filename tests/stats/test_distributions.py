"""rlgate.stats.distributions against scipy.special (what it replaces on the gate path) and exact values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import bdtr, ndtr, ndtri

from rlgate.stats.distributions import fair_coin_cdf, normal_cdf, normal_quantile


@pytest.mark.parametrize("x", [-30.0, -20.0, -8.5, -5.0, -1.96, -0.3, 0.0, 0.7, 1.645, 6.0, 9.0])
def test_normal_cdf_matches_ndtr_in_both_tails(x: float) -> None:
    assert normal_cdf(x) == pytest.approx(float(ndtr(x)), rel=1e-12, abs=0.0)


def test_normal_cdf_arrays_keep_their_shape() -> None:
    z = np.array([[-3.0, 0.0], [2.0, np.nan]])
    got = normal_cdf(z)
    assert got.shape == (2, 2) and got.dtype == float
    np.testing.assert_allclose(got[~np.isnan(z)], ndtr(z[~np.isnan(z)]), rtol=1e-13)
    assert math.isnan(got[1, 1])


@pytest.mark.parametrize("q", [1e-300, 1e-12, 0.001, 0.025, 0.05, 0.5, 0.8, 0.95, 0.975, 1 - 1e-12])
def test_normal_quantile_matches_ndtri(q: float) -> None:
    assert normal_quantile(q) == pytest.approx(float(ndtri(q)), rel=1e-12)


def test_normal_quantile_edges_and_arrays() -> None:
    assert normal_quantile(0.0) == -math.inf and normal_quantile(1.0) == math.inf
    assert math.isnan(normal_quantile(1.5)) and math.isnan(normal_quantile(-0.1))
    np.testing.assert_allclose(normal_quantile(np.array([0.05, 0.95])), ndtri([0.05, 0.95]), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 7, 40, 341, 1000])
def test_fair_coin_cdf_is_the_exact_binomial_sum(n: int) -> None:
    for k in sorted({0, 1, n // 3, n // 2, (n + 1) // 2, n - 1}):
        exact = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
        assert fair_coin_cdf(k, n) == float(exact)  # correctly rounded, both sides of the middle
        assert fair_coin_cdf(k, n) == pytest.approx(float(bdtr(k, n, 0.5)), rel=1e-9)


def test_fair_coin_cdf_outside_the_support() -> None:
    assert fair_coin_cdf(-1, 10) == 0.0 and fair_coin_cdf(10, 10) == 1.0 and fair_coin_cdf(99, 10) == 1.0
    assert fair_coin_cdf(0, 0) == 1.0
    with pytest.raises(ValueError):
        fair_coin_cdf(0, -1)


def test_fair_coin_cdf_far_tail_does_not_underflow_early() -> None:
    # 1 / 2**900 is representable; scipy's incomplete-beta route agrees in the far tail
    assert fair_coin_cdf(0, 900) == 2.0**-900
    assert fair_coin_cdf(3, 1200) == pytest.approx(float(bdtr(3, 1200, 0.5)), rel=1e-9)


def test_fair_coin_cdf_takes_numpy_integers_and_large_n() -> None:
    assert fair_coin_cdf(np.int64(10), np.int64(100)) == fair_coin_cdf(10, 100)  # no int64 overflow in 1 << n
    with pytest.raises(TypeError):
        fair_coin_cdf(1.5, 10)  # type: ignore[arg-type]
    big = 60_000  # beyond the exact sum: scipy's incomplete beta
    assert fair_coin_cdf(29_800, big) == pytest.approx(float(bdtr(29_800, big, 0.5)), rel=1e-12)
    assert fair_coin_cdf(big, big) == 1.0 and fair_coin_cdf(-1, big) == 0.0
