"""Robust trend estimates for noisy training curves.

RL curves are noisy step to step, so no rule compares single points. A change is the difference of
the medians of the first and last windows, judged against the noise in those windows (a robust z),
and confirmed by Spearman's rank correlation of step and value over at most `bins` bin medians, so a
flat noisy curve never looks like a trend. Everything is vectorised: a million points cost milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlgate.monitor.series import Series

MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class Windows:
    """How many points form the first and last windows: `fraction` of the series, at least `min_points`."""

    fraction: float = 0.1
    min_points: int = 5
    bins: int = 200

    def size(self, n: int) -> int:
        return max(1, min(n, max(self.min_points, round(self.fraction * n))))


@dataclass(frozen=True)
class Change:
    """First-window vs last-window comparison of one series."""

    first: float
    last: float
    delta: float
    z: float
    rho: float
    first_steps: tuple[int, int]
    last_steps: tuple[int, int]

    @property
    def ratio(self) -> float:
        """last / first (inf when first is 0 and last is not)."""
        if self.first == 0:
            return float("inf") if self.last != 0 else 1.0
        return self.last / self.first

    def rising(self, min_delta: float, min_z: float = 3.0, min_rho: float = 0.3) -> bool:
        return self.delta >= min_delta and self.z >= min_z and self.rho >= min_rho

    def falling(self, min_delta: float, min_z: float = 3.0, min_rho: float = 0.3) -> bool:
        return -self.delta >= min_delta and -self.z >= min_z and -self.rho >= min_rho


def mad(values: np.ndarray) -> float:
    if values.size == 0:
        return 0.0
    return float(np.median(np.abs(values - np.median(values))))


def bin_medians(series: Series, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(step, median value) per bin of consecutive points; the series itself when it is short."""
    n = len(series)
    if n <= bins:
        return series.steps.astype(np.float64), series.values
    per = n // bins
    used = per * bins
    # The remainder joins the last bin's neighbour region by dropping from the front (keeps the recent end).
    steps = series.steps[n - used:].reshape(bins, per)
    values = series.values[n - used:].reshape(bins, per)
    return np.median(steps, axis=1), np.median(values, axis=1)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho, 0.0 when undefined (constant input or fewer than 3 points)."""
    if x.size < 3 or np.all(y == y[0]) or np.all(x == x[0]):
        return 0.0
    from scipy.stats import spearmanr

    rho = float(spearmanr(x, y).statistic)
    return 0.0 if np.isnan(rho) else rho


def change(series: Series, windows: Windows) -> Change | None:
    """Compare the first and last windows of the finite points; None with fewer than 2 points."""
    s = series.finite()
    n = len(s)
    if n < 2:
        return None
    w = windows.size(n)
    if 2 * w > n:
        w = max(1, n // 2)
    head, tail = s.values[:w], s.values[n - w:]
    first, last = float(np.median(head)), float(np.median(tail))
    noise = MAD_TO_SD * np.hypot(mad(head), mad(tail)) * np.sqrt(np.pi / 2.0) / np.sqrt(w)
    delta = last - first
    z = delta / noise if noise > 0 else (float(np.sign(delta)) * float("inf") if delta else 0.0)
    xs, ys = bin_medians(s, windows.bins)
    return Change(first, last, delta, float(z), spearman(xs, ys),
                  (int(s.steps[0]), int(s.steps[w - 1])), (int(s.steps[n - w]), int(s.steps[-1])))


def last_window(series: Series, windows: Windows) -> tuple[float, tuple[int, int]]:
    """Median of the last window of finite points and its step range."""
    s = series.finite()
    w = windows.size(len(s))
    return float(np.median(s.values[-w:])), (int(s.steps[-w]), int(s.steps[-1]))


def neighbour_block_medians(values: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the medians of the full `block`-point blocks just before and just after its own.

    Block medians instead of a sliding median keep this O(n) for million-point logs; the references a
    point is compared with never include the point, so a spike cannot hide itself. NaN where no
    neighbour block exists; a partial tail counts as part of the last full block.
    """
    n = values.size
    before = np.full(n, np.nan)
    after = np.full(n, np.nan)
    full = n // block
    if full < 2:
        return before, after
    medians = np.nanmedian(values[: full * block].reshape(full, block), axis=1)
    own = np.minimum(np.arange(n) // block, full - 1)
    has_before, has_after = own >= 1, own + 1 < full
    before[has_before] = medians[own[has_before] - 1]
    after[has_after] = medians[own[has_after] + 1]
    return before, after


def surrounding_block_medians(values: np.ndarray, block: int) -> np.ndarray:
    """The larger of the neighbouring block medians: a spike stands out against both, a climb does not."""
    before, after = neighbour_block_medians(values, block)
    return np.fmax(before, after)


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) index pairs, inclusive, of consecutive True values."""
    if mask.size == 0:
        return []
    padded = np.concatenate([[False], mask.astype(bool), [False]])
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True)]
