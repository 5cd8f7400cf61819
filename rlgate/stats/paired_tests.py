"""Paired significance tests: exact McNemar for binary outcomes, paired t and Wilcoxon otherwise.

Every function returns a p-value for one alternative: "greater" (candidate better, i.e. the
paired differences are positive), "less", or "two-sided". Degenerate inputs (no discordant pairs,
zero variance) get the p-value their evidence supports instead of NaN or an exception.

McNemar's binomial tail and the normal approximations come from rlgate.stats.distributions (exact
integer arithmetic and the standard library: scipy.special's import alone costs more than deciding a
12,000-document run); the paired t-test takes Student's t from scipy.special (what scipy.stats.t calls,
without importing scipy.stats). Wilcoxon uses scipy.stats' exact distribution for n <= 50 and the
tie-corrected normal approximation (scipy's own choice) above; the tests check all three against scipy.stats.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from rlgate.stats.distributions import fair_coin_cdf, normal_cdf

Alternative = Literal["greater", "less", "two-sided"]
_EXACT_WILCOXON_MAX_N = 50


def _binom_tails(k: int, n: int) -> tuple[float, float]:
    """(P(X >= k), P(X <= k)) for X ~ Binomial(n, 1/2); P(X >= k) = P(X <= n - k) by symmetry."""
    upper = 1.0 if k <= 0 else fair_coin_cdf(n - k, n)
    return upper, fair_coin_cdf(k, n)


def mcnemar_exact(n_better: int, n_worse: int, alternative: Alternative = "two-sided") -> float:
    """Exact McNemar test: a binomial test of n_better among the discordant pairs at p = 0.5.

    `n_better` counts pairs where only the candidate is right, `n_worse` where only the baseline is.
    Equals scipy.stats.binomtest(n_better, n_better + n_worse, 0.5, alternative).pvalue.
    """
    discordant = int(n_better) + int(n_worse)
    if discordant == 0:
        return 1.0
    if alternative == "two-sided":
        # Binomial(n, 1/2) is symmetric, so the smaller tail is P(X <= min(better, worse)); computing it
        # one way keeps the p-value identical when baseline and candidate swap places.
        return min(1.0, 2.0 * fair_coin_cdf(min(int(n_better), int(n_worse)), discordant))
    upper, lower = _binom_tails(int(n_better), discordant)
    return upper if alternative == "greater" else lower


def paired_t(differences: np.ndarray, alternative: Alternative = "two-sided") -> tuple[float, float]:
    """Paired t-test on candidate - baseline differences: (t statistic, p-value)."""
    d = np.asarray(differences, dtype=float)
    n = d.size
    if n < 2:
        return (float("nan"), 1.0)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        if mean == 0.0:
            return (0.0, 1.0)
        wins = (alternative == "greater" and mean > 0) or (alternative == "less" and mean < 0)
        return (math.copysign(math.inf, mean), 0.0 if wins or alternative == "two-sided" else 1.0)
    stat = mean / (sd / math.sqrt(n))
    from scipy.special import stdtr  # only here: constant differences (above) need no distribution

    if alternative == "greater":
        p = float(stdtr(n - 1, -stat))
    elif alternative == "less":
        p = float(stdtr(n - 1, stat))
    else:
        p = float(2 * stdtr(n - 1, -abs(stat)))
    return (stat, min(1.0, p))


def wilcoxon_signed_rank(differences: np.ndarray, alternative: Alternative = "two-sided") -> float:
    """Wilcoxon signed-rank test p-value (zero differences dropped); 1.0 when all are zero."""
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 1.0
    if n <= _EXACT_WILCOXON_MAX_N:
        from scipy.stats import wilcoxon

        return float(wilcoxon(d, alternative=alternative, zero_method="wilcox").pvalue)

    _, inverse, counts = np.unique(np.abs(d), return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]
    r_plus = float(ranks[d > 0].sum())
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(counts**3 - counts)) / 48.0
    if var <= 0:
        return 1.0
    z = (r_plus - mean) / math.sqrt(var)
    if alternative == "greater":
        return normal_cdf(-z)
    if alternative == "less":
        return normal_cdf(z)
    return min(1.0, 2 * normal_cdf(-abs(z)))


#: Nonzero differences up to which `signed_rank_exact` enumerates the exact distribution (beyond: normal).
EXACT_SIGNED_RANK_MAX_N = 400


def signed_rank_exact(differences: np.ndarray, alternative: Alternative = "two-sided") -> float:
    """Wilcoxon signed-rank p-value from the exact sign-flip distribution, ties mid-ranked, zeros dropped.

    Valid for any paired differences (per-sample means of rates included) under the null that the two
    runs are exchangeable within a sample: the distribution of the signed-rank sum is enumerated over
    all 2^n sign patterns of the observed mid-ranks (dynamic programming on doubled ranks, so ties stay
    exact where scipy's exact method refuses them). With 0/1 differences every rank ties and this is the
    exact sign test, i.e. exact McNemar. Above EXACT_SIGNED_RANK_MAX_N nonzero differences, the
    tie-corrected normal approximation of `wilcoxon_signed_rank`.
    """
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 1.0
    if n > EXACT_SIGNED_RANK_MAX_N:
        return wilcoxon_signed_rank(d, alternative)
    _, inverse, counts = np.unique(np.abs(d), return_inverse=True, return_counts=True)
    doubled = (2 * np.cumsum(counts) - (counts - 1))[inverse].astype(np.int64)  # 2 x mid-rank: an integer
    total = int(doubled.sum())
    pmf = np.zeros(total + 1)
    pmf[0] = 1.0
    for r in doubled.tolist():  # each rank joins the positive sum with probability 1/2
        shifted = np.zeros_like(pmf)
        shifted[r:] = pmf[:total + 1 - r]
        pmf = 0.5 * (pmf + shifted)
    observed = int(doubled[d > 0].sum())
    upper = float(pmf[observed:].sum())  # P(W+ >= observed): evidence for "greater"
    lower = float(pmf[:observed + 1].sum())
    if alternative == "greater":
        return min(1.0, upper)
    if alternative == "less":
        return min(1.0, lower)
    return min(1.0, 2 * min(upper, lower))
