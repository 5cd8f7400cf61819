"""The trend report's model: every gated metric of a training run against step, from the history's records.

`rlgate history --html` draws it (rlgate.report.trend_html); nothing here renders. Intervals are put on
the value axis: a one-run gate (hard) stored the interval of the candidate's value; a comparative gate
(primary, regression, diagnostic) stored the paired interval of the change over the baseline, which is
drawn around the baseline's value (baseline + interval), so the gate's evidence reads off the same axis
as the value. Monitor findings (cross-checkpoint rules that fired) become markers on the step axis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.contract.metrics import MetricRef, higher_is_better, is_bounded
from rlgate.store.records import CheckpointRecord

TREND_SCHEMA_VERSION = 1
#: Draw order of the series: the gates the decision rests on first, recorded extras last.
KIND_ORDER = ("primary", "hard", "regression", "diagnostic")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrendPoint(_Model):
    """One checkpoint's value of one metric."""

    step: int
    checkpoint: str
    decision: str | None = None
    value: float
    low: float | None = Field(None, description="interval on the value axis (see interval_on)")
    high: float | None = None
    baseline: float | None = None
    verdict: str | None = Field(None, description="the gate's verdict at this checkpoint; None when not gated")
    deciding: bool = False


class TrendSeries(_Model):
    """One metric across the run's checkpoints."""

    metric: str
    kind: str | None = Field(None, description="gate kind (primary, hard, regression, diagnostic); None when the "
                             "metric was only recorded")
    bounded: bool = Field(description="a fraction: shown in percent")
    higher_is_better: bool
    interval_on: Literal["value", "baseline + change", "none"] = "none"
    ci_level: float | None = None
    points: list[TrendPoint]


class TrendMarker(_Model):
    """A monitor finding on the step axis (a cross-checkpoint rule that fired)."""

    rule: str
    severity: str
    message: str
    step_start: int | None = None
    step_end: int | None = None
    action: str | None = None
    rollback_to: str | None = None
    metrics: list[str] = Field(default_factory=list)


class TrendCheckpoint(_Model):
    step: int
    checkpoint: str
    decision: str | None = None
    deciding_gates: list[str] = Field(default_factory=list)
    recorded_at: float


class TrendConsultation(_Model):
    task: str
    used: int
    budget: int | None = None
    over_budget: bool = False


class TrendRun(_Model):
    run: str
    contract: str | None = Field(None, description="the contract of these checkpoints when the run's were gated "
                                 "under several (one trend per contract)")
    checkpoints: list[TrendCheckpoint]
    series: list[TrendSeries]
    markers: list[TrendMarker] = Field(default_factory=list)
    best: str | None = None
    primary: str | None = None
    rules_note: str | None = Field(None, description="why no cross-checkpoint rule was evaluated, if none was")
    consultations: list[TrendConsultation] = Field(default_factory=list)

    @property
    def steps(self) -> list[int]:
        return [c.step for c in self.checkpoints]


class TrendReport(_Model):
    schema_version: int = TREND_SCHEMA_VERSION
    history: str = Field(description="where the history lives (a password redacted)")
    contract: str | None = None
    runs: list[TrendRun]
    generated_at: float | None = None
    rlgate_version: str = ""


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else None


def _ref(metric: str) -> tuple[bool, bool]:
    """(bounded, higher_is_better) of a stored metric; unparsable names count as unbounded, higher better."""
    try:
        ref = MetricRef.parse(metric)
    except ValueError:
        return False, True
    # `train/...` is a training-log value recorded beside the gates (the reward), never a fraction of documents
    return is_bounded(ref.metric) and ref.task != "train", higher_is_better(ref.metric)


def _deciding(metric: str, names: Sequence[str]) -> bool:
    """A deciding gate is named by its metric, or by the metric without its filter (the gate's short name)."""
    return any(metric == n or metric.startswith(n + "/") for n in names)


def _point(rec: CheckpointRecord, metric: str, value: float) -> tuple[TrendPoint, dict[str, Any]]:
    gate: Mapping[str, Any] = (rec.extra.get("gates") or {}).get(metric) or {}
    ci = gate.get("ci")
    lo = hi = None
    baseline = _finite(gate.get("baseline"))
    if isinstance(ci, list) and len(ci) == 2 and all(_finite(c) is not None for c in ci):
        if gate.get("on") == "delta":
            if baseline is not None:
                lo, hi = baseline + float(ci[0]), baseline + float(ci[1])
        else:
            lo, hi = float(ci[0]), float(ci[1])
    point = TrendPoint(step=rec.step, checkpoint=rec.checkpoint, decision=rec.decision, value=value, low=lo,
                       high=hi, baseline=baseline, verdict=gate.get("verdict"),
                       deciding=_deciding(metric, rec.extra.get("deciding_gates") or []))
    return point, dict(gate)


def trend_series(records: Sequence[CheckpointRecord]) -> list[TrendSeries]:
    """One series per stored metric, gated metrics first (by gate kind), then recorded extras, by name."""
    points: dict[str, list[TrendPoint]] = {}
    gates: dict[str, dict[str, Any]] = {}
    for rec in sorted(records, key=lambda r: (r.step, r.recorded_at)):
        for metric, raw in rec.metrics.items():
            value = _finite(raw)
            if value is None:
                continue
            point, gate = _point(rec, metric, value)
            points.setdefault(metric, []).append(point)
            if gate:
                gates[metric] = gate  # the latest checkpoint's gate describes the series
    out = []
    for metric, pts in points.items():
        gate = gates.get(metric, {})
        bounded, hib = _ref(metric)
        # a name rlgate takes for a fraction, with values outside [0, 1], is not one
        bounded = bounded and all(0.0 <= p.value <= 1.0 for p in pts)
        on = "none" if not any(p.low is not None for p in pts) else (
            "baseline + change" if gate.get("on") == "delta" else "value")
        out.append(TrendSeries(metric=metric, kind=gate.get("kind"), bounded=bounded, higher_is_better=hib,
                               interval_on=on, ci_level=_finite(gate.get("ci_level")), points=pts))
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    return sorted(out, key=lambda s: (rank.get(s.kind or "", len(rank)), s.metric))


def trend_run(run: str, records: Sequence[CheckpointRecord], *, contract: str | None = None,
              markers: Sequence[TrendMarker] = (), best: str | None = None, primary: str | None = None,
              rules_note: str | None = None,
              consultations: Sequence[TrendConsultation] = ()) -> TrendRun:
    """The trend of one training run from its stored records (any order) and the findings on them."""
    ordered = sorted(records, key=lambda r: (r.step, r.recorded_at))
    checkpoints = [TrendCheckpoint(step=r.step, checkpoint=r.checkpoint, decision=r.decision,
                                   deciding_gates=list(r.extra.get("deciding_gates") or []),
                                   recorded_at=r.recorded_at) for r in ordered]
    series = trend_series(ordered)
    if primary is None:
        primary = next((s.metric for s in series if s.kind == "primary"), None)
    return TrendRun(run=run, contract=contract, checkpoints=checkpoints, series=series, markers=list(markers),
                    best=best, primary=primary, rules_note=rules_note, consultations=list(consultations))
