"""The samples' mean a reported aggregate is checked against: numbers summed in sample order, lists flattened."""

from __future__ import annotations

from rlgate.engine.aggregates import _sample_mean
from rlgate.results.models import MetricKey, SampleRecord, SampleValue, TaskResult


def _task(values: list[SampleValue | None]) -> TaskResult:
    return TaskResult(task="t", samples=[SampleRecord(doc_id=i, doc_hash=str(i),
                                                      scores={"f": {"m": v}} if v is not None else {"g": {"m": 1.0}})
                                         for i, v in enumerate(values)])


def test_numbers_are_summed_in_sample_order_and_missing_ones_skipped() -> None:
    values = [0.1, None, 0.2, 0.3, True, 1]
    total = 0.0
    for v in [0.1, 0.2, 0.3, 1.0, 1.0]:
        total += v
    assert _sample_mean(_task(values), MetricKey(task="t", metric="m", filter="f")) == (total / 5, 5)


def test_lists_are_flattened_as_lm_eval_averages_them() -> None:
    mean, count = _sample_mean(_task([[1.0, 0.0, 1.0], 0.0, None, [1.0]]), MetricKey(task="t", metric="m", filter="f"))
    assert (mean, count) == (3.0 / 5, 5)


def test_no_value_is_no_mean() -> None:
    assert _sample_mean(_task([None, None]), MetricKey(task="t", metric="m", filter="f")) is None
    assert _sample_mean(_task([1.0]), MetricKey(task="t", metric="x", filter="f")) is None


def test_the_engine_columns_give_the_same_mean_bit_for_bit() -> None:
    """A metric every sample holds as a number is summed from the engine's column: the same values in the
    same order, so the very same float; any other metric is read from the samples as before."""
    import random

    from rlgate.engine.values import ColumnCache

    rng = random.Random(7)
    key = MetricKey(task="t", metric="m", filter="f")
    runs: list[list[SampleValue | None]] = [
        [rng.random() for _ in range(1001)], [rng.random() < 0.4 for _ in range(999)],
        [1e16, 1.0, -1e16, 0.3, 0.1, 0.2], [0.1, None, 0.2], [[1.0, 0.0], 1.0]]
    for values in runs:
        task = _task(values)
        columns = ColumnCache()
        assert _sample_mean(task, key, columns) == _sample_mean(task, key)
        held = columns.scalar(task, "m", "f")
        assert (held is not None) is all(v is not None and not isinstance(v, list) for v in values)
    assert _sample_mean(_task([1.0]), MetricKey(task="t", metric="x", filter="f"), ColumnCache()) is None
