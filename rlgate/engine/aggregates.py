"""Aggregates against samples: a results file whose reported mean is not the mean of its own samples is named.

The engine computes every statistic from the per-sample scores, so a disagreeing aggregate never
changes a verdict (the samples win); but it means the file was edited, merged or scored by other code
than its samples, which a reviewer must see. Only metrics the task's harness vocabulary knows as
per-sample fractions are compared (their aggregate is the plain mean of the samples, lists such as
IFEval's per-instruction scores flattened as lm-eval does); others (corpus-level BLEU, perplexity) are not.
"""

from __future__ import annotations

import math
from typing import cast

from rlgate.contract.models import GateConfig
from rlgate.engine.values import ColumnCache
from rlgate.results.models import MetricKey, RunResult, TaskResult

_RELATIVE = 1e-9


def _tolerance(reported: float) -> float:
    """Half a unit in the last decimal the file wrote (0.5967 -> 5e-5), plus float noise."""
    text = repr(reported)
    decimals = len(text.split(".", 1)[1]) if "." in text and "e" not in text else 0
    return 0.5 * 10.0 ** -decimals + _RELATIVE * max(1.0, abs(reported))


def _sample_mean(task: TaskResult, key: MetricKey, columns: ColumnCache | None = None) -> tuple[float, int] | None:
    """The mean of the task's per-sample values of `key` (lists flattened), summed in sample order.

    `columns`: the engine's per-sample columns; a metric every sample holds as a number is summed from its
    column (the same values in the same order, so the same sum) instead of from the samples again."""
    metric, filt = key.metric, key.filter
    column = columns.scalar(task, metric, filt) if columns is not None else None
    if column is not None and len(column):
        return sum(column.tolist(), 0.0) / len(column), len(column)
    values = [v for v in (s.score(metric, filt) for s in task.samples) if v is not None]
    if not values:
        return None
    try:  # the common case, numbers only: one C-level sum, in the same order as the loop below
        return sum(cast(list[float], values), 0.0) / len(values), len(values)
    except TypeError:  # a list (IFEval's per-instruction scores): flattened, as lm-eval averages them
        pass
    total, count = 0.0, 0
    for value in values:
        if isinstance(value, list):
            total += sum(value)
            count += len(value)
        else:
            total += value
            count += 1
    return total / count, count


def aggregate_warnings(keys: list[MetricKey], config: GateConfig, baseline: RunResult | None,
                       candidate: RunResult, columns: ColumnCache | None = None) -> list[str]:
    """One warning per run, leaf task and gated metric whose reported aggregate is not its samples' mean
    (`columns`: the engine's per-sample columns, read where they hold the metric)."""
    out: list[str] = []
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        if run is None:
            continue
        for key in dict.fromkeys(keys):
            vocabulary = config.vocabulary(key.task)
            if vocabulary is None or vocabulary.metric(key.metric).kind != "fraction" \
                    or key.metric not in vocabulary.metrics:
                continue
            for leaf in run.leaves(key.task):
                task = run.tasks[leaf]
                reported = task.value(key.metric, key.filter)
                if reported is None or not math.isfinite(reported) or not task.samples or any(
                        c.metric == key.metric and c.filter == key.filter for c in task.corrupt):
                    continue
                found = _sample_mean(task, key, columns)
                if found is None or abs(found[0] - reported) <= _tolerance(reported):
                    continue
                mean, count = found
                out.append(f"{role} {leaf}: the results file reports {key.metric}/{key.filter} = {reported:.6g}, but "
                           f"its {count} per-sample values average {mean:.6g}; rlgate uses the samples "
                           f"({run.provenance.source})")
    return out
