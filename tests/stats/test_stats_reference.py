"""Statistics against hand-computed values and scipy.stats references."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from rlgate.stats import (
    bootstrap_paired_binary,
    bootstrap_paired_mean,
    holm,
    maj_at_k,
    mcnemar_exact,
    mde_one_sample,
    mde_paired,
    paired_t,
    pass_at_k,
    percentile_interval,
    wilcoxon_signed_rank,
    wilson_interval,
)


def test_wilson_matches_hand_computation() -> None:
    # 8 of 10 at 95%: center (0.8 + 1.96^2/20) / (1 + 1.96^2/10), classic textbook value 0.4902..0.9433
    lo, hi = wilson_interval(8, 10, 0.95)
    assert lo == pytest.approx(0.4902, abs=1e-4)
    assert hi == pytest.approx(0.9433, abs=1e-4)
    lo0, hi0 = wilson_interval(0, 50, 0.95)
    assert lo0 == 0.0 and hi0 == pytest.approx(0.0713, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("better,worse", [(0, 0), (3, 7), (10, 0), (55, 45), (640, 560), (1, 1)])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_mcnemar_equals_scipy_binomtest(better: int, worse: int, alternative: str) -> None:
    expected = 1.0 if better + worse == 0 else stats.binomtest(better, better + worse, 0.5,
                                                                alternative=alternative).pvalue
    assert mcnemar_exact(better, worse, alternative) == pytest.approx(expected, rel=1e-10)  # type: ignore[arg-type]


def test_mcnemar_hand_value() -> None:
    # 9 of 10 discordant pairs favour the candidate: P(X >= 9) = (C(10,9) + C(10,10)) / 2^10 = 11/1024
    assert mcnemar_exact(9, 1, "greater") == pytest.approx(11 / 1024)


@pytest.mark.parametrize("n", [5, 40, 400])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_paired_t_and_wilcoxon_equal_scipy(n: int, alternative: str) -> None:
    rng = np.random.default_rng(n)
    base = rng.normal(size=n)
    cand = base + rng.normal(0.15, 1.0, size=n)
    cand[: n // 5] = base[: n // 5]  # some exact ties (zero differences)
    _, p = paired_t(cand - base, alternative)  # type: ignore[arg-type]
    assert p == pytest.approx(stats.ttest_rel(cand, base, alternative=alternative).pvalue, rel=1e-9)
    d = np.round(cand - base, 1)  # ties among |d|
    expected = stats.wilcoxon(d, alternative=alternative, zero_method="wilcox").pvalue
    assert wilcoxon_signed_rank(d, alternative) == pytest.approx(expected, rel=1e-9)  # type: ignore[arg-type]


def test_degenerate_tests() -> None:
    assert paired_t(np.zeros(10), "greater") == (0.0, 1.0)
    assert paired_t(np.ones(10), "greater")[1] == 0.0
    assert paired_t(np.ones(10), "less")[1] == 1.0
    assert wilcoxon_signed_rank(np.zeros(10)) == 1.0


def test_holm_hand_example() -> None:
    # p = (0.01, 0.04, 0.03): sorted 0.01*3=0.03, 0.03*2=0.06, max(0.06, 0.04*1)=0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    out = holm([float("nan"), 0.02])
    assert math.isnan(out[0]) and out[1] == pytest.approx(0.02)
    assert holm([]) == []


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    # brute force: share of k-subsets of the n responses containing a correct one
    for n, c, k in [(5, 2, 1), (5, 2, 2), (6, 1, 3), (6, 0, 2), (4, 4, 4), (10, 3, 5)]:
        responses = [1] * c + [0] * (n - c)
        subsets = list(combinations(responses, k))
        brute = sum(1 for s in subsets if any(s)) / len(subsets)
        assert pass_at_k(n, c, k) == pytest.approx(brute)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_maj_at_k_follows_lm_eval_majority_vote() -> None:
    answers = ["7", "5", "7", "[invalid]", "5", "5"]
    correct = [1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert maj_at_k(answers, correct, 3) == 1.0  # 7 wins 2:1
    assert maj_at_k(answers, correct, 6) == 0.0  # 5 wins 3:2
    assert maj_at_k(["5", "7"], [0.0, 1.0], 2) == 0.0  # tie: first seen wins, as Counter.most_common


def test_binary_bootstrap_matches_index_resampling() -> None:
    """The count bootstrap has the same distribution as resampling pair indices."""
    rng = np.random.default_rng(0)
    n, better, worse = 400, 50, 30
    diff = np.array([1.0] * better + [-1.0] * worse + [0.0] * (n - better - worse))
    fast = bootstrap_paired_binary(better, worse, n, 20_000, np.random.default_rng(1))
    slow = np.array([diff[rng.integers(0, n, n)].mean() for _ in range(4_000)])
    assert fast.mean() == pytest.approx(diff.mean(), abs=0.002)
    assert fast.std() == pytest.approx(slow.std(), rel=0.05)
    lo, hi = percentile_interval(fast, 0.95)
    slo, shi = np.quantile(slow, [0.025, 0.975])
    assert lo == pytest.approx(slo, abs=0.006) and hi == pytest.approx(shi, abs=0.006)


def test_binary_bootstrap_vectorised_and_seeded() -> None:
    a = bootstrap_paired_binary(np.array([5, 50]), np.array([5, 10]), np.array([100, 1000]), 1000,
                                np.random.default_rng(3))
    b = bootstrap_paired_binary(np.array([5, 50]), np.array([5, 10]), np.array([100, 1000]), 1000,
                                np.random.default_rng(3))
    assert a.shape == (2, 1000) and np.array_equal(a, b)
    assert a[1].mean() == pytest.approx(0.04, abs=0.003)
    assert np.all(bootstrap_paired_binary(0, 0, 10, 100, np.random.default_rng(0)) == 0.0)


def test_continuous_bootstrap_exact_and_normal_limit() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0.5, 2.0, size=500)
    boot, method = bootstrap_paired_mean(d, 5_000, np.random.default_rng(0))
    assert boot is not None and "bootstrap" in method
    assert boot.std() == pytest.approx(d.std() / math.sqrt(d.size), rel=0.05)
    big = rng.normal(0.0, 1.0, size=50_000)
    none, method = bootstrap_paired_mean(big, 10_000, np.random.default_rng(0))
    assert none is None and method.startswith("normal")


def test_a_sparse_skewed_difference_is_resampled_as_value_counts_with_the_index_bootstraps_distribution() -> None:
    """Zero but for a handful of pairs: too skewed for the normal limit, and n x B index draws would be 10^10
    at 10^6 pairs. Drawn as counts of each distinct value, the bootstrap means have the index bootstrap's
    distribution (checked against index resampling itself on the same difference)."""
    n = 4_000
    d = np.zeros(n)
    d[:6] = [3.0, 3.0, -1.0, 7.0, 2.0, 3.0]
    counts, method = bootstrap_paired_mean(d, 20_000, np.random.default_rng(0), budget=1_000_000)
    assert counts is not None and "counts of the 5 distinct differences" in method
    index, index_method = bootstrap_paired_mean(d, 20_000, np.random.default_rng(1), budget=10**12)
    assert index is not None and "counts" not in index_method
    assert counts.mean() == pytest.approx(d.mean(), rel=0.02)
    assert counts.std() == pytest.approx(d.std() / math.sqrt(n), rel=0.03)
    assert counts.std() == pytest.approx(index.std(), rel=0.03)
    for q in (0.025, 0.5, 0.975):  # the same percentiles: a discrete distribution, so equal grid points
        assert np.quantile(counts, q) == pytest.approx(np.quantile(index, q), abs=1.5 / n)
    again, _ = bootstrap_paired_mean(d, 20_000, np.random.default_rng(0), budget=1_000_000)
    assert np.array_equal(counts, again)  # seeded


def test_mde_hand_values() -> None:
    z = stats.norm.ppf(0.95) + stats.norm.ppf(0.8)  # 1.6449 + 0.8416
    assert mde_paired(1000, 0.05, 0.8, binary=True, discordant_rate=0.2) == pytest.approx(z * math.sqrt(0.2 / 1000))
    assert mde_paired(10, 0.05, 0.8, binary=True, discordant_rate=0.0) == pytest.approx(z * z / 10)
    assert mde_paired(400, 0.05, 0.8, binary=False, sd_difference=2.0) == pytest.approx(z * 2.0 / 20)
    assert mde_one_sample(100, 0.05, 0.8, binary=True, value=0.5) == pytest.approx(z * 0.05)
    assert mde_paired(0, 0.05, 0.8, binary=True) == math.inf
