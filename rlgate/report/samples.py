"""Per-task sections: aggregates, paired per-sample verdicts and the privacy rule for samples.

A task in a `release_gate_only` split gets counts and aggregates only; its samples are never
copied into the report model. Without a contract, split visibility is unknown, so samples are
withheld too (fail closed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rlgate.contract.loader import ResolvedContract
from rlgate.contract.models import RELEASE_GATE_ONLY
from rlgate.engine.models import Decision
from rlgate.metrics import MetricRef, higher_is_better, is_bounded
from rlgate.report.model import CHANGES, Change, MetricValue, TaskSection
from rlgate.results.models import DocId, MetricKey, RunResult, SampleRecord, TaskResult, sorted_ids


@dataclass(frozen=True)
class TaskOrigin:
    """Where a leaf task comes from in the contract."""

    suite_task: str | None
    split: str | None
    visibility: str | None


def task_origins(contract: ResolvedContract | None, runs: Iterable[RunResult | None]) -> dict[str, TaskOrigin]:
    """Leaf and group task name -> its suite entry's split and visibility."""
    out: dict[str, TaskOrigin] = {}
    if contract is None:
        return out
    present = [r for r in runs if r is not None]
    for entry in contract.tasks:
        origin = TaskOrigin(entry.name, entry.split, entry.visibility)
        out[entry.name] = origin
        for run in present:
            for leaf in run.leaves(entry.name):
                out[leaf] = origin
            for group, children in run.groups.items():
                if entry.name in children or group == entry.name:
                    out.setdefault(group, origin)
    return out


def _fraction(metric: str, *tasks: TaskResult | None) -> bool:
    """A fraction in [0, 1] unless the harness declared another range for the metric."""
    for task in tasks:
        declared = task.metric_ranges.get(metric) if task is not None else None
        if declared is not None:
            return declared.low == 0 and declared.high == 1
    return is_bounded(metric)


def withheld_reason(origin: TaskOrigin | None, have_contract: bool) -> str | None:
    """Why samples of a task must not be shown, or None when they may be."""
    if not have_contract:
        return "no contract given: split visibility unknown, so samples are withheld"
    if origin is None:
        return "task is not in the contract's suites: split visibility unknown, so samples are withheld"
    if origin.visibility == RELEASE_GATE_ONLY:
        return f"split '{origin.split}' is release_gate_only: counts and aggregates only"
    return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, list) and value and all(isinstance(v, int | float) for v in value):
        mean = sum(value) / len(value)
        return float(mean) if math.isfinite(mean) else None
    return None


def task_metrics(task: str, baseline: TaskResult | None, candidate: TaskResult | None,
                 overrides: dict[str, bool]) -> list[MetricValue]:
    """Every aggregate the two runs report for a task, keyed by filter and metric."""
    keys: dict[tuple[str, str], None] = {}
    for result in (baseline, candidate):
        if result is None:
            continue
        for filt, metrics in result.metrics.items():
            for metric in metrics:
                keys[(filt, metric)] = None
    out = []
    for filt, metric in keys:
        hib = overrides.get(f"{task}/{metric}/{filt}")
        if hib is None:
            reported = [r.higher_is_better.get(metric) for r in (candidate, baseline) if r is not None]
            hib = next((v for v in reported if v is not None), higher_is_better(metric))
        out.append(MetricValue(
            ref=f"{task}/{metric}/{filt}", task=task, metric=metric, filter=filt,
            baseline=_num(baseline.value(metric, filt)) if baseline else None,
            candidate=_num(candidate.value(metric, filt)) if candidate else None,
            higher_is_better=hib, bounded=_fraction(metric, candidate, baseline)))
    return out


def drill_key(task: str, origin: TaskOrigin | None, decision: Decision,
              results: list[TaskResult]) -> tuple[str, str] | None:
    """(metric, filter) whose per-sample scores say right/wrong: the task's gate metric, else the first scored."""
    names = {task} | ({origin.suite_task} if origin and origin.suite_task else set())
    for gate in decision.gates:
        try:
            ref = MetricRef.parse(gate.metric)
        except ValueError:
            continue
        if ref.task in names and not ref.derived:
            key = MetricKey.from_ref(ref)
            if any(s.score(key.metric, key.filter) is not None for r in results for s in r.samples[:50]):
                return key.metric, key.filter
    for result in results:
        for filt, metrics in result.metrics.items():
            for metric in metrics:
                if any(s.score(metric, filt) is not None for s in result.samples[:50]):
                    return metric, filt
    for result in results:
        for sample in result.samples[:1]:
            for filt, scores in sample.scores.items():
                for metric in scores:
                    return metric, filt
    return None


#: A sample as plain data while it is paired and budgeted (tens of thousands per report); it becomes
#: SampleView objects in one validation call at the end.
RawSample = dict[str, Any]


def _side(sample: SampleRecord, key: tuple[str, str] | None) -> dict[str, Any]:
    metric, filt = key if key else ("", "none")
    response = sample.responses[0] if sample.responses else None
    return {"response": response, "response_chars": len(response or ""), "n_responses": len(sample.responses),
            "extracted": sample.filtered.get(filt) if key else None,
            "score": _num(sample.score(metric, filt)) if key else None}


def _view(doc_id: DocId, prompt: str | None, target: str | None, change: Change,
          baseline: dict[str, Any] | None = None, candidate: dict[str, Any] | None = None) -> RawSample:
    return {"doc_id": doc_id, "prompt": prompt, "prompt_chars": len(prompt or ""), "target": target,
            "baseline": baseline, "candidate": candidate, "change": change}


def _change(base: dict[str, Any], cand: dict[str, Any], hib: bool) -> Change:
    if base["score"] is None or cand["score"] is None:
        return "unscored"
    if base["score"] == cand["score"]:
        return "same"
    better = cand["score"] > base["score"] if hib else cand["score"] < base["score"]
    return "improved" if better else "regressed"


def pair_samples(baseline: TaskResult | None, candidate: TaskResult | None, key: tuple[str, str] | None,
                 hib: bool) -> list[RawSample]:
    """Baseline and candidate samples paired by doc_id (same document hash); unpaired ones kept."""
    base = {s.doc_id: s for s in baseline.samples} if baseline else {}
    cand = {s.doc_id: s for s in candidate.samples} if candidate else {}
    out: list[RawSample] = []
    for doc_id in sorted_ids(base.keys() | cand.keys()):
        b, c = base.get(doc_id), cand.get(doc_id)
        if b is not None and c is not None and (not b.doc_hash or not c.doc_hash or b.doc_hash == c.doc_hash):
            bs, cs = _side(b, key), _side(c, key)
            out.append(_view(doc_id, c.prompt if c.prompt is not None else b.prompt,
                             c.target if c.target is not None else b.target, _change(bs, cs, hib), bs, cs))
            continue
        if b is not None:
            out.append(_view(doc_id, b.prompt, b.target, "only_baseline", baseline=_side(b, key)))
        if c is not None:
            out.append(_view(doc_id, c.prompt, c.target, "only_candidate", candidate=_side(c, key)))
    return out


def _limited(samples: list[RawSample], limit: int | None) -> list[RawSample]:
    """At most `limit` samples, changed pairs first, then in document order."""
    if limit is None or len(samples) <= limit:
        return samples
    rank = {c: i for i, c in enumerate(CHANGES)}
    chosen = sorted(range(len(samples)), key=lambda i: (rank[samples[i]["change"]], i))[:limit]
    return [samples[i] for i in sorted(chosen)]


def task_section(task: str, origin: TaskOrigin | None, have_contract: bool, decision: Decision,
                 baseline: TaskResult | None, candidate: TaskResult | None,
                 overrides: dict[str, bool], sample_limit: int | None) -> tuple[TaskSection, list[RawSample]]:
    """One leaf task's section (without samples) and the samples it may show: none for private splits."""
    results = [r for r in (baseline, candidate) if r is not None]
    key = drill_key(task, origin, decision, results)
    hib = True
    if key:
        hib = overrides.get(f"{task}/{key[0]}/{key[1]}", higher_is_better(key[0]))
    pairs = pair_samples(baseline, candidate, key, hib)
    counts = {c: 0 for c in CHANGES}
    for pair in pairs:
        counts[pair["change"]] += 1
    reason = withheld_reason(origin, have_contract)
    protocol = results[-1].protocol.model_dump(mode="json", exclude_defaults=True) if results else {}
    section = TaskSection(
        task=task, suite_task=origin.suite_task if origin else None,
        split=origin.split if origin else None, visibility=origin.visibility if origin else None,
        samples_withheld=reason if pairs else None,
        n_baseline=baseline.n_samples or len(baseline.samples) if baseline else 0,
        n_candidate=candidate.n_samples or len(candidate.samples) if candidate else 0,
        metrics=task_metrics(task, baseline, candidate, overrides),
        drill_metric=f"{key[0]}/{key[1]}" if key else None, drill_higher_is_better=hib,
        counts=counts, samples_total=len(pairs), protocol=protocol)
    return section, [] if reason else _limited(pairs, sample_limit)
