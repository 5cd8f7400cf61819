"""The judge's arithmetic: win rate under a tie policy, Wilson interval, sign test, agreement with humans.

Pure functions on counts; scipy is imported only inside the sign test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from rlgate.judge.policy import TiePolicy
from rlgate.judge.report import WinRate


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion; half-counted ties make `successes` fractional."""
    if n <= 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def sign_test(wins: int, n: int) -> tuple[float, float, float] | None:
    """Exact binomial sign test against 50 %: (two-sided, greater, less) p-values."""
    if n <= 0:
        return None
    from scipy.stats import binomtest

    return (float(binomtest(wins, n, 0.5, alternative="two-sided").pvalue),
            float(binomtest(wins, n, 0.5, alternative="greater").pvalue),
            float(binomtest(wins, n, 0.5, alternative="less").pvalue))


def win_rate(wins: int, losses: int, ties: int, errors: int, policy: TiePolicy,
             level: float = 0.95) -> WinRate:
    """Candidate-vs-baseline win rate. Tolerated errors count as losses: an error is never a win.

    count_as_half: (W + T/2) / (W + L + T); exclude: W / (W + L); count_as_loss: W / (W + L + T).
    The sign test uses the decisive comparisons (ties carry no direction), except under count_as_loss,
    where a tie is a loss.
    """
    losses_all = losses + errors
    if policy == "count_as_half":
        successes, n = wins + ties / 2, wins + losses_all + ties
        test_n = wins + losses_all
    elif policy == "exclude":
        successes, n = float(wins), wins + losses_all
        test_n = wins + losses_all
    else:
        successes, n = float(wins), wins + losses_all + ties
        test_n = n
    p = sign_test(wins, test_n)
    return WinRate(
        wins=wins, losses=losses, ties=ties, errors=errors, tie_policy=policy, n=n, successes=successes,
        win_rate=successes / n if n else None, ci=wilson_interval(successes, n, level), ci_level=level,
        p_value=p[0] if p else None, p_greater=p[1] if p else None, p_less=p[2] if p else None,
        sign_test_n=test_n,
    )


def cohen_kappa(human: Sequence[str], judge: Sequence[str]) -> float | None:
    """Cohen's kappa between two label sequences (None when undefined: no items or one label only)."""
    if not human or len(human) != len(judge):
        return None
    n = len(human)
    labels = sorted(set(human) | set(judge))
    observed = sum(h == j for h, j in zip(human, judge, strict=True)) / n
    expected = sum((human.count(label) / n) * (judge.count(label) / n) for label in labels)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)
