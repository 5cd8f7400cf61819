"""The canonical time-series model every reader produces.

Readers stream a log into a `SeriesBuilder` (compact per-key buffers, no per-point Python objects
kept), and `build()` turns it into a `TrainingLog`: numpy arrays per metric, keys mapped onto the
canonical vocabulary, unknown keys kept under their own names, and the problems met while reading.
A problem (a corrupt or truncated line) never discards what was read around it.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rlgate._core.errors import InputError
from rlgate.monitor.vocabulary import BOOKKEEPING_PREFIXES, DERIVED, VAL_PREFIX, classify


@dataclass(frozen=True)
class Series:
    """One metric over training steps: steps strictly increasing, values as logged (NaN/Inf kept)."""

    name: str
    source_key: str
    steps: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return int(self.steps.size)

    @property
    def first_step(self) -> int:
        return int(self.steps[0])

    @property
    def last_step(self) -> int:
        return int(self.steps[-1])

    def finite(self) -> Series:
        """The points whose value is a finite number (rules judge trends on these)."""
        ok = np.isfinite(self.values)
        if ok.all():
            return self
        return Series(self.name, self.source_key, self.steps[ok], self.values[ok])


@dataclass(frozen=True)
class ReadProblem:
    """A part of a log that could not be read; everything else was kept."""

    file: str
    message: str
    line: int | None = None
    column: int | None = None
    record: int | None = None
    fix: str | None = None

    def to_error(self) -> InputError:
        field_name = f"record {self.record}" if self.record is not None else None
        return InputError(self.message, file=self.file, line=self.line, column=self.column, field=field_name,
                          fix=self.fix)

    def describe(self) -> str:
        return str(self.to_error()).splitlines()[0]


@dataclass(frozen=True)
class Repeat:
    """A raw key some of whose steps were logged more than once (a resumed or restarted run re-logs steps).

    The series keeps the last value logged at each step; `first_values` (aligned with its steps) keeps the
    first, so a policy can choose, and `conflicting` counts the steps whose loggings disagree."""

    key: str
    repeated: int
    conflicting: int
    first_conflict: int | None = None
    conflict_values: tuple[float, float] | None = None  # (first, last) at `first_conflict`
    first_values: np.ndarray | None = None


class LogReadError(InputError):
    """A log was corrupt or truncated; `partial` holds everything readable around the bad part."""

    partial: TrainingLog | None = None


@dataclass
class TrainingLog:
    """One training run's telemetry in canonical form."""

    path: str
    format: str
    metrics: dict[str, Series]
    extra: dict[str, Series] = field(default_factory=dict)
    problems: list[ReadProblem] = field(default_factory=list)
    ignored_keys: list[str] = field(default_factory=list)
    repeats: dict[str, Repeat] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> Series | None:
        return self.metrics.get(name)

    def val_scores(self) -> dict[str, Series]:
        """Held-out scores by dataset name."""
        return {k[len(VAL_PREFIX):]: s for k, s in self.metrics.items() if k.startswith(VAL_PREFIX)}

    @property
    def unknown_keys(self) -> list[str]:
        """Keys outside the vocabulary, less known bookkeeping (tinker-cookbook `progress/*`, `time/*`)."""
        return sorted(k for k in self.extra if not k.startswith(BOOKKEEPING_PREFIXES))

    @property
    def aliases(self) -> dict[str, str]:
        """Canonical name -> the key it was read from."""
        return {name: s.source_key for name, s in self.metrics.items()}

    def step_range(self) -> tuple[int, int] | None:
        all_series = [*self.metrics.values(), *self.extra.values()]
        if not all_series:
            return None
        return min(s.first_step for s in all_series), max(s.last_step for s in all_series)

    def n_steps(self) -> int:
        """Distinct steps at which anything was logged."""
        all_series = [*self.metrics.values(), *self.extra.values()]
        if not all_series:
            return 0
        if len(all_series) == 1:
            return len(all_series[0])
        return int(np.unique(np.concatenate([s.steps for s in all_series])).size)

    def raise_for_problems(self) -> None:
        """Raise the first problem as a LogReadError carrying this partial log."""
        if self.problems:
            first = self.problems[0]
            more = f" ({len(self.problems) - 1} more problem(s) in this file)" if len(self.problems) > 1 else ""
            error = LogReadError(first.message + more, file=first.file, line=first.line, column=first.column,
                                 field=f"record {first.record}" if first.record is not None else None,
                                 fix=first.fix or "the values read before and after this point were kept")
            error.partial = self
            raise error


def _sort_order(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Steps sorted with duplicates removed, and the indexes that do the same to the values keeping the last
    and the first value of a repeated step (None, None: already strictly increasing)."""
    if steps.size < 2 or bool(np.all(steps[1:] > steps[:-1])):
        return steps, None, None
    order = np.argsort(steps, kind="stable")
    ordered = steps[order]
    last = np.ones(ordered.size, dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    first = np.ones(ordered.size, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return ordered[last], order[last], order[first]


def _repeat(key: str, steps: np.ndarray, values: np.ndarray, order_first: np.ndarray) -> Repeat | None:
    """What a key's repeated steps hold: how many, and how many disagree (NaN agrees only with NaN)."""
    order = np.argsort(steps, kind="stable")
    ordered, vals = steps[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    sizes = np.diff(np.append(starts, ordered.size))
    repeated = int(np.count_nonzero(sizes > 1))
    if repeated == 0:
        return None
    nan = np.isnan(vals)
    nan_any, nan_all = np.logical_or.reduceat(nan, starts), np.logical_and.reduceat(nan, starts)
    with np.errstate(invalid="ignore"):
        differ = np.fmax.reduceat(vals, starts) != np.fmin.reduceat(vals, starts)
    conflict = ~nan_all & (differ | nan_any)
    hits = np.flatnonzero(conflict)
    if hits.size == 0:
        return Repeat(key, repeated, 0)
    at = int(hits[0])
    run = vals[starts[at]:starts[at] + sizes[at]]
    return Repeat(key, repeated, int(hits.size), int(ordered[starts[at]]), (float(run[0]), float(run[-1])),
                  values[order_first])


class SeriesBuilder:
    """Collects (step, value) points per raw key while a reader streams a file."""

    def __init__(self) -> None:
        self._steps: dict[str, array[int]] = {}
        self._values: dict[str, array[float]] = {}
        self._chunks: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self._ignored: set[str] = set()

    def add(self, step: int, key: str, value: float) -> None:
        steps = self._steps.get(key)
        if steps is None:
            steps = self._steps[key] = array("q")
            self._values[key] = array("d")
        steps.append(step)
        self._values[key].append(value)

    def add_many(self, step: int, values: Mapping[str, object]) -> None:
        """Add one record; values that are not numbers are noted as ignored keys."""
        for key, value in values.items():
            number = as_number(value)
            if number is None:
                self._ignored.add(key)
            else:
                self.add(step, key, number)

    def add_columns(self, key: str, steps: np.ndarray, values: np.ndarray) -> None:
        """Add a whole column at once (the fast path for chunked readers)."""
        self._chunks.setdefault(key, []).append((steps.astype(np.int64, copy=False),
                                                 values.astype(np.float64, copy=False)))

    def ignore(self, key: str) -> None:
        self._ignored.add(key)

    def keys(self) -> set[str]:
        return {*self._steps, *self._chunks}

    def has_point(self, key: str, step: int) -> bool:
        """Whether `key` already has a value at `step` (linear; for the few validation points)."""
        if key in self._steps and step in self._steps[key]:
            return True
        return any(bool(np.any(s == step)) for s, _ in self._chunks.get(key, []))

    def _column(self, key: str, shared: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray | None]],
                repeats: dict[str, Repeat]) -> tuple[np.ndarray, np.ndarray]:
        """One key's points, sorted and deduplicated. Keys whose chunks came with the very same step arrays
        (every metric of a block of same-layout lines) share one steps array instead of a copy each."""
        parts = list(self._chunks.get(key, []))
        if key in self._steps:
            parts.append((np.frombuffer(self._steps[key], dtype=np.int64),
                          np.frombuffer(self._values[key], dtype=np.float64)))
        values = parts[0][1] if len(parts) == 1 else np.concatenate([p[1] for p in parts])
        identity = tuple(id(p[0]) for p in parts)
        if identity in shared and shared[identity][1] is None:
            return shared[identity][0], values
        raw = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
        steps, order, order_first = _sort_order(raw)
        if order is None:
            if key not in self._steps:  # step arrays of add_columns chunks are kept alive, so ids stay unique
                shared[identity] = (steps, None)
            return steps, values
        if steps.size < raw.size and order_first is not None:
            repeat = _repeat(key, raw, values, order_first)
            if repeat is not None:
                repeats[key] = repeat
        return steps, values[order]

    def build(self, path: str | Path, fmt: str, problems: list[ReadProblem] | None = None) -> TrainingLog:
        """Map raw keys onto canonical names (best-ranked alias wins; the rest stay as extra keys)."""
        metrics: dict[str, Series] = {}
        ranks: dict[str, int] = {}
        extra: dict[str, Series] = {}
        shared: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray | None]] = {}
        repeats: dict[str, Repeat] = {}
        for key in sorted(self.keys()):
            steps, values = self._column(key, shared, repeats)
            if steps.size == 0:
                continue
            match = classify(key)
            if match is None:
                extra[key] = Series(key, key, steps, values)
                continue
            if match.scale != 1.0:
                values = values * match.scale
            series = Series(match.canonical, key, steps, values)
            held = ranks.get(match.canonical)
            if held is None or match.rank < held:
                if held is not None:
                    loser = metrics[match.canonical]
                    extra[loser.source_key] = Series(loser.source_key, loser.source_key, loser.steps,
                                                     _unscaled(loser))
                metrics[match.canonical] = series
                ranks[match.canonical] = match.rank
            else:
                extra[key] = Series(key, key, steps, _unscaled(series))
        for key in list(self._steps):
            self._steps[key] = array("q")
            self._values[key] = array("d")
        self._chunks.clear()
        _derive(metrics, extra)
        ignored = sorted(k for k in self._ignored if k not in metrics and k not in extra)
        return TrainingLog(str(path), fmt, metrics, extra, list(problems or []), ignored, repeats)


def _derive(metrics: dict[str, Series], extra: dict[str, Series]) -> None:
    """Canonical metrics a framework logs as parts (`DERIVED`): added when the log lacks them, from parts
    logged at the very same steps; the parts stay as they were read."""
    for canonical, parts in DERIVED.items():
        if canonical in metrics or not all(p in extra for p in parts):
            continue
        series = [extra[p] for p in parts]
        if all(np.array_equal(s.steps, series[0].steps) for s in series[1:]):
            metrics[canonical] = Series(canonical, "+".join(parts), series[0].steps,
                                        np.sum([s.values for s in series], axis=0))


def _unscaled(series: Series) -> np.ndarray:
    match = classify(series.source_key)
    if match is None or match.scale == 1.0:
        return series.values
    return series.values / match.scale


def as_number(value: object) -> float | None:
    """A logged value as a float: numbers, numeric strings ('nan', '1e-3'); None for anything else."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
