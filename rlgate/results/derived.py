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

from rlgate.results.models import INVALID_ANSWER, SampleRecord, TaskResult

PARSE_FAILURE = "answer_parse_failure_rate"
LENGTH = "response_length_mean"
TRUNCATION = "truncation_rate"
DERIVED_SAMPLE_METRICS = (PARSE_FAILURE, LENGTH, TRUNCATION)


def _length(sample: SampleRecord) -> float | None:
    tokens = sample.response_tokens
    if tokens:
        return sum(tokens) / len(tokens)
    responses = sample.responses
    if responses:
        return sum(map(len, responses)) / len(responses)
    return None


def _truncation(sample: SampleRecord, max_tokens: int | None) -> float | None:
    if sample.truncated:
        return sum(1.0 for t in sample.truncated if t) / len(sample.truncated)
    if sample.response_tokens and max_tokens:
        return sum(1.0 for t in sample.response_tokens if t >= max_tokens) / len(sample.response_tokens)
    return None


def add_derived_metrics(task: TaskResult, config: dict[str, Any]) -> None:
    """Add the derived metrics to every sample and their means to the task (in place).

    Each (filter, metric) mean is summed in sample order, as before, so the values do not move by a bit;
    the sums live in a dict per filter, touched once per (sample, filter) instead of once per value."""
    if not task.samples:
        return
    generative = config.get("output_type", "generate_until") == "generate_until"
    gen = config.get("generation_kwargs") or {}
    max_tokens = gen.get("max_gen_toks") or gen.get("max_tokens") or gen.get("max_new_tokens")
    max_tokens = int(max_tokens) if isinstance(max_tokens, (int, float)) else None
    # (filter, metric) -> [sum, count], in the order first met (the task's metrics keep that order)
    sums: dict[tuple[str, str], list[float]] = {}
    length: float | None = None
    truncation: float | None = None
    for sample in task.samples:
        # one pass per document, no per-sample dict: this runs for every sample of both runs
        all_scores = sample.scores
        filtered = sample.filtered
        filters = list(all_scores) or list(filtered) or ["none"]
        if generative:
            length = _length(sample)
            truncation = _truncation(sample, max_tokens) if (sample.truncated or sample.response_tokens) else None
        for filt in filters:
            scores = all_scores.get(filt)
            if scores is None:
                scores = all_scores[filt] = {}
            if filt != "none" and filt in filtered:
                value = 1.0 if filtered[filt].strip() == INVALID_ANSWER else 0.0
                scores[PARSE_FAILURE] = value
                acc = sums.get((filt, PARSE_FAILURE)) or sums.setdefault((filt, PARSE_FAILURE), [0.0, 0.0])
                acc[0] += value
                acc[1] += 1
            if length is not None:
                scores[LENGTH] = length
                acc = sums.get((filt, LENGTH)) or sums.setdefault((filt, LENGTH), [0.0, 0.0])
                acc[0] += length
                acc[1] += 1
            if truncation is not None:
                scores[TRUNCATION] = truncation
                acc = sums.get((filt, TRUNCATION)) or sums.setdefault((filt, TRUNCATION), [0.0, 0.0])
                acc[0] += truncation
                acc[1] += 1
    for (filt, metric), (total, count) in sums.items():
        task.metrics.setdefault(filt, {})[metric] = total / count
