"""Paired significance tests: exact McNemar for binary outcomes, paired t and Wilcoxon otherwise.

Every function returns a p-value for one alternative: "greater" (candidate better, i.e. the
paired differences are positive), "less", or "two-sided". Degenerate inputs (no discordant pairs,
zero variance) get the p-value their evidence supports instead of NaN or an exception.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

Alternative = Literal["greater", "less", "two-sided"]


def mcnemar_exact(n_better: int, n_worse: int, alternative: Alternative = "two-sided") -> float:
    """Exact McNemar test: a binomial test of n_better among the discordant pairs at p = 0.5.

    `n_better` counts pairs where only the candidate is right, `n_worse` where only the baseline is.
    """
    from scipy.stats import binomtest

    discordant = int(n_better) + int(n_worse)
    if discordant == 0:
        return 1.0
    return float(binomtest(int(n_better), discordant, 0.5, alternative=alternative).pvalue)


def paired_t(differences: np.ndarray, alternative: Alternative = "two-sided") -> tuple[float, float]:
    """Paired t-test on candidate - baseline differences: (t statistic, p-value)."""
    from scipy.stats import t as student_t

    d = np.asarray(differences, dtype=float)
    n = d.size
    if n < 2:
        return (float("nan"), 1.0)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        if mean == 0.0:
            return (0.0, 1.0)
        stat = math.copysign(math.inf, mean)
        wins = (alternative == "greater" and mean > 0) or (alternative == "less" and mean < 0)
        return (stat, 0.0 if wins or alternative == "two-sided" else 1.0)
    stat = mean / (sd / math.sqrt(n))
    if alternative == "greater":
        p = float(student_t.sf(stat, n - 1))
    elif alternative == "less":
        p = float(student_t.cdf(stat, n - 1))
    else:
        p = float(2 * student_t.sf(abs(stat), n - 1))
    return (stat, min(1.0, p))


def wilcoxon_signed_rank(differences: np.ndarray, alternative: Alternative = "two-sided") -> float:
    """Wilcoxon signed-rank test p-value (zero differences dropped); 1.0 when all are zero."""
    from scipy.stats import wilcoxon

    d = np.asarray(differences, dtype=float)
    if not np.any(d != 0):
        return 1.0
    return float(wilcoxon(d, alternative=alternative, zero_method="wilcox").pvalue)
