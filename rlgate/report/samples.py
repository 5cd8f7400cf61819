"""Per-task sections: aggregates, paired per-sample verdicts and the privacy rule for samples.

A task in a `release_gate_only` split gets counts and aggregates only; its samples are never
copied into the report model. Without a contract, split visibility is unknown, so samples are
withheld too (fail closed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from rlgate.contract.loader import ResolvedContract
from rlgate.contract.metrics import MetricRef, higher_is_better, is_bounded
from rlgate.contract.models import RELEASE_GATE_ONLY
from rlgate.engine.models import Decision
from rlgate.report.model import CHANGES, OWN_SUCCESSES, SUCCESS_ONLY, Change, MetricValue, TaskSection
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
            higher_is_better=hib, bounded=_fraction(metric, candidate, baseline),
            basis=OWN_SUCCESSES if metric in SUCCESS_ONLY else None))
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


#: A task's samples as plain columns (SampleTable's names) while they are paired and budgeted (tens of
#: thousands of rows per report); they become a SampleTable in one validation call at the end.
RawTable = dict[str, list[Any]]
_NO_SCORES: dict[str, Any] = {}


def _rows(baseline: TaskResult | None, candidate: TaskResult | None
          ) -> tuple[list[DocId], list[SampleRecord | None], list[SampleRecord | None]]:
    """Documents in order, paired by doc_id (same document hash); a document whose runs' hashes differ gives
    two rows (the baseline's, then the candidate's)."""
    aligned = _aligned(baseline, candidate)
    return aligned if aligned is not None else _rows_by_id(baseline, candidate)


def _rows_by_id(baseline: TaskResult | None, candidate: TaskResult | None
                ) -> tuple[list[DocId], list[SampleRecord | None], list[SampleRecord | None]]:
    base = {s.doc_id: s for s in baseline.samples} if baseline else {}
    cand = {s.doc_id: s for s in candidate.samples} if candidate else {}
    ids: list[DocId] = []
    bs: list[SampleRecord | None] = []
    cs: list[SampleRecord | None] = []
    for doc_id in sorted_ids(base.keys() | cand.keys()):
        b, c = base.get(doc_id), cand.get(doc_id)
        rows: list[tuple[SampleRecord | None, SampleRecord | None]]
        if b is not None and c is not None and (not b.doc_hash or not c.doc_hash or b.doc_hash == c.doc_hash):
            rows = [(b, c)]
        else:
            rows = [(b, None)] if b is not None else []
            rows += [(None, c)] if c is not None else []
        for brow, crow in rows:
            ids.append(doc_id)
            bs.append(brow)
            cs.append(crow)
    return ids, bs, cs


def _aligned(baseline: TaskResult | None, candidate: TaskResult | None
             ) -> tuple[list[DocId], list[SampleRecord | None], list[SampleRecord | None]] | None:
    """The common case without building an index: both runs hold the same distinct documents, already in
    document order, with matching hashes; None otherwise (then `_rows` pairs them by id)."""
    if baseline is None or candidate is None or len(baseline.samples) != len(candidate.samples):
        return None
    bs: list[SampleRecord | None] = list(baseline.samples)
    cs: list[SampleRecord | None] = list(candidate.samples)
    ids = [s.doc_id for s in baseline.samples]
    if (ids != [s.doc_id for s in candidate.samples] or ids != sorted_ids(ids) or len(set(ids)) != len(ids)
            or not all(b.doc_hash == c.doc_hash or not b.doc_hash or not c.doc_hash
                       for b, c in zip(baseline.samples, candidate.samples, strict=True))):
        return None
    return ids, bs, cs


def _scores(samples: list[SampleRecord | None], key: tuple[str, str] | None) -> list[float | None]:
    if key is None:
        return [None] * len(samples)
    metric, filt = key
    values = [s.scores.get(filt, _NO_SCORES).get(metric) if s is not None else None for s in samples]
    # a finite float (most scores) is its own number; anything else goes through _num
    return [v if type(v) is float and v - v == 0 else _num(v) for v in values]


def _changes(base: list[float | None], cand: list[float | None], bs: list[SampleRecord | None],
             cs: list[SampleRecord | None], hib: bool) -> list[Change]:
    out: list[Change] = []
    for b, c, bsample, csample in zip(base, cand, bs, cs, strict=True):
        if csample is None:
            out.append("only_baseline")
        elif bsample is None:
            out.append("only_candidate")
        elif b is None or c is None:
            out.append("unscored")
        elif b == c:
            out.append("same")
        else:
            out.append("improved" if (c > b if hib else c < b) else "regressed")
    return out


def _side_columns(role: str, samples: list[SampleRecord | None], scores: list[float | None],
                  key: tuple[str, str] | None) -> RawTable:
    filt = key[1] if key else ""
    if any(s is None for s in samples):
        responses = [(s.responses[0] if s.responses else None) if s is not None else None for s in samples]
        chars = [len(r or "") if s is not None else -1 for s, r in zip(samples, responses, strict=True)]
        counts = [len(s.responses) if s is not None else 0 for s in samples]
        extracted = [s.filtered.get(filt) if s is not None else None for s in samples] if key else None
    else:  # every row has this run's sample: the same columns without a test per row
        present = cast(list[SampleRecord], samples)
        lists = [s.responses for s in present]
        responses = [r[0] if r else None for r in lists]
        chars = [len(r) if r is not None else 0 for r in responses]
        counts = [len(r) for r in lists]
        extracted = [s.filtered.get(filt) for s in present] if key else None
    return {f"{role}_response": responses, f"{role}_chars": chars, f"{role}_n": counts,
            f"{role}_extracted": extracted if extracted is not None else [None] * len(samples),
            f"{role}_score": scores}


def pair_samples(baseline: TaskResult | None, candidate: TaskResult | None, key: tuple[str, str] | None,
                 hib: bool, changes_only: bool = False) -> tuple[list[Change], RawTable]:
    """Baseline and candidate samples paired by doc_id (same document hash), unpaired ones kept: each row's
    change, and the rows as columns (none when `changes_only`: a task whose samples are withheld)."""
    ids, bs, cs = _rows(baseline, candidate)
    base_scores, cand_scores = _scores(bs, key), _scores(cs, key)
    changes = _changes(base_scores, cand_scores, bs, cs, hib)
    if changes_only:
        return changes, {}
    prompts = [c.prompt if c is not None and c.prompt is not None else b.prompt if b is not None else None
               for b, c in zip(bs, cs, strict=True)]
    table: RawTable = {
        "doc_id": ids, "change": changes,
        "target": [c.target if c is not None and c.target is not None else b.target if b is not None else None
                   for b, c in zip(bs, cs, strict=True)],
        "prompt": prompts, "prompt_prefix": [None] * len(ids), "prompt_chars": [len(p or "") for p in prompts],
        **_side_columns("baseline", bs, base_scores, key), **_side_columns("candidate", cs, cand_scores, key),
    }
    return changes, table


def select_rows(table: RawTable, rows: list[int]) -> RawTable:
    return {name: [column[i] for i in rows] for name, column in table.items()}


def _limited(table: RawTable, limit: int | None) -> RawTable:
    """At most `limit` samples, changed pairs first, then in document order."""
    changes = table["change"]
    if limit is None or len(changes) <= limit:
        return table
    rank = {c: i for i, c in enumerate(CHANGES)}
    chosen = sorted(range(len(changes)), key=lambda i: (rank[changes[i]], i))[:limit]
    return select_rows(table, sorted(chosen))


def task_section(task: str, origin: TaskOrigin | None, have_contract: bool, decision: Decision,
                 baseline: TaskResult | None, candidate: TaskResult | None,
                 overrides: dict[str, bool], sample_limit: int | None) -> tuple[TaskSection, RawTable]:
    """One leaf task's section (without samples) and the samples it may show: none for private splits."""
    results = [r for r in (baseline, candidate) if r is not None]
    key = drill_key(task, origin, decision, results)
    hib = True
    if key:
        hib = overrides.get(f"{task}/{key[0]}/{key[1]}", higher_is_better(key[0]))
    reason = withheld_reason(origin, have_contract)
    pairs, table = pair_samples(baseline, candidate, key, hib, changes_only=reason is not None)
    counts = {c: 0 for c in CHANGES}
    for change in pairs:
        counts[change] += 1
    protocol = results[-1].protocol.model_dump(mode="json", exclude_defaults=True, exclude={"scoring"}) \
        if results else {}
    section = TaskSection(
        task=task, suite_task=origin.suite_task if origin else None,
        split=origin.split if origin else None, visibility=origin.visibility if origin else None,
        samples_withheld=reason if pairs else None,
        n_baseline=baseline.n_samples or len(baseline.samples) if baseline else 0,
        n_candidate=candidate.n_samples or len(candidate.samples) if candidate else 0,
        metrics=task_metrics(task, baseline, candidate, overrides),
        drill_metric=f"{key[0]}/{key[1]}" if key else None, drill_higher_is_better=hib,
        counts=counts, samples_total=len(pairs), protocol=protocol)
    return section, {} if reason else _limited(table, sample_limit)
