"""Group-sequential boundaries: published values, a Monte-Carlo second computation, exact spending, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from rlgate.stats.group_sequential import boundaries, crossing_probabilities, spent

EQUAL5 = (0.2, 0.4, 0.6, 0.8, 1.0)


def test_the_integration_reproduces_the_classical_pocock_and_obrien_fleming_constants() -> None:
    """Jennison & Turnbull (2000) Tables 2.1 and 2.3: two-sided alpha 0.05, K = 5 equally spaced looks: Pocock's
    constant boundary 2.413, O'Brien & Fleming's C_B(5) = 2.040 (final look). One-sided 0.025 upper boundaries
    agree with the two-sided ones to the tables' 3 decimals (a path crossing both sides has probability ~0)."""
    pocock = brentq(lambda c: sum(crossing_probabilities((c,) * 5, EQUAL5)) - 0.025, 1.5, 4.0)
    obf = brentq(lambda c: sum(crossing_probabilities(tuple(c * math.sqrt(5 / k) for k in range(1, 6)), EQUAL5))
                 - 0.025, 1.5, 4.0)
    assert pocock == pytest.approx(2.413, abs=6e-4)
    assert obf == pytest.approx(2.040, abs=6e-4)


@pytest.mark.parametrize(("spending", "published"), [
    # Lan-DeMets spending, K = 5 equal looks, two-sided 0.05 (e.g. Reboussin et al., ld98 / R ldbounds, gsDesign)
    ("obrien_fleming", (4.877, 3.357, 2.680, 2.290, 2.031)),
    ("pocock", (2.438, 2.427, 2.410, 2.397, 2.386)),
])
def test_lan_demets_boundaries_match_published_values(spending: str, published: tuple[float, ...]) -> None:
    got = boundaries(EQUAL5, 0.025, spending)  # type: ignore[arg-type]
    assert got == pytest.approx(published, abs=1.5e-3)


@pytest.mark.parametrize("spending", ["pocock", "obrien_fleming"])
def test_monte_carlo_crossings_match_the_spending_function(spending: str) -> None:
    """A second, independent computation: simulated Brownian paths at unequal looks (a min_samples-sized first
    look, as rlgate plans them) cross each boundary with the probability the spending function gives it."""
    fractions = (0.038, 0.2, 0.3, 0.5, 0.7, 1.0)
    alpha = 0.05
    c = np.array(boundaries(fractions, alpha, spending))  # type: ignore[arg-type]
    rng = np.random.default_rng(11)
    reps = 400_000
    steps = rng.standard_normal((reps, len(fractions))) * np.sqrt(np.diff((0.0, *fractions)))
    z = np.cumsum(steps, axis=1) / np.sqrt(fractions)
    crossed = z >= c
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
    previous = 0.0
    for k, t in enumerate(fractions):
        increment = spent(t, alpha, spending) - previous  # type: ignore[arg-type]
        previous += increment
        got = float((first == k).mean())
        assert abs(got - increment) <= 4 * math.sqrt(max(increment, 1e-6) / reps) + 1e-5, (k, got, increment)
    assert abs(float((first >= 0).mean()) - alpha) <= 4 * math.sqrt(alpha / reps)


def test_the_probabilities_add_up_to_alpha_exactly_and_results_are_deterministic() -> None:
    fractions = (50 / 1319, 264 / 1319, 396 / 1319, 0.6, 1.0)
    for spending in ("pocock", "obrien_fleming"):
        b = boundaries(fractions, 0.05, spending)  # type: ignore[arg-type]
        assert sum(crossing_probabilities(b, fractions)) == pytest.approx(0.05, abs=1e-6)
        boundaries.cache_clear()
        assert boundaries(fractions, 0.05, spending) == b  # type: ignore[arg-type]
    pocock = boundaries(fractions, 0.05, "pocock")
    obf = boundaries(fractions, 0.05, "obrien_fleming")
    assert obf[0] > pocock[0] and obf[-1] < pocock[-1]  # OBF spends late, Pocock early
    assert obf[-1] > 1.6449  # any interim look costs the final look something
    assert all(1.6449 < c < 3.0 for c in pocock)  # each look's nominal level is below alpha, none absurdly so


def test_a_look_that_spends_nothing_has_no_boundary() -> None:
    b = boundaries((0.001, 1.0), 0.05, "obrien_fleming")  # 2 - 2 Phi(1.96 / 0.0316) ~ 0
    assert b[0] == math.inf and b[1] == pytest.approx(1.6449, abs=1e-3)


def test_power_under_drift_grows_with_the_effect() -> None:
    b = boundaries(EQUAL5, 0.05, "pocock")
    assert sum(crossing_probabilities(b, EQUAL5, drift=0.0)) == pytest.approx(0.05, abs=1e-6)
    weak, strong = (sum(crossing_probabilities(b, EQUAL5, drift=d)) for d in (1.5, 3.5))
    assert 0.05 < weak < strong and strong > 0.8


@pytest.mark.parametrize("fractions", [(0.5, 0.5, 1.0), (0.6, 0.4), (0.0, 1.0), (0.5, 1.2), ()])
def test_bad_fractions_are_refused(fractions: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="information fractions"):
        boundaries(fractions, 0.05, "pocock")


def test_bad_spending_and_alpha_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown spending"):
        spent(0.5, 0.05, "linear")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        boundaries((1.0,), 1.5, "pocock")
