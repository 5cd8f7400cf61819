"""The judge's arithmetic: win rate under a tie policy, Wilson interval, sign test, agreement with humans.

Pure functions on counts; the interval and the exact binomial test come from rlgate.stats.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlgate.contract.judge_policy import TiePolicy
from rlgate.judge.report import WinRate
from rlgate.stats.intervals import wilson_interval as stats_wilson
from rlgate.stats.paired_tests import mcnemar_exact


def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of the win rate (None without judged items); half-counted ties make
    `successes` fractional. The arithmetic is rlgate.stats' shared Wilson interval."""
    if n <= 0:
        return None
    return stats_wilson(successes, int(n), level)


def sign_test(wins: int, n: int) -> tuple[float, float, float] | None:
    """Exact binomial sign test against 50 %: (two-sided, greater, less) p-values."""
    if n <= 0:
        return None
    losses = n - wins
    return (mcnemar_exact(wins, losses, "two-sided"), mcnemar_exact(wins, losses, "greater"),
            mcnemar_exact(wins, losses, "less"))


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
