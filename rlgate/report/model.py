"""The report model: everything a reviewer sees, built once; every renderer only reads it.

Stored as `report_model.json` in the run folder so `rlgate report OUT_DIR` can re-render all
formats without the original results. Samples of `release_gate_only` tasks are never put in it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.engine.models import Decision

REPORT_SCHEMA_VERSION: Literal[1] = 1
Change = Literal["regressed", "improved", "same", "unscored", "only_baseline", "only_candidate"]
#: Order of the drill-down filter buttons and of the per-task counts.
CHANGES: tuple[Change, ...] = ("regressed", "improved", "same", "unscored", "only_baseline", "only_candidate")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricValue(_Model):
    """One aggregate metric of one task (or group) in both runs."""

    ref: str = Field(description="task/metric/filter")
    task: str
    metric: str
    filter: str = "none"
    baseline: float | None = None
    candidate: float | None = None
    higher_is_better: bool = True
    bounded: bool = Field(True, description="a fraction in [0, 1], shown in percent")

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline


class SideView(_Model):
    """One run's answer to one document."""

    response: str | None = None
    n_responses: int = 0
    extracted: str | None = Field(None, description="the filtered answer the metric scored")
    score: float | None = None


class SampleView(_Model):
    """One document with both runs' answers, for the drill-down."""

    doc_id: int
    prompt: str | None = None
    target: str | None = None
    baseline: SideView | None = None
    candidate: SideView | None = None
    change: Change


class TaskSection(_Model):
    """A leaf task: aggregates, pair counts and (unless private) the per-sample drill-down."""

    task: str
    suite_task: str | None = Field(None, description="the task or group the suite names")
    split: str | None = None
    visibility: str | None = None
    samples_withheld: str | None = Field(None, description="why no samples are shown, when none are")
    n_baseline: int = 0
    n_candidate: int = 0
    metrics: list[MetricValue] = Field(default_factory=list)
    drill_metric: str | None = Field(None, description="metric/filter the per-sample verdicts use")
    drill_higher_is_better: bool = True
    counts: dict[str, int] = Field(default_factory=dict, description="change -> documents")
    samples: list[SampleView] = Field(default_factory=list)
    samples_total: int = Field(0, description="documents before any sample limit")
    protocol: dict[str, Any] = Field(default_factory=dict)


class RadarAxis(_Model):
    """One radar axis: the raw values and their 0–100, higher-is-better normalisation."""

    ref: str
    baseline_raw: float | None = None
    candidate_raw: float | None = None
    baseline: float | None = None
    candidate: float | None = None
    higher_is_better: bool = True
    rule: str


class Regression(_Model):
    """A metric that got worse, for the Markdown summary's top regressions."""

    ref: str
    baseline: float
    candidate: float
    delta: float
    bounded: bool
    regressed_pairs: int | None = None
    gate: str | None = None
    verdict: str | None = None


class RunCard(_Model):
    """One run's provenance for the rollout card."""

    role: Literal["baseline", "candidate"]
    source: str | None = None
    model: str | None = None
    checkpoint_fingerprint: str | None = None
    lm_eval_version: str | None = None
    library_versions: dict[str, str] = Field(default_factory=dict)
    date: str | None = None
    wall_time_s: float | None = None
    response_tokens: int | None = Field(None, description="generated tokens, where known")
    responses: int = 0
    chat_template: bool | None = None
    system_instruction: str | None = None
    fewshot_as_multiturn: bool | None = None
    seeds: dict[str, Any] = Field(default_factory=dict)
    manifest: dict[str, Any] = Field(default_factory=dict, description="the run manifest's other fields")


class RolloutCard(_Model):
    """How the responses were produced and counted: what a reviewer needs to trust the numbers."""

    protocol: dict[str, Any] = Field(default_factory=dict)
    task_protocols: dict[str, dict[str, Any]] = Field(default_factory=dict)
    runs: list[RunCard] = Field(default_factory=list)
    reporting_rules: list[str] = Field(default_factory=list)
    drops: list[dict[str, Any]] = Field(default_factory=list)
    protocol_differences: list[str] = Field(default_factory=list)


class ReportModel(_Model):
    """The whole report. `decision.extensions` (other layers' sections) has private samples scrubbed."""

    schema_version: Literal[1] = REPORT_SCHEMA_VERSION
    generated_at: str
    rlgate_version: str
    title: str
    contract_name: str
    decision: Decision
    metrics: list[MetricValue] = Field(default_factory=list, description="every aggregate, raw")
    radar: list[RadarAxis] = Field(default_factory=list)
    radar_note: str = ""
    top_regressions: list[Regression] = Field(default_factory=list)
    tasks: list[TaskSection] = Field(default_factory=list)
    rollout: RolloutCard = Field(default_factory=RolloutCard)
    sample_note: str = ""
    html_name: str = "report.html"
