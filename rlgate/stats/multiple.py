"""Multiple-testing correction across a gate family."""

from __future__ import annotations

from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1), in input order.

    Rejecting where adjusted p < alpha controls the family-wise error rate at alpha, with more
    power than plain Bonferroni. NaN p-values stay NaN and do not count toward the family size.
    """
    indexed = [(p, i) for i, p in enumerate(p_values) if p == p]  # drop NaN
    m = len(indexed)
    out = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
