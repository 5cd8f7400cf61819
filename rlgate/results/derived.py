"""Per-sample metrics rlgate derives from the samples themselves (lm-eval does not report them).

- `answer_parse_failure_rate`: the filtered answer is lm-eval's `[invalid]` (the extraction regex
  found nothing), per filter other than `none`.
- `response_length_mean`: mean response length per document, in tokens where the run recorded
  them (rlgate's runner does), otherwise in characters.
- `truncation_rate`: the response stopped at `max_gen_toks`, only where knowable (recorded
  `truncated` flags, or recorded token counts and a known `max_gen_toks`); plain lm-eval samples
  do not say, so the metric is then absent (a gate on it is `nodata`, never a silent 0).
- Per-response answers (pass@k, maj@k) are harness-specific: each harness adds them in its adapter
  (lm-eval's in `rlgate.harness.lmeval.per_response`).

The values are written into each sample's `scores` and the task's `metrics`, so every later layer
treats them like lm-eval's own metrics.
"""

from __future__ import annotations

from typing import Any

from rlgate.results.models import INVALID_ANSWER, SampleRecord, TaskResult, set_field
from rlgate.results.shared_scores import FrozenScores, ScoreTables, writable_scores

PARSE_FAILURE = "answer_parse_failure_rate"
LENGTH = "response_length_mean"
TRUNCATION = "truncation_rate"
DERIVED_SAMPLE_METRICS = (PARSE_FAILURE, LENGTH, TRUNCATION)


def _truncation(sample: SampleRecord, max_tokens: int | None) -> float | None:
    if sample.truncated:
        return sum(1.0 for t in sample.truncated if t) / len(sample.truncated)
    if sample.response_tokens and max_tokens:
        return sum(1.0 for t in sample.response_tokens if t >= max_tokens) / len(sample.response_tokens)
    return None


_ABSENT = object()


def _plan(filters: list[str], parsed: list[float | None], length: float | None, truncation: float | None
          ) -> tuple[tuple[str, tuple[tuple[str, float], ...]], ...]:
    """(filter, derived metric -> value items) for each of a sample's filters, in the metrics' order."""
    common = tuple((name, value) for name, value in ((LENGTH, length), (TRUNCATION, truncation)) if value is not None)
    return tuple((filt, ((PARSE_FAILURE, value), *common) if value is not None else common)
                 for filt, value in zip(filters, parsed, strict=True))


def add_derived_metrics(task: TaskResult, config: dict[str, Any]) -> None:
    """Add the derived metrics to every sample and their means to the task (in place).

    Each (filter, metric) mean is summed in sample order, and the task's metrics are added in the order
    each (filter, metric) was first met, as always; the running sums sit in one list per filter
    (sum, count per metric), so a (sample, filter) costs one lookup, not one per metric. A reader's shared
    read-only tables (`ScoreTables`) are replaced by shared tables that hold the derived values too; a
    sample's own tables are written in place."""
    if not task.samples:
        return
    generative = config.get("output_type", "generate_until") == "generate_until"
    gen = config.get("generation_kwargs") or {}
    max_tokens = gen.get("max_gen_toks") or gen.get("max_tokens") or gen.get("max_new_tokens")
    max_tokens = int(max_tokens) if isinstance(max_tokens, (int, float)) else None
    sums: dict[str, list[float]] = {}  # filter -> [sum, count] for each of DERIVED_SAMPLE_METRICS
    order: list[tuple[str, int]] = []  # (filter, index into DERIVED_SAMPLE_METRICS), in the order first met
    length: float | None = None
    truncation: float | None = None
    tables = ScoreTables()
    # (id of a shared table, derived values) -> (that table, held so its id stays its own; the table with them)
    derived: dict[tuple[Any, ...], tuple[FrozenScores, FrozenScores]] = {}
    for sample in task.samples:
        # one pass per document, no per-sample table: this runs for every sample of both runs
        all_scores = sample.scores
        filtered = sample.filtered
        if generative:  # the mean length (tokens where recorded, else characters), inline
            tokens = sample.response_tokens
            if tokens:
                length = sum(tokens) / len(tokens)
            else:
                responses = sample.responses
                length = sum(map(len, responses)) / len(responses) if responses else None
            truncation = _truncation(sample, max_tokens) if (sample.truncated or tokens) else None
        filters = list(all_scores) if all_scores else list(filtered) or ["none"]
        parsed: list[float | None] = []  # each filter's parse-failure value (None: no answer under it)
        for filt in filters:
            acc = sums.get(filt)
            if acc is None:
                acc = sums[filt] = [0.0] * 6
            answer = filtered.get(filt, _ABSENT) if filt != "none" else _ABSENT
            if answer is not _ABSENT:
                value = 1.0 if answer.strip() == INVALID_ANSWER else 0.0  # type: ignore[attr-defined]
                parsed.append(value)
                if not acc[1]:
                    order.append((filt, 0))
                acc[0] += value
                acc[1] += 1
            else:
                parsed.append(None)
            if length is not None:
                if not acc[3]:
                    order.append((filt, 1))
                acc[2] += length
                acc[3] += 1
            if truncation is not None:
                if not acc[5]:
                    order.append((filt, 2))
                acc[4] += truncation
                acc[5] += 1
        if type(all_scores) is FrozenScores:  # a reader's shared tables (`ScoreTables`): shared ones again
            key = (id(all_scores), None if all_scores else tuple(filters), length, truncation, *parsed)
            found = derived.get(key)
            if found is None:
                found = derived[key] = (all_scores, tables.extended(all_scores,
                                                                    _plan(filters, parsed, length, truncation)))
            set_field(sample, "scores", found[1])
        else:
            own = writable_scores(sample)
            for filt, items in _plan(filters, parsed, length, truncation):
                own.setdefault(filt, {}).update(items)
    for filt, index in order:
        total, count = sums[filt][2 * index: 2 * index + 2]
        task.metrics.setdefault(filt, {})[DERIVED_SAMPLE_METRICS[index]] = total / count
