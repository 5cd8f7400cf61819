"""Typed evaluation results: what runners and importers produce and the engine and reports read.

lm-eval's flat `"metric,filter"` keys never appear here: the lm-eval adapter parses them once into
nested `filter -> metric -> value` mappings and `MetricKey`s. Every sample is kept.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.metrics import DEFAULT_FILTER, MetricRef, catalog_task

RESULTS_SCHEMA_VERSION = 1
INVALID_ANSWER = "[invalid]"

#: A per-sample metric value: a number, or a list for per-instruction metrics (IFEval inst_level_*).
SampleValue = float | list[float]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricKey(_Model):
    """A structured metric name: leaf task or group, lm-eval metric, lm-eval filter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    metric: str
    filter: str = "none"

    @classmethod
    def from_ref(cls, ref: MetricRef) -> MetricKey:
        filt = ref.filter or DEFAULT_FILTER.get(catalog_task(ref.task) or "", "none")
        return cls(task=ref.task, metric=ref.metric, filter=filt)

    def __str__(self) -> str:
        return f"{self.task}/{self.metric}/{self.filter}"


class SampleRecord(_Model):
    """One document's outcome in one run: inputs, raw and filtered responses, per-metric scores."""

    doc_id: int
    doc_hash: str = Field(description="hash of the document, to check pairs are the same question")
    prompt: str | None = Field(None, description="the prompt as sent (first request's context)")
    target: str | None = None
    responses: list[str] = Field(default_factory=list, description="raw generations (n per prompt)")
    filtered: dict[str, str] = Field(default_factory=dict, description="filter -> filtered (extracted) answer")
    scores: dict[str, dict[str, SampleValue]] = Field(
        default_factory=dict, description="filter -> metric -> value"
    )
    doc: dict[str, Any] | None = Field(None, description="the source document (fields as in the dataset)")
    response_tokens: list[int] | None = Field(None, description="generated tokens per response, where known")
    truncated: list[bool] | None = Field(None, description="response stopped at max_tokens, where known")
    extra: dict[str, Any] = Field(default_factory=dict, description="task-specific details, e.g. category")

    def score(self, metric: str, filter_name: str) -> SampleValue | None:
        return self.scores.get(filter_name, {}).get(metric)


class TaskProtocol(_Model):
    """What must match between two runs of a task for their scores to be comparable."""

    version: str | None = None
    num_fewshot: int | None = None
    generation_kwargs: dict[str, Any] = Field(default_factory=dict)
    filters: list[str] = Field(default_factory=list)
    task_hash: str | None = None
    dataset: str | None = Field(None, description="dataset path / data files the task read")


class TaskResult(_Model):
    """A leaf task's aggregates (as lm-eval reported them) and every sample."""

    task: str
    metrics: dict[str, dict[str, float | None]] = Field(default_factory=dict, description="filter -> metric -> value")
    stderr: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)
    n_samples: int = Field(0, description="documents evaluated (lm-eval's n-samples effective)")
    protocol: TaskProtocol = Field(default_factory=TaskProtocol)
    samples: list[SampleRecord] = Field(default_factory=list)

    def value(self, metric: str, filter_name: str) -> float | None:
        return self.metrics.get(filter_name, {}).get(metric)


class RunProvenance(_Model):
    """Where a run came from, for the rollout card and for refusing silent comparisons."""

    source: str = Field(description="folder or file the results were read from")
    model: str | None = None
    model_args: str | dict[str, Any] | None = None
    checkpoint_fingerprint: str | None = None
    lm_eval_version: str | None = None
    library_versions: dict[str, str] = Field(default_factory=dict)
    chat_template: bool | None = None
    system_instruction: str | None = None
    fewshot_as_multiturn: bool | None = None
    date: str | None = None
    wall_time_s: float | None = None
    manifest: dict[str, Any] | None = Field(None, description="rlgate run manifest, when rlgate produced the run")


class RunResult(_Model):
    """All tasks of one model's evaluation run."""

    schema_version: Literal[1] = 1
    provenance: RunProvenance
    tasks: dict[str, TaskResult] = Field(default_factory=dict, description="leaf task name -> result")
    groups: dict[str, list[str]] = Field(default_factory=dict, description="group name -> leaf tasks")
    group_metrics: dict[str, dict[str, dict[str, float | None]]] = Field(
        default_factory=dict, description="group -> filter -> metric -> value as lm-eval reported it"
    )

    def leaves(self, name: str) -> list[str]:
        """Leaf tasks behind a task or group name (empty when the run lacks it)."""
        if name in self.tasks:
            return [name]
        out: list[str] = []
        for child in self.groups.get(name, []):
            out.extend(self.leaves(child))
        return out

    def has(self, name: str) -> bool:
        return bool(self.leaves(name))
