"""What a harness says a task's metrics mean: the typed answer of `Harness.vocabulary(task)`.

The model is neutral data (the contract layer knows no harness): each harness fills it for its own
tasks, the check right after a contract loads (`rlgate.harness.vocabulary`) compares the gates with it,
and the engine reads it from `GateConfig.vocabularies` (default filter, value range, the hint for
getting per-sample results) without importing any harness.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.contract.metrics import AGENT_METRICS, DERIVED_METRICS, higher_is_better

#: what a metric's per-sample values are: a fraction in [0, 1], a count, tokens or seconds (>= 0), or any number
ValueKind = Literal["fraction", "count", "tokens", "seconds", "unbounded"]
#: the filter of a metric whose harness has no filter pipeline (results.models.NO_FILTER)
NO_FILTER = "none"
GENERIC_SAMPLES_HINT = "re-run the harness with per-sample results logged"

_AGENT_KINDS: dict[str, ValueKind] = {"steps": "count", "steps_to_success": "count",
                                      "tokens_to_success": "tokens", "time_to_success": "seconds"}
_DERIVED_KINDS: dict[str, ValueKind] = {"response_length_mean": "unbounded"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricInfo(_Model):
    """One metric of a task: the filters it is reported under, its direction and its range of values."""

    filters: tuple[str, ...] = Field((), description="filters it is reported under; empty: any (not known)")
    higher_is_better: bool = True
    kind: ValueKind | None = Field(None, description="what its per-sample values are; None: not known")

    @property
    def value_range(self) -> tuple[float, float] | None:
        """[low, high] a per-sample value must lie in (None: not known, so not checked)."""
        if self.kind == "fraction":
            return (0.0, 1.0)
        if self.kind in ("count", "tokens", "seconds"):
            return (0.0, math.inf)
        return None


class TaskVocabulary(_Model):
    """A task's metrics as its harness knows them.

    `closed`: the harness knows every metric the task reports, so a gate on another one is refused at
    load (with the closest match); an open vocabulary (a task the harness has no catalog entry for)
    accepts any metric name and describes only those it knows.
    """

    harness: str
    metrics: dict[str, MetricInfo] = Field(default_factory=dict)
    closed: bool = False
    default_filter: str = Field(NO_FILTER, description="the filter a metric reference without one reads")
    samples_hint: str = Field(GENERIC_SAMPLES_HINT, description="how to get per-sample results from the harness")
    samples_option: str = Field("per-sample results", description="what paired tests need, in the harness's words")

    def ranges(self) -> dict[str, tuple[float, float]]:
        """metric -> [low, high] of every metric the harness gives a range (what a per-sample value must lie in)."""
        return {name: info.value_range for name, info in self.metrics.items() if info.value_range is not None}

    def metric(self, name: str) -> MetricInfo:
        """The metric as the harness describes it; rlgate's own (derived, agent) and unknown names by convention."""
        known = self.metrics.get(name)
        return known if known is not None else neutral_metric(name)


def neutral_metric(name: str) -> MetricInfo:
    """rlgate's derived and agent metrics (defined by rlgate, the same for every harness); other names unknown."""
    if name in AGENT_METRICS:
        return MetricInfo(higher_is_better=higher_is_better(name), kind=_AGENT_KINDS.get(name, "fraction"))
    if name in DERIVED_METRICS:
        return MetricInfo(higher_is_better=higher_is_better(name), kind=_DERIVED_KINDS.get(name, "fraction"))
    return MetricInfo(higher_is_better=higher_is_better(name))


def open_vocabulary(harness: str, *, samples_hint: str = GENERIC_SAMPLES_HINT,
                    samples_option: str = "per-sample results") -> TaskVocabulary:
    """A task the harness has no catalog entry for: any metric name is accepted."""
    return TaskVocabulary(harness=harness, samples_hint=samples_hint, samples_option=samples_option)
