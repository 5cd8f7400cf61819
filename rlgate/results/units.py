"""The statistical unit of a task: the sample, whatever number of records a harness writes for it.

A harness that writes one record per epoch (inspect-ai `epochs`) or per repeated attempt names the
sample each record belongs to in `extra["sample_id"]`; a record without it is its own sample (lm-eval
writes one record per document, its `repeats` as the record's responses). The engine averages a
sample's records before any test (rlgate.engine.units), so epochs are never counted as evidence.
"""

from __future__ import annotations

from rlgate.results.models import DocId, SampleRecord, TaskResult

SAMPLE_KEY = "sample_id"


def unit_of(sample: SampleRecord) -> DocId:
    """The sample this record is one epoch / attempt of (the record's own id where the harness says nothing)."""
    unit = sample.extra.get(SAMPLE_KEY)
    return sample.doc_id if unit is None else unit


def records_per_unit(task: TaskResult) -> dict[DocId, int]:
    """Records of each sample, in first-seen order."""
    out: dict[DocId, int] = {}
    for sample in task.samples:
        unit = unit_of(sample)
        out[unit] = out.get(unit, 0) + 1
    return out
