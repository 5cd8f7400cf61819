"""Suite health: can each gated task still tell checkpoints apart, and did its difficulty move under the suite?

Pure, like the rest of the engine: the contract's settings, every reference's run and the candidate's in,
typed findings out. A task every reference scores near 0 % or near 100 % cannot discriminate (a regression
there is invisible, an improvement impossible); a candidate outside the band (40-80 % by default) gets a note,
since its suite is near a floor or ceiling for the model being gated; an anchor set (fixed documents) shows a
suite version that changed difficulty as a gap between the candidate's change on the anchors and on the task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rlgate.contract.metrics import is_bounded
from rlgate.contract.models import GateConfig, SuiteHealth
from rlgate.engine.values import leaf_values, per_document, run_values
from rlgate.results.models import MetricKey, RunResult

SCHEMA_VERSION: Literal[1] = 1
#: the gate kinds whose task must discriminate (a hard bound or a diagnostic compares with no reference)
COMPARATIVE = ("primary", "regression")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskHealth(_Model):
    """One gated metric: the candidate's value and every reference's (None: that run lacks it)."""

    task: str
    metric: str = Field(description="task/metric/filter")
    candidate: float | None
    references: dict[str, float | None] = Field(description="reference name -> its value, in the contract's order")


class HealthFinding(_Model):
    """A reason to distrust what a task can show; `warning` is shown beside the decision, `note` below it."""

    task: str
    metric: str
    kind: Literal["cannot_discriminate", "outside_band", "anchor_shift", "anchor_changed"]
    severity: Literal["warning", "note"]
    message: str


class SuiteHealthReport(_Model):
    """Everything the check read and found, stored in decision.json (extensions.suite_health)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    floor: float
    ceiling: float
    band: tuple[float, float]
    tasks: list[TaskHealth] = Field(default_factory=list)
    findings: list[HealthFinding] = Field(default_factory=list)


def _fraction(config: GateConfig, key: MetricKey) -> bool:
    vocabulary = config.vocabulary(key.task)
    if vocabulary is not None and vocabulary.metric(key.metric).kind is not None:
        return vocabulary.metric(key.metric).kind == "fraction"
    return is_bounded(key.metric)


def _keys(config: GateConfig) -> list[tuple[MetricKey, bool]]:
    """(key, higher is better) of every comparative fraction gate, each metric once, in the contract's order."""
    gates = ([config.primary] if config.primary is not None else []) + list(config.regression)
    out: dict[str, tuple[MetricKey, bool]] = {}
    for gate in gates:
        key = MetricKey.from_ref(gate.ref, config.default_filter(gate.ref.task))
        if _fraction(config, key) and str(key) not in out:
            vocabulary = config.vocabulary(key.task)
            hib = gate.higher_is_better if gate.higher_is_better is not None else (
                vocabulary.metric(key.metric).higher_is_better if vocabulary is not None else True)
            out[str(key)] = (key, hib)
    return list(out.values())


def _value(run: RunResult | None, key: MetricKey) -> float | None:
    if run is None:
        return None
    found = run_values(run, key)
    return found.aggregate if found is not None else None


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _discrimination(key: MetricKey, values: Mapping[str, float | None], spec: SuiteHealth) -> HealthFinding | None:
    known = {name: v for name, v in values.items() if v is not None}
    if not known or len(known) < len(values):
        return None  # a reference without the task cannot vouch for it either way
    listed = ", ".join(f"{name} {_pct(v)}" for name, v in known.items())
    every = "every reference" if len(known) > 1 else "the only reference"
    if all(v >= spec.ceiling for v in known.values()):
        side, fix = f"at or above {_pct(spec.ceiling)}", "use a harder task or a harder split"
    elif all(v <= spec.floor for v in known.values()):
        side, fix = f"at or below {_pct(spec.floor)}", "use an easier task, or more shots"
    else:
        return None
    return HealthFinding(task=key.task, metric=str(key), kind="cannot_discriminate", severity="warning",
                         message=f"{key.task}: this task cannot discriminate: {every} scores {side} ({listed}); "
                                 f"a change of the candidate here says little ({fix})")


def _band(key: MetricKey, value: float | None, spec: SuiteHealth) -> HealthFinding | None:
    low, high = spec.band
    if value is None or low <= value <= high:
        return None
    return HealthFinding(task=key.task, metric=str(key), kind="outside_band", severity="note",
                         message=f"{key.task}: the candidate scores {_pct(value)}, outside the {_pct(low)}-"
                                 f"{_pct(high)} band where a suite best tells checkpoints apart")


def _doc_values(run: RunResult, leaf: str, key: MetricKey) -> dict[str, tuple[str, float]]:
    """doc id -> (doc hash, per-document value) of one leaf task."""
    task = run.tasks.get(leaf)
    if task is None or not task.samples:
        return {}
    values = per_document(*leaf_values(task, key.metric, key.filter))
    return {str(s.doc_id): (s.doc_hash, float(v)) for s, v in zip(task.samples, values, strict=True)
            if not np.isnan(v)}


def _anchor(key: MetricKey, leaf: str, ids: Sequence[str], name: str, reference: RunResult, candidate: RunResult,
            spec: SuiteHealth) -> HealthFinding | None:
    base, cand = _doc_values(reference, leaf, key), _doc_values(candidate, leaf, key)
    if not base or not cand:
        return None
    missing = [i for i in ids if i not in base or i not in cand]
    changed = [i for i in ids if i in base and i in cand and base[i][0] != cand[i][0]]
    if missing or changed:
        what = "; ".join(part for part in (
            f"missing from a run: {', '.join(missing[:5])}" if missing else "",
            f"changed text: {', '.join(changed[:5])}" if changed else "") if part)
        return HealthFinding(task=leaf, metric=str(key), kind="anchor_changed", severity="warning",
                             message=f"{leaf}: anchor documents are not the same in {name} and the candidate ({what}): "
                                     "anchors must be fixed documents of every suite version")
    anchor_delta = float(np.mean([cand[i][1] - base[i][1] for i in ids]))
    whole_delta = float(np.mean([v for _, v in cand.values()]) - np.mean([v for _, v in base.values()]))
    gap = whole_delta - anchor_delta
    if abs(gap) <= spec.anchor_tolerance:
        return None
    easier = "easier" if gap > 0 else "harder"
    return HealthFinding(task=leaf, metric=str(key), kind="anchor_shift", severity="warning",
                         message=f"{leaf}: against {name} the candidate changes by {100 * anchor_delta:+.1f} points on "
                                 f"the {len(ids)} anchor documents but by {100 * whole_delta:+.1f} on the whole task: "
                                 f"the rest of the suite looks {easier} than the anchors say (a changed suite version?"
                                 f" tolerance {100 * spec.anchor_tolerance:.1f} points)")


def suite_health(config: GateConfig, spec: SuiteHealth, references: Mapping[str, RunResult | None],
                 candidate: RunResult) -> SuiteHealthReport:
    """Every comparative fraction gate's task checked against every reference (in the contract's order)."""
    report = SuiteHealthReport(floor=spec.floor, ceiling=spec.ceiling, band=spec.band)
    anchors = {a.task: a.doc_ids for a in spec.anchor_sets}
    for key, hib in _keys(config):
        values = {name: _value(run, key) for name, run in references.items()}
        cand = _value(candidate, key)
        report.tasks.append(TaskHealth(task=key.task, metric=str(key), candidate=cand, references=values))
        found = [_discrimination(key, values, spec), _band(key, cand, spec) if hib else None]
        for leaf in candidate.leaves(key.task):
            if leaf in anchors:
                found += [_anchor(key, leaf, anchors[leaf], name, run, candidate, spec)
                          for name, run in references.items() if run is not None]
        report.findings += [f for f in found if f is not None]
    read = {leaf for key, _ in _keys(config) for leaf in candidate.leaves(key.task)}
    for task in sorted(set(anchors) - read):
        report.findings.append(HealthFinding(
            task=task, metric="", kind="anchor_changed", severity="warning",
            message=f"{task}: the anchor set names a task that no primary or regression gate reads in the candidate's "
                    "results, so it was not checked (name a leaf task as the results name it)"))
    return report
