"""Score tables shared between the samples of a read run: one read-only table per distinct content.

A run of 10^6 documents holds 10^6 `scores` tables (filter -> metric -> value), ~620 bytes each, but few
distinct ones: a binary metric and a parse-failure flag take four value pairs, and a document's filters
often score alike. Once a run is read (derived metrics added, unusable scores quarantined), equal tables
become one shared `FrozenScores`, so memory follows the distinct outcomes, not the documents. Sharing is
sound only because nothing writes a read record's scores: the tables refuse writes (TypeError), so a
later writer fails loudly instead of changing every sample that shares the table.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, ClassVar, NoReturn

from rlgate.results.models import RunResult, SampleRecord, SampleValue


class ReadOnlyDict(dict[str, Any]):
    """A dict that refuses writes (TypeError naming what it holds): a value shared between samples. Copies
    (copy, deepcopy, pickle, `dict(table)`) are plain dicts, free to change."""

    __slots__ = ()
    #: why writes are refused, and the way out (each subclass says it of what it holds)
    refusal: ClassVar[str] = "this mapping is shared between samples and read-only: copy it (dict(...)) to change it"

    def _refuse(self, *_: object, **__: object) -> NoReturn:
        raise TypeError(self.refusal)

    __setitem__ = __delitem__ = setdefault = update = pop = popitem = clear = __ior__ = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (self.__copy__(),)


class FrozenScores(ReadOnlyDict):
    """A score table shared between samples (filter -> metric -> value, each level read-only)."""

    __slots__ = ()
    refusal = ("a read run's score tables are shared between samples and read-only: build a new dict "
               "(dict(sample.scores)) and assign it")


def _key(value: SampleValue) -> Any:
    """A hashable stand-in that tells 1.0 from 1 and True (equal as dict keys, not as scores) and lists apart."""
    if type(value) is list:
        return ("list", *(_key(v) for v in value))
    return type(value), value


def share_scores(run: RunResult) -> RunResult:
    """Make equal score tables of `run`'s samples one shared read-only table (in place; returns `run`).

    Agent tasks are left as they are: the agent rules (`results.agent_metrics`) add their metrics to each
    sample's table after reading."""
    inner: dict[tuple[Any, ...], FrozenScores] = {}
    outer: dict[tuple[Any, ...], FrozenScores] = {}
    for task in run.tasks.values():
        if task.is_agent:
            continue
        _share(task.samples, inner, outer)
    return run


def _share(samples: Iterable[SampleRecord], inner: dict[tuple[Any, ...], FrozenScores],
           outer: dict[tuple[Any, ...], FrozenScores]) -> None:
    for sample in samples:
        scores = sample.scores
        if type(scores) is FrozenScores or sample.trajectory is not None:
            continue
        tables = []
        for filt, metrics in scores.items():
            try:  # the values' types beside them: 1.0, 1 and True are equal as keys, not as scores
                key: tuple[Any, ...] = (*metrics.items(), *map(type, metrics.values()))
                table = inner.get(key)
            except TypeError:  # a list value (unhashable)
                key = tuple((metric, _key(value)) for metric, value in metrics.items())
                table = inner.get(key)
            if table is None:
                table = inner[key] = FrozenScores(metrics)
            tables.append((filt, table))
        whole = tuple((filt, id(table)) for filt, table in tables)  # the inner tables are shared: their ids tell
        shared = outer.get(whole)
        if shared is None:
            shared = outer[whole] = FrozenScores(tables)
        sample.__dict__["scores"] = shared  # not an assignment through pydantic: the fields-set is shared
