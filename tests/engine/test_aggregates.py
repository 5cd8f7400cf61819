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
