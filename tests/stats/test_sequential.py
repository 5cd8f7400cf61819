"""The betting confidence sequence: validity at every look (simulated), power, and its edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlgate.stats.power import mde_paired
from rlgate.stats.sequential import confidence_sequence, from_unit, log_capital, rejects, to_unit

ALPHA = 0.05


def _paired(rng: np.random.Generator, up: float, down: float, n: int, reps: int) -> np.ndarray:
    """reps x n paired 0/1 differences (candidate better w.p. up, worse w.p. down) mapped onto [0, 1]."""
    u = rng.random((reps, n))
    d = np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))
    return to_unit(d, -1.0, 1.0)


def test_to_unit_rejects_values_outside_the_range() -> None:
    assert to_unit(np.array([-1.0, 0.0, 1.0]), -1, 1).tolist() == [0.0, 0.5, 1.0]
    assert from_unit(0.25, -1, 1) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="outside the declared range"):
        to_unit(np.array([0.0, 2.0]), 0, 1)


def test_side_must_be_named() -> None:
    with pytest.raises(ValueError, match="side"):
        log_capital(np.array([0.5]), 0.5, "both")


def test_confidence_sequence_shrinks_and_covers_the_mean() -> None:
    rng = np.random.default_rng(3)
    x = rng.beta(2, 5, size=3000)
    lower, upper = confidence_sequence(x, ALPHA)
    assert np.all(np.diff(lower) >= 0) and np.all(np.diff(upper) <= 0)  # running intersection
    assert np.all(lower <= upper)
    assert lower[-1] < 2 / 7 < upper[-1]
    assert upper[-1] - lower[-1] < 0.05 < upper[99] - lower[99]
    assert confidence_sequence(np.zeros(0), ALPHA)[0].size == 0


def test_a_test_once_rejected_stays_rejected_and_agrees_with_the_bounds() -> None:
    x = np.full(400, 0.9)
    r = rejects(x, 0.5, ALPHA, "greater")
    first = int(r.argmax())
    assert r[first:].all() and not r[:first].any()
    lower, _ = confidence_sequence(x, ALPHA)
    assert lower[first - 1] <= 0.5 + 1e-3 and lower[-1] > 0.5
    assert not rejects(x, 0.5, ALPHA, "less").any()


@pytest.mark.parametrize("n", [100, 400, 2000])
def test_false_release_stays_below_alpha_at_every_look(n: int) -> None:
    """A true drop beyond the margin: the non-inferiority claim (lower bound >= -margin) is made, at any
    of every-document looks, in at most alpha of replays. Worst case: the drop sits just past the margin."""
    rng = np.random.default_rng(n)
    margin, reps = 0.02, 4000
    for up, down in [(0.05, 0.0701), (0.0, 0.0201), (0.15, 0.1701)]:
        x = _paired(rng, up, down, n, reps)
        released = rejects(x, (1 - margin) / 2, ALPHA, "greater").any(axis=1)  # any look, any time
        mc = 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
        assert released.mean() <= ALPHA + mc, (n, up, down, released.mean())


def test_a_decisive_drop_is_caught_early_and_power_at_the_fixed_mde_is_reported() -> None:
    """Power: at the fixed-sample MDE (alpha, power 0.8) the sequence settles non-inferiority in a good
    share of replays (anytime validity costs power: the final fixed-sample look keeps the rest); twice
    the MDE is settled nearly always, and a collapse is settled within the first tenth."""
    rng = np.random.default_rng(7)
    n, reps, disc, margin = 2000, 2000, 0.12, 0.02
    mde = mde_paired(n, ALPHA, 0.8, binary=True, discordant_rate=disc)
    # true change sits `mde` above the margin: -margin + mde
    change = -margin + mde
    x = _paired(rng, (disc + change) / 2, (disc - change) / 2, n, reps)
    power_at_mde = rejects(x, (1 - margin) / 2, ALPHA, "greater")[:, -1].mean()
    assert 0.3 <= power_at_mde < 0.95, power_at_mde
    change = -margin + 2 * mde
    x = _paired(rng, (disc + change) / 2, (disc - change) / 2, n, reps)
    assert rejects(x, (1 - margin) / 2, ALPHA, "greater")[:, -1].mean() > 0.9
    collapse = _paired(rng, 0.01, 0.31, n, reps)
    caught = rejects(collapse, (1 - margin) / 2, ALPHA, "less")[:, n // 10 - 1].mean()
    assert caught > 0.99
