"""Typed, harness-neutral evaluation results: what harnesses and importers produce, the engine and reports read.

lm-eval's flat `"metric,filter"` keys never appear here: its adapter parses them once into nested
`filter -> metric -> value` mappings and `MetricKey`s. A harness without filters (inspect, a plain
JSONL of scores) uses the single filter `NO_FILTER`. Sample ids are `int | str` (inspect's are either),
a metric may declare a range other than [0, 1], and a sample may carry an agent trajectory. Every
sample is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rlgate._core.text import visible_surrogates
from rlgate.contract.metrics import MetricRef
from rlgate.results.manifest import RunManifest

RESULTS_SCHEMA_VERSION = 1
INVALID_ANSWER = "[invalid]"
#: the filter of a metric whose harness has no filter pipeline
NO_FILTER = "none"
#: a document's id within its task: lm-eval's are ints, inspect's ints or strings
DocId = int | str

#: A per-sample metric value: a number, or a list for per-instruction metrics (IFEval inst_level_*).
SampleValue = float | list[float]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricKey(_Model):
    """A structured metric name: leaf task or group, lm-eval metric, lm-eval filter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    metric: str
    filter: str = NO_FILTER

    @classmethod
    def from_ref(cls, ref: MetricRef, default_filter: str = NO_FILTER) -> MetricKey:
        """The key a reference reads: its own filter, else the default its harness's vocabulary gives
        (`GateConfig.default_filter`); a reference from a decision file already names its filter."""
        return cls(task=ref.task, metric=ref.metric, filter=ref.filter or default_filter)

    def __str__(self) -> str:
        return f"{self.task}/{self.metric}/{self.filter}"


def doc_order(doc_id: DocId) -> tuple[int, int | str]:
    """A sort key for ids of either type: ints by value first, then strings."""
    return (0, doc_id) if isinstance(doc_id, int) else (1, doc_id)


def sorted_ids(ids: Iterable[DocId]) -> list[DocId]:
    """Ids in `doc_order`; lm-eval's are all ints, which sort the same without a key per id."""
    out = list(ids)
    if all(type(i) is int for i in out):
        out.sort()
        return out
    return sorted(out, key=doc_order)


class ToolCall(_Model):
    """A tool call as the model emitted it; `parse_error` when its arguments were not valid."""

    id: str | None = None
    function: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None


class TrajectoryStep(_Model):
    """One message of an agent trajectory: a model turn (maybe with tool calls) or a tool's result."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = Field(None, description="for role tool: the call this result answers")
    error: str | None = Field(None, description="for role tool: the tool's error (timeout, permission, ...)")


class Trajectory(_Model):
    """A whole agent run on one sample: every step, the limits it hit, what it cost."""

    steps: list[TrajectoryStep] = Field(default_factory=list)
    epoch: int = 1
    limits_hit: list[str] = Field(default_factory=list, description="message / token / time limits reached")
    error: str | None = Field(None, description="sample error (crash, sandbox failure); scored as a failure")
    total_tokens: int | None = None
    working_time_s: float | None = None
    final_state: dict[str, Any] | None = Field(
        None, description="the task's state store when the run ended (e.g. a tool's database), where logged")
    explanation: str | None = Field(None, description="the scorer's explanation of its verdict")

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for step in self.steps for call in step.tool_calls]


class MetricRange(_Model):
    """The range a harness declares for a metric that is not a fraction in [0, 1] (e.g. a 0-10 judge score)."""

    low: float
    high: float


_M = TypeVar("_M", bound=BaseModel)
_GIVEN_SETS: dict[tuple[type[BaseModel], frozenset[str]], set[str]] = {}


def construct_compact(cls: type[_M], state: dict[str, Any], given: frozenset[str]) -> _M:
    """What `cls.model_construct(**values given)` builds from `state` (every field, in declaration order, each
    already of its declared type), in a fraction of the memory: readers make one per sample, 10^6 a run.

    The fields are set one by one on the new instance, never through its `__dict__`: CPython then keeps them
    in the instance's inline values, laid out by the class's shared keys (~130 bytes for SampleRecord's 12
    fields; a materialized instance dict adds 64 bytes, and one assigned or `update`-d whole ~300 more). The
    dict appears only if something asks for `__dict__` (pydantic's dump, copy and equality do), for that
    record alone. Instances with the same given fields share one fields-set (~730 bytes each otherwise),
    which is sound because read records are never assigned to through pydantic (readers set a field with
    `set_field`), and pydantic's model_copy copies the set before adding to it."""
    obj = cls.__new__(cls)
    for name, value in state.items():
        _SET(obj, name, value)
    return _constructed(obj, given)


def _constructed(obj: _M, given: frozenset[str]) -> _M:
    """`obj`, its fields set, completed as pydantic's model_construct leaves an instance: the fields-set shared
    by every instance of its class given the same fields, no extra, no private values."""
    fields_set = _GIVEN_SETS.get((type(obj), given))
    if fields_set is None:
        fields_set = _GIVEN_SETS[(type(obj), given)] = set(given)
    _SET(obj, "__pydantic_fields_set__", fields_set)
    _SET(obj, "__pydantic_extra__", None)
    _SET(obj, "__pydantic_private__", None)
    return obj


_SET = object.__setattr__

#: Set a field of a record a reader built (`construct_compact`) without pydantic's assignment, which would add
#: the name to a fields-set other records share, and without materializing the instance's `__dict__`
#: (`object.__setattr__` itself: readers call it a dozen times a record, 10^6 records a run).
set_field: Callable[[Any, str, Any], None] = _SET


_NO_SCORES: dict[str, SampleValue] = {}  # never written: what `score` looks in for a filter the sample lacks


class SampleRecord(_Model):
    """One document's outcome in one run: inputs, raw and filtered responses, per-metric scores."""

    doc_id: DocId
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
    trajectory: Trajectory | None = Field(None, description="the agent trajectory, for agent and tool-use tasks")

    def limits_reached(self) -> list[str]:
        """The limits this sample's run hit, once each: the trajectory's own, then those applied after reading
        (the contract's tool-call budget, recorded in extra["limits_hit"] by rlgate.results.agent_metrics)."""
        own = self.trajectory.limits_hit if self.trajectory is not None else []
        return list(dict.fromkeys([*own, *(self.extra.get("limits_hit") or [])]))

    def score(self, metric: str, filter_name: str) -> SampleValue | None:
        return self.scores.get(filter_name, _NO_SCORES).get(metric)


def compact_record(doc_id: DocId, doc_hash: str, prompt: str | None, target: str | None, responses: list[str],
                   filtered: dict[str, str], scores: dict[str, dict[str, SampleValue]], doc: dict[str, Any] | None,
                   response_tokens: list[int] | None, truncated: list[bool] | None, extra: dict[str, Any],
                   trajectory: Trajectory | None, given: frozenset[str]) -> SampleRecord:
    """`construct_compact(SampleRecord, ...)` from the values themselves, for the lm-eval reader's hot loop:
    one call per document of every run, without the state dict and the loop over it (~0.6 us a record).
    The fields are set in their declaration order (the class's shared keys; tests check it)."""
    obj = _NEW(SampleRecord)
    _SET(obj, "doc_id", doc_id)
    _SET(obj, "doc_hash", doc_hash)
    _SET(obj, "prompt", prompt)
    _SET(obj, "target", target)
    _SET(obj, "responses", responses)
    _SET(obj, "filtered", filtered)
    _SET(obj, "scores", scores)
    _SET(obj, "doc", doc)
    _SET(obj, "response_tokens", response_tokens)
    _SET(obj, "truncated", truncated)
    _SET(obj, "extra", extra)
    _SET(obj, "trajectory", trajectory)
    return _constructed(obj, given)


_NEW = BaseModel.__new__


class CorruptScore(_Model):
    """A per-sample score that cannot be used: NaN / +-inf, not a number where the metric is numeric, or outside
    the range its harness's vocabulary gives the metric (a fraction of 1.05, a negative count).

    The adapter takes it out of the sample's `scores` and lists it here, so it is never averaged and
    never quietly left out: the engine counts it, fails the gates on its metric closed (unless the
    contract's `allow_corrupt` tolerates it) and lists it in decision.json.
    """

    doc_id: DocId
    metric: str
    filter: str = NO_FILTER
    problem: Literal["non_finite", "wrong_type", "out_of_range"]
    value: str = Field(description="the stored value as written (JSON, shortened)")
    where: str | None = Field(None, description="file:line of the sample, where the harness knows it")


class TaskProtocol(_Model):
    """What must match between two runs of a task for their scores to be comparable."""

    version: str | None = None
    num_fewshot: int | None = None
    generation_kwargs: dict[str, Any] = Field(default_factory=dict)
    filters: list[str] = Field(default_factory=list)
    task_hash: str | None = None
    dataset: str | None = Field(None, description="dataset path / data files the task read")
    agent: dict[str, Any] = Field(
        default_factory=dict, description="agent protocol: epochs, limits, task arguments, tools (agent tasks)")
    scoring: dict[str, Any] = Field(
        default_factory=dict, description="the scoring definition as the harness recorded it, field -> value "
        "(lm-eval: metric_list, filter_list, doc_to_target, process_results; inspect: scorers with their arguments)")


class TaskResult(_Model):
    """A leaf task's aggregates (as lm-eval reported them) and every sample."""

    task: str
    metrics: dict[str, dict[str, float | None]] = Field(default_factory=dict, description="filter -> metric -> value")
    stderr: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    higher_is_better: dict[str, bool] = Field(default_factory=dict)
    metric_ranges: dict[str, MetricRange] = Field(
        default_factory=dict, description="metric -> declared range, for metrics that are not fractions")
    n_samples: int = Field(0, description="documents evaluated (lm-eval's n-samples effective)")
    n_expected: int | None = Field(
        None, description="documents the harness says a complete run of the task holds (lm-eval's n-samples "
        "original, before --limit); coverage is judged against it, never against n_samples")
    protocol: TaskProtocol = Field(default_factory=TaskProtocol)
    samples: list[SampleRecord] = Field(default_factory=list)
    corrupt: list[CorruptScore] = Field(
        default_factory=list, description="per-sample scores taken out of `samples` because they are unusable")
    duplicate_lines: int = Field(0, description="identical duplicate sample lines collapsed while reading")
    def value(self, metric: str, filter_name: str) -> float | None:
        return self.metrics.get(filter_name, {}).get(metric)

    @property
    def is_agent(self) -> bool:
        """An agent task: its samples hold trajectories (a harness writes them for every sample or none)."""
        return bool(self.samples) and self.samples[0].trajectory is not None


class RunProvenance(_Model):
    """Where a run came from, for the rollout card and for refusing silent comparisons."""

    source: str = Field(description="folder or file the results were read from")
    harness: str | None = Field(None, description="the harness whose outputs these are")
    harness_version: str | None = None
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
    seeds: dict[str, int] = Field(default_factory=dict, description="seeds the harness's own output records")
    manifest: RunManifest | None = Field(None, description="rlgate run manifest, when rlgate produced the run")

    @field_validator("source", "model")
    @classmethod
    def _writable(cls, value: str | None) -> str | None:
        """A path of bytes that are not UTF-8 (or a folder named so, as BFCL's model) is held by Python as lone
        surrogates, which no decision or report file can take: kept as visible `\\udcXX` text."""
        return visible_surrogates(value)


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

    def metric_range(self, name: str, metric: str) -> MetricRange | None:
        """The range the harness declared for `metric` of a task or group (None: a fraction or unknown)."""
        for leaf in self.leaves(name):
            declared = self.tasks[leaf].metric_ranges.get(metric)
            if declared is not None:
                return declared
        return None
