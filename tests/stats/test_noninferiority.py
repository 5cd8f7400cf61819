"""Non-inferiority statistics behind the three-way regression gate, and its error rate by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from rlgate.stats.noninferiority import (
    binary_lower_bound,
    binary_noninferiority_p,
    continuous_noninferiority,
    holm_levels,
    tango_z,
)
from rlgate.stats.power import samples_to_settle

ALPHA = 0.05
REPS = 3000


def test_tango_at_zero_is_mcnemar() -> None:
    assert float(tango_z(30, 50, 400, 0.0)) == pytest.approx((30 - 50) / math.sqrt(80))


def test_tango_restricted_mle_maximises_the_likelihood() -> None:
    """Recover the constrained MLE of p_worse numerically and check Tango's closed-form variance with it."""
    b, c, n, d0 = 30, 50, 400, -0.02

    def nll(q: float) -> float:
        return -(b * math.log(q + d0) + c * math.log(q) + (n - b - c) * math.log(1 - 2 * q - d0))

    q = minimize_scalar(nll, bounds=(-d0 + 1e-9, (1 - d0) / 2 - 1e-9), method="bounded").x
    expected = (b - c - n * d0) / math.sqrt(n * (2 * q + d0 * (1 - d0)))
    assert float(tango_z(b, c, n, d0)) == pytest.approx(expected, rel=1e-4)


def test_lower_bound_inverts_the_test() -> None:
    bound = float(binary_lower_bound(30, 50, 400, ALPHA))
    assert -0.1 < bound < -0.05
    assert float(binary_noninferiority_p(30, 50, 400, -bound)) == pytest.approx(ALPHA, abs=1e-6)
    # nothing discordant in 100 pairs cannot rule out a 2-point drop: P(0 of 100 | 2 %) = 0.13
    assert float(binary_lower_bound(0, 0, 100, ALPHA)) < -0.02


def test_continuous_noninferiority() -> None:
    p, bound = continuous_noninferiority(0.0, 1.0, 400, 0.2, ALPHA)
    assert float(p) < 0.001 and float(bound) == pytest.approx(-1.6487 / 20, rel=1e-3)


def test_holm_levels_step_down_and_stop() -> None:
    assert holm_levels([0.01, 0.2, 0.03], ALPHA) == pytest.approx([ALPHA / 3, ALPHA / 2, ALPHA / 2])
    assert holm_levels([0.001, 0.002], ALPHA) == pytest.approx([ALPHA / 2, ALPHA])


def test_samples_to_settle_leans_and_projects() -> None:
    leaning, more = samples_to_settle(400, 0.0, 0.02, ALPHA, 0.8, binary=True, discordant_rate=0.2)
    assert leaning == "non_inferior" and more is not None and 2000 < more + 400 < 4000  # (2.49*.447/.02)^2 ~ 3100
    leaning, more = samples_to_settle(400, -0.05, 0.02, ALPHA, 0.8, binary=True, discordant_rate=0.3)
    assert leaning == "regression" and more is not None and more > 0
    assert samples_to_settle(400, -0.02, 0.02, ALPHA, 0.8, binary=True, discordant_rate=0.3)[1] is None


@pytest.mark.parametrize("n", [100, 400, 2000])
@pytest.mark.parametrize("discordance", [0.08, 0.3])
def test_three_way_false_release_at_most_alpha(n: int, discordance: float) -> None:
    """A true drop at the margin (worst case) and beyond it, paired 0/1 outcomes drawn directly as
    counts (vectorised): the default gate releases (passes) at most alpha of the time, within three
    Monte-Carlo standard errors."""
    rng = np.random.default_rng(n + int(discordance * 100))
    margin = 0.02
    bound = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)
    for drop in (margin, 0.03, 0.05):
        better, worse = (discordance - drop) / 2, (discordance + drop) / 2
        counts = rng.multinomial(n, [better, worse, 1 - better - worse], size=REPS)
        released = binary_lower_bound(counts[:, 0], counts[:, 1], n, ALPHA) >= -margin
        assert released.mean() <= bound, (drop, released.mean())
