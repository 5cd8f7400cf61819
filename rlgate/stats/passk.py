"""pass@k (unbiased estimator) and maj@k for documents with n sampled responses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k) for c correct of n samples.

    Unbiased for the probability that at least one of k fresh samples is correct; needs n >= k.
    """
    if k < 1 or n < k:
        raise ValueError(f"pass@{k} needs at least {k} responses per document, got {n}")
    if not 0 <= c <= n:
        raise ValueError("c must be between 0 and n")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def maj_at_k(answers: Sequence[str], correct: Sequence[float], k: int) -> float:
    """1.0 if the most frequent of the first k extracted answers is correct (ties: first seen).

    Mirrors lm-eval's majority_vote filter (Counter.most_common), so `[invalid]` can win a vote.
    """
    if k < 1 or len(answers) < k:
        raise ValueError(f"maj@{k} needs at least {k} responses per document, got {len(answers)}")
    first = list(answers[:k])
    winner = Counter(first).most_common(1)[0][0]
    return float(correct[first.index(winner)])
