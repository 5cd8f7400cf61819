"""One metric, two runs: the paired delta with its interval and one-sided p-values.

0/1 outcomes: exact McNemar p-values and the count bootstrap interval. Other values: paired t
p-values (Wilcoxon reported beside them) and the index bootstrap interval (or its normal limit for
large n). Without per-sample results, an unpaired z-test on lm-eval's reported stderrs, flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlgate.stats.bootstrap import bootstrap_paired_binary, bootstrap_paired_mean, percentile_interval
from rlgate.stats.distributions import normal_cdf, normal_quantile
from rlgate.stats.paired_tests import mcnemar_exact, paired_t, signed_rank_exact, wilcoxon_signed_rank


@dataclass
class Comparison:
    """Candidate minus baseline for one metric; p_greater is for 'candidate higher'."""

    n: int
    binary: bool
    baseline: float
    candidate: float
    delta: float
    ci: tuple[float, float]
    ci_level: float
    p_greater: float
    p_less: float
    p_two_sided: float
    test: str
    paired: bool = True
    discordant_rate: float = 0.0
    sd_difference: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


def compare_paired(baseline: np.ndarray, candidate: np.ndarray, *, binary: bool, level: float, resamples: int,
                   rng: np.random.Generator, clustered: bool = False) -> Comparison:
    """Paired comparison of per-document values (same order, no NaN).

    `clustered`: the values are per-sample means over epochs (rlgate.engine.units); binary ones (every epoch
    agreed) still take exact McNemar over samples, the others the exact signed-rank test over samples.
    """
    n = int(baseline.size)
    if n == 0:
        raise ValueError("no paired documents")
    diff = candidate - baseline
    delta = float(diff.mean())
    if binary:
        better = int(np.count_nonzero(diff > 0))
        worse = int(np.count_nonzero(diff < 0))
        deltas = bootstrap_paired_binary(better, worse, n, resamples, rng)
        ci = percentile_interval(deltas, level)
        return Comparison(
            n=n, binary=True, baseline=float(baseline.mean()), candidate=float(candidate.mean()), delta=delta,
            ci=(float(ci[0]), float(ci[1])), ci_level=level,
            p_greater=mcnemar_exact(better, worse, "greater"), p_less=mcnemar_exact(better, worse, "less"),
            p_two_sided=mcnemar_exact(better, worse, "two-sided"),
            test=(f"exact McNemar{' over samples (epochs agreed)' if clustered else ''}; paired bootstrap CI "
                  f"({resamples} resamples)"),
            discordant_rate=(better + worse) / n,
            details={"candidate_only_right": better, "baseline_only_right": worse},
        )
    sd = float(diff.std(ddof=1)) if n > 1 else 0.0
    if clustered:
        return _compare_sample_means(baseline, candidate, diff, sd, level, resamples, rng)
    boot, method = bootstrap_paired_mean(diff, resamples, rng)
    if boot is None:
        z = normal_quantile(0.5 + level / 2)
        half = z * sd / math.sqrt(n)
        ci = (delta - half, delta + half)
    else:
        lo, hi = percentile_interval(boot, level)
        ci = (float(lo), float(hi))
    _, p_greater = paired_t(diff, "greater")
    _, p_less = paired_t(diff, "less")
    _, p_two = paired_t(diff, "two-sided")
    return Comparison(
        n=n, binary=False, baseline=float(baseline.mean()), candidate=float(candidate.mean()), delta=delta,
        ci=ci, ci_level=level, p_greater=p_greater, p_less=p_less, p_two_sided=p_two,
        test=f"paired t; CI: {method}", sd_difference=sd,
        details={"wilcoxon_p_two_sided": wilcoxon_signed_rank(diff, "two-sided")},
    )


def _interval(diff: np.ndarray, sd: float, level: float, resamples: int, rng: np.random.Generator
              ) -> tuple[tuple[float, float], str]:
    """The delta's two-sided interval: the paired bootstrap, or its normal limit for large n."""
    boot, method = bootstrap_paired_mean(diff, resamples, rng)
    if boot is None:
        half = normal_quantile(0.5 + level / 2) * sd / math.sqrt(diff.size)
        delta = float(diff.mean())
        return (delta - half, delta + half), method
    lo, hi = percentile_interval(boot, level)
    return (float(lo), float(hi)), method


def _compare_sample_means(baseline: np.ndarray, candidate: np.ndarray, diff: np.ndarray, sd: float, level: float,
                          resamples: int, rng: np.random.Generator) -> Comparison:
    """Per-sample means of several epochs: the exact signed-rank test over samples (valid for bounded means, where
    the paired t-test's normal limit overstates a handful of discordant samples), the bootstrap over samples."""
    ci, method = _interval(diff, sd, level, resamples, rng)
    return Comparison(
        n=int(diff.size), binary=False, baseline=float(baseline.mean()), candidate=float(candidate.mean()),
        delta=float(diff.mean()), ci=ci, ci_level=level, p_greater=signed_rank_exact(diff, "greater"),
        p_less=signed_rank_exact(diff, "less"), p_two_sided=signed_rank_exact(diff, "two-sided"),
        test=f"exact signed-rank over samples (epochs averaged); CI: {method} over samples",
        sd_difference=sd, details={"paired_t_p_two_sided": paired_t(diff, "two-sided")[1]},
    )


def compare_unpaired(baseline: float, baseline_se: float, candidate: float, candidate_se: float, n: int, *,
                     level: float, needs: str = "per-sample results") -> Comparison:
    """Unpaired z-test from reported means and standard errors (no per-sample results logged); `needs`: what
    paired tests would need, in the harness's words (its vocabulary's `samples_option`)."""
    delta = candidate - baseline
    se = math.sqrt(baseline_se**2 + candidate_se**2)
    z = normal_quantile(0.5 + level / 2)
    if se == 0:
        p_greater = 0.0 if delta > 0 else 1.0
        p_less = 0.0 if delta < 0 else 1.0
    else:
        p_greater = normal_cdf(-delta / se)
        p_less = normal_cdf(delta / se)
    return Comparison(
        n=n, binary=False, baseline=baseline, candidate=candidate, delta=delta,
        ci=(delta - z * se, delta + z * se), ci_level=level, p_greater=p_greater, p_less=p_less,
        p_two_sided=min(1.0, 2 * min(p_greater, p_less)),
        test=f"unpaired z-test on reported stderr (no per-sample results; paired tests need {needs})",
        paired=False, sd_difference=se * math.sqrt(max(n, 1)),
        details={"standard_error": se},
    )
