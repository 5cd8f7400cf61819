"""Score tables shared between the samples of a read run: one read-only table per distinct content.

A run of 10^6 documents holds 10^6 `scores` tables (filter -> metric -> value), ~620 bytes each, but few
distinct ones: a binary metric and a parse-failure flag take four value pairs, and a document's filters
often score alike. Once a run is read (derived metrics added, unusable scores quarantined), equal tables
become one shared `FrozenScores`, so memory follows the distinct outcomes, not the documents. Sharing is
sound only because nothing writes a read record's scores: the tables refuse writes (TypeError), so a
later writer fails loudly instead of changing every sample that shares the table. A writer after reading
takes the sample's own copy first (`writable_scores`, `writable_extra`). The lm-eval reader builds its
tables shared from the start (`ScoreTables`), and gives every record one empty `extra` (`EMPTY_EXTRA`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, NoReturn

from rlgate.results.models import RunResult, SampleRecord, SampleValue, set_field

#: a key of `ScoreTables`: the items of a table beside their values' types, or an earlier table's id and what is added
_TableKey = tuple[Any, ...]


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


#: the score table of a sample a reader has not scored yet: shared by every such sample, never written
EMPTY_SCORES = FrozenScores()


class ScoreTables:
    """Builds a reader's score tables shared from the start, one read-only table per distinct content.

    `share_scores` makes equal tables one after a run is read, which frees the table every sample was given
    while reading; at 10^6 documents those ~0.7 KB a sample stayed in the allocator's pools (free, but not
    returned, and of sizes later phases hardly ask for), so the gate's peak carried them. A reader that
    builds through this class never makes a table per sample: a line's scores are looked up by their items,
    and a filter added to a sample's table by (that table, filter, scores). Those keys are the tables' ids,
    sound because every table a key names is held here for as long as this lives (`_held`), so no table
    freed meanwhile can hand its id to another."""

    def __init__(self) -> None:
        self._scores: dict[_TableKey, FrozenScores] = {}
        self._floats: dict[_TableKey, FrozenScores] = {}
        self._added: dict[_TableKey, FrozenScores] = {}
        self._held: list[FrozenScores] = []  # the tables the keys of `_added` name by id

    def floats(self, items: Sequence[tuple[str, SampleValue]]) -> FrozenScores:
        """`scores` of items whose values are all of type float (the common line): keyed by the items alone."""
        key = tuple(items)
        table = self._floats.get(key)
        if table is None:
            table = self._floats[key] = FrozenScores(items)
        return table

    def scores(self, items: Sequence[tuple[str, SampleValue]]) -> FrozenScores:
        """The shared metric -> value table holding `items` (1.0, 1 and True kept apart; lists share too)."""
        try:
            key: _TableKey = (*items, *[type(value) for _, value in items])
            table = self._scores.get(key)
        except TypeError:  # a list value (unhashable)
            key = tuple((metric, _key(value)) for metric, value in items)
            table = self._scores.get(key)
        if table is None:
            table = self._scores[key] = FrozenScores(items)
        return table

    def added(self, table: FrozenScores, filter_name: str, scores: FrozenScores) -> FrozenScores:
        """The shared filter -> scores table of `table` with `filter_name`'s scores set to `scores`."""
        key = (id(table), filter_name, id(scores))
        out = self._added.get(key)
        if out is None:
            out = self._added[key] = FrozenScores({**table, filter_name: scores})
            self._held += (table, scores)
        return out

    def extended(self, table: FrozenScores, additions: Iterable[tuple[str, tuple[tuple[str, float], ...]]]
                 ) -> FrozenScores:
        """A new table: `table` with each (filter, metric -> value items) of `additions` added to that filter's
        scores (a filter it lacks is added, with no items an empty one), as a writer after reading would set
        them; the filters' tables are the shared ones of their content. The caller keeps what it made."""
        tables = dict(table)
        for filter_name, items in additions:
            base = tables.get(filter_name, EMPTY_SCORES)
            tables[filter_name] = self.scores([*base.items(), *items]) if items else base
        return FrozenScores(tables)


def writable_scores(sample: SampleRecord) -> dict[str, dict[str, SampleValue]]:
    """The sample's score tables as its own plain dicts, to write (a shared read-only table is copied first:
    the copy is the sample's alone, so nothing another sample shares changes)."""
    scores = sample.scores
    if isinstance(scores, ReadOnlyDict) or any(isinstance(t, ReadOnlyDict) for t in scores.values()):
        scores = {filter_name: dict(metrics) for filter_name, metrics in scores.items()}
        set_field(sample, "scores", scores)  # not an assignment through pydantic: the fields-set may be shared
    return scores


class SharedExtra(ReadOnlyDict):
    """A sample's `extra` shared between samples (the lm-eval reader's empty one)."""

    __slots__ = ()
    refusal = ("a read run's empty `extra` is shared between samples and read-only: write through "
               "rlgate.results.shared_scores.writable_extra(sample)")


#: the `extra` of every lm-eval record with no task-specific details: one empty dict, not 64 bytes a sample
EMPTY_EXTRA = SharedExtra()


def writable_extra(sample: SampleRecord) -> dict[str, Any]:
    """The sample's `extra` as its own dict, to write (the shared empty one is replaced by a new dict)."""
    extra = sample.extra
    if isinstance(extra, ReadOnlyDict):
        extra = dict(extra)
        set_field(sample, "extra", extra)  # not an assignment through pydantic: the fields-set may be shared
    return extra


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
        set_field(sample, "scores", shared)  # not an assignment through pydantic: the fields-set is shared
