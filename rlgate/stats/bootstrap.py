"""Seeded, vectorised paired bootstrap of the mean difference candidate - baseline.

Binary outcomes: a resample's delta depends only on how many discordant pairs it draws of each
kind, so instead of resampling n indices B times we draw those counts directly. The discordant
total is Binomial(n, p_disc) and the candidate-better share of it is Binomial(D*, n10 / (n10 + n01)),
which is exactly the multinomial the index resampling induces; cost O(B), not O(n B).
Continuous outcomes: chunked index resampling (exact) up to a work budget; beyond it the bootstrap
distribution of a mean is normal to within its skewness, skew(d) / sqrt(n), which is checked and
reported, and the interval is the normal one. Where it is too skewed for that (a difference that is
zero but for a handful of pairs), a difference with few distinct values is resampled as counts of each
value (the multinomial the index draws induce, as for binary outcomes); only many distinct values and
a large skew pay for n x B index draws.
"""

from __future__ import annotations

import math

import numpy as np

#: Index draws (n x resamples) above which the continuous bootstrap uses the normal limit.
CONTINUOUS_BUDGET = 20_000_000
#: Largest skewness of the bootstrap mean for which the normal limit is used instead.
MAX_MEAN_SKEW = 0.1


def bootstrap_paired_binary(n_better: np.ndarray | int, n_worse: np.ndarray | int, n: np.ndarray | int,
                            resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap deltas (n10* - n01*) / n for paired 0/1 outcomes.

    Arguments may be arrays of shape (m,) to bootstrap m metrics at once: the result is (m, B);
    scalars give shape (B,).
    """
    better = np.asarray(n_better, dtype=np.int64)
    worse = np.asarray(n_worse, dtype=np.int64)
    total = np.asarray(n, dtype=np.int64)
    scalar = better.ndim == 0
    better, worse, total = (np.atleast_1d(a)[:, None] for a in (better, worse, total))
    discordant = better + worse
    if np.any(total <= 0) or np.any(discordant > total):
        raise ValueError("need 0 <= n10 + n01 <= n and n > 0")
    p_disc = discordant / total
    share = np.divide(better, discordant, out=np.zeros(discordant.shape), where=discordant > 0)
    shape = (better.shape[0], resamples)
    d_star = rng.binomial(np.broadcast_to(total, shape), np.broadcast_to(p_disc, shape))
    better_star = rng.binomial(d_star, np.broadcast_to(share, shape))
    deltas = (2 * better_star - d_star) / total
    return deltas[0] if scalar else deltas


def bootstrap_paired_mean(differences: np.ndarray, resamples: int, rng: np.random.Generator,
                          budget: int = CONTINUOUS_BUDGET) -> tuple[np.ndarray | None, str]:
    """Bootstrap means of paired differences: (deltas or None, method description).

    Returns None with method "normal" when n x resamples exceeds `budget` and the bootstrap mean's
    skewness is below MAX_MEAN_SKEW: then the normal interval equals the bootstrap's to within that
    skewness and the caller uses it.
    """
    d = np.asarray(differences, dtype=float)
    n = d.size
    if n == 0:
        raise ValueError("no paired differences")
    if n * resamples > budget:
        sd = float(d.std())
        skew = 0.0 if sd == 0 else float(np.mean((d - d.mean()) ** 3) / sd**3) / math.sqrt(n)
        if abs(skew) <= MAX_MEAN_SKEW:
            return None, f"normal limit of the bootstrap (n={n}, mean skewness {skew:+.3f})"
        values, counts = np.unique(d, return_counts=True)
        if values.size * resamples <= budget:  # few distinct values (a skewed, mostly-zero difference)
            return _by_value_counts(values, counts, n, resamples, rng), \
                f"paired bootstrap ({resamples} resamples, drawn as counts of the {values.size} distinct differences)"
    out = np.empty(resamples)
    chunk = max(1, min(resamples, 4_000_000 // max(n, 1)))
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = d[idx].mean(axis=1)
    return out, f"paired bootstrap ({resamples} resamples)"


def _by_value_counts(values: np.ndarray, counts: np.ndarray, n: int, resamples: int, rng: np.random.Generator
                     ) -> np.ndarray:
    """Bootstrap means drawn as how often each distinct difference is resampled: n index draws give the
    counts Multinomial(n, counts / n), so this is the index bootstrap's distribution exactly, in
    O(resamples x distinct values) rather than O(resamples x n) (10^10 draws at 10^6 pairs)."""
    draws = rng.multinomial(n, counts / n, size=resamples)
    return np.asarray(draws @ values / n, dtype=float)


def percentile_interval(deltas: np.ndarray, level: float) -> tuple[float, float] | np.ndarray:
    """Two-sided percentile interval at `level` along the last axis."""
    tail = (1.0 - level) / 2
    q = np.quantile(deltas, [tail, 1.0 - tail], axis=-1)
    if q.ndim == 1:
        return (float(q[0]), float(q[1]))
    return q.T


def exact_binary_interval(n_better: int, n_worse: int, n: int, level: float) -> tuple[float, float]:
    """The percentile interval `bootstrap_paired_binary` estimates, computed exactly (infinitely many resamples).

    A resample's delta is (N10* - N01*) / n with (N10*, N01*, rest) multinomial, i.e. a sum of n independent
    steps +1 / -1 / 0 with the observed shares; its distribution is the n-th power of one step's generating
    function (by FFT). No Monte-Carlo error, so a decision on this bound never depends on the seed; the
    percentile interval of B resamples converges to it as B grows.
    """
    if n <= 0 or n_better < 0 or n_worse < 0 or n_better + n_worse > n:
        raise ValueError("need 0 <= n10 + n01 <= n and n > 0")
    if n_better + n_worse == 0:
        return (0.0, 0.0)
    size = 1 << (2 * n).bit_length()  # a power of two > 2n: the sum's 2n + 1 values fit
    step = np.zeros(size)
    step[0] = (n - n_better - n_worse) / n
    step[1] = n_better / n
    step[-1] = n_worse / n  # index -1: a step of -1 (circular; the n-fold sum spans -n..n < size)
    pmf = np.fft.irfft(np.fft.rfft(step) ** n, size)
    values = np.concatenate([pmf[size - n:], pmf[:n + 1]])  # X = -n .. n
    cdf = np.cumsum(np.clip(values, 0.0, None))
    cdf /= cdf[-1]
    tail = (1.0 - level) / 2
    eps = 1e-9  # FFT rounding: a cdf within 1e-9 of the tail counts as reaching it
    lo = int(np.searchsorted(cdf, tail - eps, side="left")) - n
    hi = int(np.searchsorted(cdf, 1.0 - tail - eps, side="left")) - n
    return (lo / n, hi / n)
