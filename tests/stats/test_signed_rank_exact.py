"""The exact signed-rank test over samples: scipy's exact Wilcoxon without ties, exact McNemar on 0/1 data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wilcoxon

from rlgate.stats.paired_tests import mcnemar_exact, signed_rank_exact


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_matches_scipy_exact_without_ties(seed: int, alternative: str) -> None:
    d = np.random.default_rng(seed).normal(0.2, 1.0, 25)
    expected = wilcoxon(d, alternative=alternative, method="exact").pvalue  # type: ignore[arg-type]
    assert signed_rank_exact(d, alternative) == pytest.approx(expected, rel=1e-9)  # type: ignore[arg-type]


@pytest.mark.parametrize(("better", "worse"), [(3, 0), (6, 2), (0, 5), (10, 10)])
def test_is_exact_mcnemar_on_binary_differences(better: int, worse: int) -> None:
    d = np.array([1.0] * better + [-1.0] * worse + [0.0] * 30)
    for alternative in ("greater", "less", "two-sided"):
        assert signed_rank_exact(d, alternative) == pytest.approx(mcnemar_exact(better, worse, alternative))


def test_ties_stay_exact_by_enumeration() -> None:
    d = np.array([0.25, 0.25, 0.5, -0.25, 0.75, 0.5])  # epoch means: many ties
    signs = np.array(np.meshgrid(*[[-1, 1]] * d.size)).reshape(d.size, -1).T
    ranks = np.array([2.0, 2.0, 4.5, 2.0, 6.0, 4.5])  # mid-ranks of |d|
    stats = (signs > 0) @ ranks
    observed = ranks[d > 0].sum()
    assert signed_rank_exact(d, "greater") == pytest.approx(float(np.mean(stats >= observed - 1e-12)))
    assert signed_rank_exact(np.zeros(5), "greater") == 1.0
