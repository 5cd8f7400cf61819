"""The report model: everything a reviewer sees, built once; every renderer only reads it.

Stored as `report_model.json` in the run folder so `rlgate report OUT_DIR` can re-render all
formats without the original results. Samples of `release_gate_only` tasks are never put in it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlgate.contract.metrics import CONDITIONAL_METRICS
from rlgate.engine.models import Decision
from rlgate.results.drops import DropsManifest
from rlgate.results.models import DocId

REPORT_SCHEMA_VERSION: Literal[1] = 1
Change = Literal["regressed", "improved", "same", "unscored", "only_baseline", "only_candidate"]
#: Order of the drill-down filter buttons and of the per-task counts.
CHANGES: tuple[Change, ...] = ("regressed", "improved", "same", "unscored", "only_baseline", "only_candidate")
#: Costs defined on successful trajectories only: a gate pairs the samples both runs solved, a run's aggregate
#: averages its own successes, so the two views of one metric differ by design and each says which it is.
SUCCESS_ONLY = frozenset(m for m in CONDITIONAL_METRICS if m.endswith("_to_success"))
OWN_SUCCESSES = "mean over each run's own successful trajectories, unpaired"


def paired_basis(n: int | None) -> str:
    """The basis of a cost gate's figures."""
    return f"paired: only the {n} trajectories both runs solved" if n is not None else \
        "paired: only the trajectories both runs solved"


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
    basis: str | None = Field(None, description="what the figures are computed over, where two views of one "
                              "metric differ by design (a cost gate pairs only samples both runs solved)")

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline


class SideView(_Model):
    """One run's answer to one document (a view of a SampleTable row)."""

    # Built on first use (defer_build): only `SampleTable.views` makes them; the gate's reports read the columns.
    model_config = ConfigDict(defer_build=True)

    response: str | None = Field(None, description="first response; capped, or None when not kept (size budget)")
    response_chars: int = Field(0, description="length of the full first response")
    n_responses: int = 0
    extracted: str | None = Field(None, description="the filtered answer the metric scored")
    score: float | None = None


class SampleView(_Model):
    """One document with both runs' answers (a view of a SampleTable row)."""

    # Built on first use (defer_build): only `SampleTable.views` makes them; the gate's reports read the columns.
    model_config = ConfigDict(defer_build=True)

    doc_id: DocId
    prompt: str | None = None
    prompt_prefix: int | None = None
    prompt_chars: int = 0
    target: str | None = None
    baseline: SideView | None = None
    candidate: SideView | None = None
    change: Change


_SIDE_COLUMNS = ("response", "chars", "n", "extracted", "score")


class SampleTable(_Model):
    """A task's documents, one list per column: compact on disk and fast to load at 10^4–10^5 rows.

    Row i is document `doc_id[i]`. `prompt` is what follows the shared prefix `prompt_prefix`
    (an index into the section's prompt_prefixes), its end kept when capped; prompts and responses
    are None when the size budget left them out. `*_chars` are the full lengths, -1 where a run has
    no answer for the document.
    """

    doc_id: list[DocId] = Field(default_factory=list)
    change: list[Change] = Field(default_factory=list)
    target: list[str | None] = Field(default_factory=list)
    prompt: list[str | None] = Field(default_factory=list)
    prompt_prefix: list[int | None] = Field(default_factory=list)
    prompt_chars: list[int] = Field(default_factory=list)
    baseline_response: list[str | None] = Field(default_factory=list)
    baseline_chars: list[int] = Field(default_factory=list)
    baseline_n: list[int] = Field(default_factory=list)
    baseline_extracted: list[str | None] = Field(default_factory=list)
    baseline_score: list[float | None] = Field(default_factory=list)
    candidate_response: list[str | None] = Field(default_factory=list)
    candidate_chars: list[int] = Field(default_factory=list)
    candidate_n: list[int] = Field(default_factory=list)
    candidate_extracted: list[str | None] = Field(default_factory=list)
    candidate_score: list[float | None] = Field(default_factory=list)

    @model_validator(mode="after")
    def _same_length(self) -> SampleTable:
        lengths = {len(getattr(self, name)) for name in type(self).model_fields}
        if len(lengths) > 1:
            raise ValueError("every column of a sample table must have one entry per document")
        return self

    def __len__(self) -> int:
        return len(self.doc_id)

    def view(self, i: int) -> SampleView:
        sides: dict[str, SideView | None] = {}
        for role in ("baseline", "candidate"):
            chars = getattr(self, f"{role}_chars")[i]
            sides[role] = None if chars < 0 else SideView(
                response=getattr(self, f"{role}_response")[i], response_chars=chars,
                n_responses=getattr(self, f"{role}_n")[i], extracted=getattr(self, f"{role}_extracted")[i],
                score=getattr(self, f"{role}_score")[i])
        return SampleView(doc_id=self.doc_id[i], prompt=self.prompt[i], prompt_prefix=self.prompt_prefix[i],
                          prompt_chars=self.prompt_chars[i], target=self.target[i], change=self.change[i], **sides)

    def views(self) -> list[SampleView]:
        return [self.view(i) for i in range(len(self))]

    def select(self, rows: list[int]) -> SampleTable:
        """The table restricted to the given row indices, in that order."""
        return type(self).model_validate({name: [getattr(self, name)[i] for i in rows]
                                          for name in type(self).model_fields})


StepKind = Literal["instruction", "observation", "action", "tool_result", "final"]


class ToolCallView(_Model):
    """A tool call as the model made it: the function and its arguments as JSON text (capped)."""

    function: str
    arguments: str = ""
    parse_error: str | None = None
    unsafe: list[str] = Field(default_factory=list, description="the contract's safety rules this call broke")


class StepView(_Model):
    """One message of a trajectory: what the agent saw, did, or got back; text capped by the size budget."""

    index: int
    role: Literal["system", "user", "assistant", "tool"]
    kind: StepKind
    text: str | None = Field(None, description="capped; None when the size budget left the steps out")
    chars: int = Field(0, description="length of the full text")
    tool_calls: list[ToolCallView] = Field(default_factory=list)
    function: str | None = Field(None, description="for a tool result: the function that answered")
    error: str | None = None
    retry: bool = Field(False, description="repeats a call (same function) whose earlier attempt failed")


class TrajectoryView(_Model):
    """One agent run on one sample (one epoch) as a reviewer opens it: outcome, cost, then every step."""

    run: Literal["baseline", "candidate"]
    doc_id: DocId
    epoch: int = 1
    change: Change
    success: float | None = None
    scores: dict[str, float] = Field(default_factory=dict, description="per-trajectory metrics and scores")
    answer: str | None = None
    explanation: str | None = None
    final_state: str | None = Field(None, description="the task's state when the run ended, as JSON text")
    turns: int = Field(0, description="model turns")
    tool_calls: int = 0
    tool_errors: int = 0
    tokens: int | None = None
    time_s: float | None = None
    limits_hit: list[str] = Field(default_factory=list)
    error: str | None = None
    safety_violations: list[str] = Field(default_factory=list)
    steps: list[StepView] = Field(default_factory=list)
    steps_total: int = Field(0, description="messages in the trajectory")
    steps_left_out: bool = Field(False, description="the size budget kept the outcome but not the steps")


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
    samples: SampleTable = Field(default_factory=SampleTable)
    prompt_prefixes: list[str] = Field(default_factory=list, description="few-shot context shared by prompts")
    samples_total: int = Field(0, description="documents before any sample limit")
    protocol: dict[str, Any] = Field(default_factory=dict)
    trajectories: list[TrajectoryView] = Field(
        default_factory=list, description="agent runs a reviewer can open, failed and changed pairs first")
    trajectories_total: int = Field(0, description="agent trajectories of both runs before any limit")

    def with_rows(self, rows: list[int]) -> TaskSection:
        """The section showing only the given sample rows; prompt prefixes no row uses are dropped."""
        table = self.samples.select(rows)
        used = sorted({p for p in table.prompt_prefix if p is not None})
        new_index = {old: new for new, old in enumerate(used)}
        table = table.model_copy(update={"prompt_prefix": [None if p is None else new_index[p]
                                                           for p in table.prompt_prefix]})
        return self.model_copy(update={"samples": table, "prompt_prefixes": [self.prompt_prefixes[p] for p in used]})


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
    checkpoint: str | None = Field(None, description="the checkpoint the run manifest names")
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
    dropped_runs: DropsManifest | None = Field(
        None, description="agent runs that errored, hit a limit, timed out or lost their sandbox (all counted)")
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
    text_left_out: int = Field(0, description="documents whose text was not kept (size budget)")
    trajectory_note: str = ""
    html_name: str = "report.html"
