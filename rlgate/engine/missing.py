"""Documents whose sample lacks the gated metric: counted per run, and failing the gate closed.

A samples line that lists a metric but does not write it (or a document without a line for the
filter) leaves that document without a value. Averaging over the rest would quietly gate on a subset
of the suite, so a gate reading such a metric is `nodata` unless the run still has a value for
`min_coverage` of the documents (then the count is shown beside the gate's values). Corrupt scores
are `allow_corrupt`'s business (rlgate.engine.corrupt), not counted here; metrics that are defined on
some documents only (`metrics.CONDITIONAL_METRICS`, pass@k / maj@k) are exempt, and so is a leaf of a
group that does not report the metric at all (lm-eval averages a group over the leaves that do).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

import numpy as np

from rlgate.contract.metrics import is_conditional
from rlgate.engine.context import GateContext
from rlgate.engine.gaps import CoverageGap
from rlgate.engine.models import CorruptDocument
from rlgate.results.models import DocId, MetricKey

_SHOWN = 3


def _missing(ctx: GateContext, role: str, key: MetricKey, corrupt: list[CorruptDocument],
             unknown: Collection[tuple[str, str, DocId]] = ()) -> tuple[int, int, list[str]]:
    """(documents without a value nor a corrupt score, documents that should have one, first examples)."""
    run = ctx.candidate if role == "candidate" else ctx.baseline
    assert run is not None
    missing = expected = 0
    examples: list[str] = []
    for leaf in run.leaves(key.task):
        task = run.tasks[leaf]
        if not task.samples:
            continue
        values, _ = ctx.columns.values(task, key.metric, key.filter)
        gaps = np.isnan(values)
        if not gaps.any():
            expected += values.size
            continue
        if gaps.all() and task.value(key.metric, key.filter) is None:
            continue  # the leaf does not have this metric (a group mixing metrics)
        spoiled: set[DocId] = {c.doc_id for c in corrupt if c.run == role and c.task == leaf}
        spoiled |= {doc for r, t, doc in unknown if r == role and t == leaf}  # tolerated missing trajectories
        absent = [task.samples[i].doc_id for i in np.flatnonzero(gaps).tolist()
                  if task.samples[i].doc_id not in spoiled]
        missing += len(absent)
        expected += values.size - (int(gaps.sum()) - len(absent))
        examples += [f"{leaf}:{d}" for d in absent[:max(0, _SHOWN - len(examples))]]
    return missing, expected, examples


def value_gaps(ctx: GateContext, key: MetricKey, roles: tuple[str, ...], corrupt: list[CorruptDocument],
               unknown: Collection[tuple[str, str, DocId]] = ()) -> Iterator[CoverageGap]:
    """Each run's documents without the metric's value (where some lack one), for `gaps.judged`; `unknown`
    trajectories the contract tolerates (rlgate.engine.trajectories) are not counted."""
    if is_conditional(key.metric):
        return
    for role in roles:
        if role == "baseline" and ctx.baseline is None:
            continue
        missing, expected, examples = _missing(ctx, role, key, corrupt, unknown)
        if missing:
            yield CoverageGap(role, missing, expected, "values", tuple(examples))
