"""Score integrity, one rule set for every harness: unusable per-sample scores and duplicate sample lines.

Fail-closed means a document whose score cannot be used is never quietly excluded. A score that is
NaN or +-inf, or that is not a number where the metric is numeric, is taken out of the sample and
listed as a `CorruptScore` on its task; the engine then counts it and fails the gates on that
metric (unless the contract tolerates it). A sample line repeated for the same document and filter
is collapsed when identical and counted; a repeat that disagrees (response, filtered answer,
document or score) is an InputError naming both lines, because no rule could say which one is true.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

from rlgate._core.errors import InputError
from rlgate.results.models import CorruptScore, DocId, RunResult, SampleRecord, SampleValue
from rlgate.results.shared_scores import ReadOnlyDict, writable_scores

Problem = Literal["non_finite", "wrong_type", "out_of_range"]
_SHOWN = 60


def shown(value: Any) -> str:
    """The value as it was written (JSON; NaN / Infinity as Python's json writes them), shortened."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float))


def classify(value: Any) -> tuple[SampleValue | None, Problem | None]:
    """(the usable value, None), or (None, what is wrong): a number, or a non-empty list of numbers (IFEval)."""
    if is_number(value):
        try:
            number = float(value)
        except OverflowError:  # an integer too large for a float
            return None, "non_finite"
        return (number, None) if math.isfinite(number) else (None, "non_finite")
    if isinstance(value, list) and value and all(is_number(v) for v in value):
        try:
            numbers = [float(v) for v in value]
        except OverflowError:
            return None, "non_finite"
        return (numbers, None) if all(math.isfinite(v) for v in numbers) else (None, "non_finite")
    if isinstance(value, list) and not value:
        return [], None  # no instructions to score: carries no value, as before
    return None, "wrong_type"


def quarantine(run: RunResult) -> RunResult:
    """Move every unusable score of `run`'s samples into its task's `corrupt` list (in place; returns `run`)."""
    for task in run.tasks.values():
        if _all_finite_numbers(_every_score(task.samples)):  # the common case: one C-level pass per task
            continue
        for sample in task.samples:
            for filt, metrics in sample.scores.items():
                if _all_finite_numbers(metrics.values()):
                    continue
                bad = [(m, v) for m, v in metrics.items() if classify(v)[1] is not None]
                for metric, value in bad:
                    del writable_scores(sample)[filt][metric]
                    task.corrupt.append(CorruptScore(doc_id=sample.doc_id, metric=metric, filter=filt,
                                                     problem=classify(value)[1] or "wrong_type", value=shown(value)))
    return run


def quarantine_out_of_range(run: RunResult, ranges_for: Callable[[str], Mapping[str, tuple[float, float]]]
                            ) -> RunResult:
    """Move every per-sample score outside its metric's range into its task's `corrupt` list (in place).

    `ranges_for(task)` gives the ranges the task's harness knows (its vocabulary); a range the harness
    declared on the task itself (`TaskResult.metric_ranges`) counts too. A fraction of 1.05 or -0.1 is
    not a score its metric can take, so it is corrupt for that document, like NaN: never averaged."""
    for name, task in run.tasks.items():
        ranges = dict(ranges_for(name))
        ranges.update({metric: (declared.low, declared.high) for metric, declared in task.metric_ranges.items()})
        if not ranges or not task.samples:
            continue
        inside_ranges: dict[int, object] = {}  # shared tables found in range, by id (held here: ids stay valid)
        for sample in task.samples:
            for filt, metrics in sample.scores.items():
                shared = isinstance(metrics, ReadOnlyDict)
                if shared and id(metrics) in inside_ranges:
                    continue  # a table many samples share is checked once
                kept = True
                for metric, (low, high) in ranges.items():
                    value = metrics.get(metric)
                    if value is None:
                        continue
                    inside = all(low <= v <= high for v in value) if isinstance(value, list) else low <= value <= high
                    if not inside:
                        kept = False
                        del writable_scores(sample)[filt][metric]
                        task.corrupt.append(CorruptScore(doc_id=sample.doc_id, metric=metric, filter=filt,
                                                         problem="out_of_range", value=shown(value)))
                if kept and shared:
                    inside_ranges[id(metrics)] = metrics
    return run


def _every_score(samples: list[SampleRecord]) -> Iterator[Any]:
    """Every value in the samples' `scores` (filter -> metric -> value), iterated without a Python loop."""
    per_filter = chain.from_iterable(map(dict.values, map(_SCORES, samples)))
    return chain.from_iterable(map(dict.values, per_filter))


_SCORES = attrgetter("scores")


def _all_finite_numbers(values: Iterable[Any]) -> bool:
    """True when every value is a finite number: a sum refuses strings and lists, and a NaN / inf shows in it.

    A sum that overflows although every value is finite answers False, so the caller looks value by value.
    """
    try:
        return math.isfinite(sum(values, 0.0))
    except (TypeError, OverflowError, ValueError):
        return False


class SampleLines:
    """Every sample line of one JSON Lines file, keyed by (doc_id, filter): identical repeats collapse, conflicts fail.

    `first(doc_id, filter, line, row)` is True for a line to use and False for an identical repeat
    (counted in `collapsed`); a repeat that disagrees raises InputError naming both lines. Only line
    numbers are kept (`seen`: key -> first line): when a key repeats, the earlier line is read back from
    the file and `fields` picks what must agree (response, filtered answer, document hash, each score), so
    a clean file costs one dict lookup per line. The file is read back once, on the first repeat, and its
    lines kept, so many repeats cost one read, not one each. Values are compared as JSON, so two NaN
    scores agree.
    """

    def __init__(self, file: Path, fix: str, fields: Callable[[Any], Mapping[str, Any]] | None = None) -> None:
        self.file = file
        self.fix = fix
        self.fields = fields or (lambda row: row if isinstance(row, Mapping) else {"value": row})
        self.collapsed = 0
        self.seen: dict[tuple[DocId, str], int] = {}
        self._lines: list[bytes] | None = None

    def first(self, doc_id: DocId, filt: str, line: int, row: Any) -> bool:
        key = (doc_id, filt)
        before_line = self.seen.get(key)
        if before_line is None:
            self.seen[key] = line
            return True
        before = self.fields(self._line(before_line))
        content = self.fields(row)
        differs = [name for name in dict.fromkeys([*before, *content])
                   if shown_full(before.get(name)) != shown_full(content.get(name))]
        if not differs:
            self.collapsed += 1
            return False
        what = "; ".join(f"{name} {shown(before.get(name))} vs {shown(content.get(name))}" for name in differs[:3])
        raise InputError(
            f"conflicting duplicate sample lines for doc {doc_id}, filter {filt}: {self.file}:{before_line} and "
            f"{self.file}:{line} disagree ({what})", file=self.file, line=line, fix=self.fix)

    def _line(self, number: int) -> Any:
        """Line `number` (1-based) of the file, parsed again (it parsed once already)."""
        if self._lines is None:  # split on "\n" only, as the reader numbered them (a bare CR is JSON whitespace)
            with open(self.file, "rb") as handle:
                self._lines = handle.read().split(b"\n")
        return json.loads(self._lines[number - 1])


def shown_full(value: Any) -> str:
    """Canonical JSON of a value for comparison (NaN equals NaN; key order does not matter)."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
