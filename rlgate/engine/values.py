"""Per-sample metric values as numpy arrays, for a leaf task or a group (leaves concatenated).

A group's mean over all its documents is lm-eval's size-weighted group score. Per-instruction
metrics (lists per document, e.g. IFEval inst_level_*) become per-document sums divided by the mean
list length, so their mean is lm-eval's micro average and paired tests stay per document.
`pass@k` / `maj@k` come from the per-response answers rlgate derives when n > 1, unless the task
reports them itself.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from dataclasses import dataclass

import numpy as np

from rlgate.results.models import MetricKey, RunResult, SampleRecord, TaskResult
from rlgate.stats.passk import maj_at_k, pass_at_k

_AT_K = re.compile(r"^(?P<kind>pass|maj)@(?P<k>\d+)$")
_EMPTY: dict[str, float] = {}


def _slow_value(sample: SampleRecord, metric: str, filt: str) -> tuple[float, float]:
    """(value or sum, count) of one sample; NaN value when the sample lacks the metric."""
    raw = sample.scores.get(filt, _EMPTY).get(metric)
    if raw is None:
        match = _AT_K.match(metric)
        per = (sample.extra.get("per_response") or {}).get(filt)
        if match and per:
            k = int(match["k"])
            correct = per["correct"]
            if len(correct) < k:
                return (math.nan, 0.0)
            if not all(math.isfinite(v) for v in correct):  # a NaN epoch verdict: corrupt, never a count
                raise ValueError(f"document {sample.doc_id} has a non-finite per-response verdict under '{filt}' "
                                 f"({correct}); its run's scores are corrupt: re-score it")
            if match["kind"] == "pass":
                return (pass_at_k(len(correct), round(sum(correct)), k), 1.0)
            return (maj_at_k(per["answers"], correct, k), 1.0)
        return (math.nan, 0.0)
    if isinstance(raw, list):
        total = float(sum(raw)) if raw else math.nan
        return (total, float(len(raw))) if math.isfinite(total) else (math.nan, 0.0)
    value = float(raw)
    return (value, 1.0) if math.isfinite(value) else (math.nan, 0.0)  # corrupt: listed by the engine


def leaf_values(task: TaskResult, metric: str, filt: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, counts) for every sample of a leaf task; counts is None when every value is a scalar."""
    samples = task.samples
    raw = [s.scores.get(filt, _EMPTY).get(metric) for s in samples]
    try:
        values = np.array(raw, dtype=float)  # fast path: all scalars (None -> nan)
        if values.ndim == 1 and np.isfinite(values).all():
            return values, None
    except (TypeError, ValueError):
        pass
    pairs = [_slow_value(s, metric, filt) for s in samples]
    values = np.fromiter((p[0] for p in pairs), dtype=float, count=len(pairs))
    counts = np.fromiter((p[1] for p in pairs), dtype=float, count=len(pairs))
    if np.all(counts[~np.isnan(values)] == 1.0):
        return values, None
    return values, counts


class ColumnCache:
    """Per-sample metric columns, extracted once per (task, filter) for all scalar metrics together.

    One pass over the samples fills an (n, metrics) matrix, so 20 gates on a 100,000-document run
    cost one Python loop instead of forty. Lists, pass@k / maj@k and odd values take the per-metric
    path of `leaf_values`.
    """

    def __init__(self) -> None:
        self._columns: dict[tuple[int, str], dict[str, np.ndarray]] = {}
        self._tasks: list[TaskResult] = []  # keeps the ids in the keys valid

    def values(self, task: TaskResult, metric: str, filt: str) -> tuple[np.ndarray, np.ndarray | None]:
        column = self.scalar(task, metric, filt)
        if column is not None:
            return column, None
        return leaf_values(task, metric, filt)

    def scalar(self, task: TaskResult, metric: str, filt: str) -> np.ndarray | None:
        """The metric's column when every sample holds a finite number for it (in sample order), else None."""
        key = (id(task), filt)
        if key not in self._columns:
            self._columns[key] = _scalar_columns(task, filt)
            self._tasks.append(task)
        return self._columns[key].get(metric)


def _scalar_columns(task: TaskResult, filt: str) -> dict[str, np.ndarray]:
    if not task.samples:
        return {}
    dicts = [s.scores.get(filt, _EMPTY) for s in task.samples]
    names = sorted({m for m, v in dicts[0].items() if not isinstance(v, list)} | set(task.metrics.get(filt, {})))
    if not names:
        return {}
    getter = operator.itemgetter(*names) if len(names) > 1 else (lambda d: (d[names[0]],))
    try:
        try:  # fast path: every sample has every metric (itemgetter runs in C)
            flat = itertools.chain.from_iterable(map(getter, dicts))
            matrix = np.fromiter(flat, dtype=float, count=len(dicts) * len(names)).reshape(len(dicts), len(names))
        except KeyError:
            matrix = np.array([[d.get(m) for m in names] for d in dicts], dtype=float)
    except (TypeError, ValueError):
        return {}
    if matrix.ndim != 2:
        return {}
    # a column with gaps (or a non-finite value) may hide list values or pass@k; those go the per-metric way
    return {m: matrix[:, j] for j, m in enumerate(names) if np.isfinite(matrix[:, j]).all()}


def per_document(values: np.ndarray, counts: np.ndarray | None, mean_count: float | None = None) -> np.ndarray:
    """Per-document values whose mean is the micro average (sums / mean list length)."""
    if counts is None:
        return values
    ok = ~np.isnan(values)
    scale = mean_count if mean_count else (float(counts[ok].mean()) if ok.any() else 1.0)
    return values / scale


@dataclass
class Values:
    """A metric's per-sample values for one run, or its reported aggregate when samples are absent."""

    values: np.ndarray | None
    aggregate: float | None
    stderr: float | None
    n: int


def run_values(run: RunResult, key: MetricKey, cache: ColumnCache | None = None) -> Values | None:
    """All per-sample values of `key` in `run` (a leaf or a group); None when the run lacks the task."""
    leaves = run.leaves(key.task)
    if not leaves:
        return None
    tasks = [run.tasks[leaf] for leaf in leaves]
    if all(t.samples for t in tasks):
        cache = cache or ColumnCache()
        arrays = [per_document(*cache.values(t, key.metric, key.filter)) for t in tasks]
        values = np.concatenate(arrays) if arrays else np.empty(0)
        ok = values[~np.isnan(values)]
        if ok.size == 0:
            return Values(None, None, None, 0)
        stderr = float(ok.std(ddof=1) / math.sqrt(ok.size)) if ok.size > 1 else None
        return Values(values, float(ok.mean()), stderr, int(ok.size))
    return _aggregate(run, key, tasks)


def _aggregate(run: RunResult, key: MetricKey, tasks: list[TaskResult]) -> Values:
    """lm-eval's reported value and stderr (size-weighted / pooled across a group's leaves)."""
    if key.task in run.tasks:
        task = run.tasks[key.task]
        stderr = task.stderr.get(key.filter, {}).get(key.metric)
        return Values(None, task.value(key.metric, key.filter), stderr, task.n_samples)
    values, errors, sizes = [], [], []
    for task in tasks:
        value = task.value(key.metric, key.filter)
        if value is not None:
            values.append(value)
            sizes.append(task.n_samples)
            errors.append(task.stderr.get(key.filter, {}).get(key.metric))
    reported = run.group_metrics.get(key.task, {}).get(key.filter, {}).get(key.metric)
    total = sum(sizes)
    if not values or total == 0:
        return Values(None, reported, None, 0)
    mean = reported if reported is not None else sum(v * s for v, s in zip(values, sizes, strict=True)) / total
    stderr = None
    known = [e for e in errors if e is not None]
    if len(known) == len(errors) and total > len(sizes):
        pooled = sum((s - 1) * e * e * s for s, e in zip(sizes, known, strict=True)) / (total - len(sizes))
        stderr = math.sqrt(pooled / total)
    return Values(None, mean, stderr, total)


def paired_values(base: RunResult, cand: RunResult, key: MetricKey, leaves: list[str],
                  pairs: dict[str, tuple[np.ndarray, np.ndarray]],
                  cache: ColumnCache | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Paired (baseline, candidate) per-document values over the leaves; third item: pairs lacking a value."""
    b, c, ok = paired_rows(base, cand, key, leaves, pairs, cache)
    return b[ok], c[ok], int((~ok).sum())


def paired_rows(base: RunResult, cand: RunResult, key: MetricKey, leaves: list[str],
                pairs: dict[str, tuple[np.ndarray, np.ndarray]],
                cache: ColumnCache | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair's (baseline, candidate) value over the leaves, NaN kept, and the mask of pairs with both."""
    cache = cache or ColumnCache()
    b_parts, c_parts = [], []
    for leaf in leaves:
        bi, ci = pairs[leaf]
        bv, bc = cache.values(base.tasks[leaf], key.metric, key.filter)
        cv, cc = cache.values(cand.tasks[leaf], key.metric, key.filter)
        bv, cv = bv[bi], cv[ci]
        if bc is not None or cc is not None:
            bc = bc[bi] if bc is not None else np.ones_like(bv)
            cc = cc[ci] if cc is not None else np.ones_like(cv)
            both = ~np.isnan(bv) & ~np.isnan(cv)
            bv = per_document(bv, bc, float(bc[both].mean()) if both.any() else 1.0)
            cv = per_document(cv, cc, float(cc[both].mean()) if both.any() else 1.0)
        b_parts.append(bv)
        c_parts.append(cv)
    b = np.concatenate(b_parts) if b_parts else np.empty(0)
    c = np.concatenate(c_parts) if c_parts else np.empty(0)
    return b, c, ~np.isnan(b) & ~np.isnan(c)


def is_binary(*arrays: np.ndarray) -> bool:
    """All values are 0 or 1 (accuracy-like): exact McNemar and the count bootstrap apply."""
    return all(bool(np.all((a == 0.0) | (a == 1.0))) for a in arrays)
