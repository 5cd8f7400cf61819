"""The contract language: pydantic models for contracts, suites and gate policies.

Every model forbids unknown keys so a typo is an error, not a silently ignored setting. Files on
disk carry `schema_version` so later versions of rlgate can migrate or refuse them clearly.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from rlgate.contract.base import RELEASE_GATE_ONLY, SCHEMA_VERSION, DecisionName, StrictModel, Visibility
from rlgate.contract.gatekinds import GateKindSpec, all_gates, listed
from rlgate.contract.judge_policy import JudgeSpec
from rlgate.contract.margins import no_negative_margin
from rlgate.contract.metrics import MetricRef
from rlgate.contract.protocol import (
    MULTIMODAL_BACKENDS,
    AgentBudget,
    Executor,
    ForbiddenArgument,
    HfOptions,
    ImageProtocol,
    OpenAIOptions,
    Protocol,
    SafetyRules,
    Sampling,
    Sequential,
    VllmOptions,
)
from rlgate.contract.references import Baseline, Reference, SuiteHealth, check_references
from rlgate.contract.sections import ContaminationSpec, MonitorSpec, WatchSpec
from rlgate.contract.vocabulary import GENERIC_SAMPLES_HINT, NO_FILTER, TaskVocabulary

__all__ = [  # re-exported: every contract model is importable from here
    "MULTIMODAL_BACKENDS",
    "RELEASE_GATE_ONLY",
    "SCHEMA_VERSION",
    "AgentBudget",
    "Baseline",
    "ContaminationSpec",
    "DecisionName",
    "Executor",
    "ForbiddenArgument",
    "HfOptions",
    "ImageProtocol",
    "MonitorSpec",
    "OpenAIOptions",
    "Protocol",
    "Reference",
    "SafetyRules",
    "Sampling",
    "Sequential",
    "StrictModel",
    "SuiteHealth",
    "Visibility",
    "VllmOptions",
    "WatchSpec",
]


def _check_metric(value: str) -> str:
    MetricRef.parse(value)
    return value


# --------------------------------------------------------------------------- splits, baseline
class Split(StrictModel):
    """A task set and who may see it."""

    visibility: Visibility
    description: str = ""
    consult_budget: int | None = Field(
        None, ge=1, description="release_gate_only: warn after this many consultations per training run"
    )

    @property
    def release_gate_only(self) -> bool:
        return self.visibility == RELEASE_GATE_ONLY


# --------------------------------------------------------------------------- suites
class TaskEntry(StrictModel):
    """One task in a suite, with the split it belongs to and the harness that runs it."""

    task: str = Field(description="task or group name in its harness, e.g. gsm8k, mmlu_pro, ifeval; for inspect "
                      "an inspect-evals task (inspect_evals/bfcl) or a local task file (tasks/x.py[@function])")
    harness: str = Field("lm_eval", description="the harness that runs and reads this task (registry name)")
    name: str | None = Field(
        None, description="the name gates and reports use (default: the task, or its last path part without .py)")
    task_args: dict[str, Any] = Field(default_factory=dict, description="inspect task parameters, e.g. {category: x}")
    requires: list[Literal["docker", "network", "hub_data", "gpu"]] = Field(
        default_factory=list, description="what the task needs beyond rlgate's extras (rlgate validate shows it)")
    metric_ranges: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="declared range of metrics that are not fractions in [0, 1], e.g. {score: [0, 10]}; "
        "gate thresholds are validated against it")
    split: str = Field(description="name of a split declared in the contract")
    data_files: str | dict[str, str] | None = Field(
        None, description="local copy of the task's dataset (path, or mapping split -> path)"
    )
    path: str | None = Field(None, description="a local lm-eval task YAML file or folder")
    num_fewshot: int | None = Field(None, ge=0)
    limit: int | None = Field(None, ge=1)
    version: str | None = Field(None, description="version of a private task set")
    judge: JudgeSpec | None = Field(None, description="judge policy for this task (overrides the contract's)")
    min_coverage: float | None = Field(
        None, gt=0.0, le=1.0, description="answered / expected documents below this make this task's gates nodata "
        "(overrides gates.min_coverage)")

    @model_validator(mode="after")
    def _not_both(self) -> TaskEntry:
        if self.path and self.data_files:
            raise ValueError("give either 'path' (a local task) or 'data_files' (local data for a built-in task)")
        return self


class Suite(StrictModel):
    """A named, versioned list of tasks."""

    schema_version: Literal[1]
    name: str = Field(min_length=1)
    version: str = "1"
    description: str = ""
    tasks: list[TaskEntry] = Field(min_length=1)


# --------------------------------------------------------------------------- gates
class _GateBase(StrictModel):
    metric: str = Field(description="task/metric[/filter] in lm-eval's names")
    name: str | None = Field(None, description="display name; defaults to the metric")
    higher_is_better: bool | None = Field(None, description="override the metric's known direction")
    allow_corrupt: int | None = Field(
        None, ge=0, description="corrupt documents (NaN, infinite or wrong-type scores) this gate tolerates; they "
        "are then excluded and reported (default: gates.allow_corrupt, else 0: any corrupt document is an error)")

    @field_validator("metric")
    @classmethod
    def _valid_ref(cls, value: str) -> str:
        return _check_metric(value)

    @property
    def ref(self) -> MetricRef:
        return MetricRef.parse(self.metric)


class PrimaryGate(_GateBase):
    """The improvement the checkpoint exists for."""

    min_delta: float = Field(0.0, ge=0.0, description="smallest improvement that counts, in the metric's units "
                             "(not negative: a tolerated drop is a regression gate's max_drop)")
    require: Literal["significance", "lower_bound"] = "significance"
    max_drop: float = Field(
        0.0, ge=0.0,
        description="a significant drop (one-sided p < alpha) larger than this is `primary_regression` "
        "(block by default) instead of `primary_fail`; in the metric's units, 0: any significant drop")

    _margins = field_validator("min_delta", "max_drop", mode="before")(no_negative_margin)


class HardGate(_GateBase):
    """An absolute bound on the candidate's value (point estimate)."""

    per_subtask: bool = Field(False, description="also one verdict per leaf task of the gated group, same bound")

    max: float | None = None
    min: float | None = None

    @model_validator(mode="after")
    def _has_bound(self) -> HardGate:
        if self.max is None and self.min is None:
            raise PydanticCustomError("missing_bound", "a hard gate needs 'max' or 'min'", {
                "fix": "add max: X (the candidate's value must be at most X) or min: X (at least X), in the "
                       "metric's units"})
        return self


class RegressionGate(_GateBase):
    """A capability that must not drop against the baseline."""

    per_subtask: bool = Field(
        False, description="also one verdict per leaf task of the gated group (a reward model's categories, "
        "mmlu_pro's subjects), each with the same max_drop and test, Holm-adjusted with the others")

    max_drop: float = Field(ge=0.0, description="largest tolerated drop, in the metric's units")
    _margin = field_validator("max_drop", mode="before")(no_negative_margin)
    test: Literal["three_way", "significance", "non_inferiority"] = Field(
        "three_way", description="three_way (default): pass only when non-inferiority is shown (Holm-adjusted "
        "lower bound >= -max_drop), fail on a significant drop larger than max_drop, else "
        "regression_inconclusive; significance: fail only on a significant drop larger than max_drop, else pass; "
        "non_inferiority: pass only when non-inferiority is shown, else fail")


class DiagnosticGate(_GateBase):
    """A side effect worth flagging (length, format); failing it means research_only by default."""

    max_relative_increase: float | None = Field(None, ge=0.0)
    max_relative_decrease: float | None = Field(None, ge=0.0)
    max: float | None = None
    min: float | None = None

    @model_validator(mode="after")
    def _has_bound(self) -> DiagnosticGate:
        if all(v is None for v in (self.max_relative_increase, self.max_relative_decrease, self.max, self.min)):
            raise PydanticCustomError(
                "missing_bound", "a diagnostic needs max_relative_increase, max_relative_decrease, max or min",
                {"fix": "add max_relative_increase: 0.3 (at most 30 % above the baseline), max_relative_decrease, "
                        "max or min"})
        return self


#: any contract gate (the kinds: rlgate.contract.gatekinds)
AnyGate = PrimaryGate | HardGate | RegressionGate | DiagnosticGate


class DecisionPolicy(StrictModel):
    """Which decision each gate outcome leads to (the worst one wins)."""

    hard_fail: DecisionName = "block"
    regression_fail: DecisionName = "block"
    regression_inconclusive: DecisionName = Field(
        "research_only", description="a three_way regression gate showed neither non-inferiority nor a "
        "significant drop beyond max_drop: the suite is too small to tell")
    nodata: DecisionName = "block"
    error: DecisionName = "block"
    primary_fail: DecisionName = Field("research_only", description="the primary improvement was not shown")
    primary_regression: DecisionName = Field(
        "block", description="the primary metric dropped significantly by more than primary.max_drop")
    diagnostic_fail: DecisionName = "research_only"
    monitor_critical: DecisionName = "block"
    monitor_warning: DecisionName = "research_only"
    monitor_info: DecisionName = "release"

    @model_validator(mode="after")
    def _fail_closed(self) -> DecisionPolicy:
        for key in ("nodata", "error"):
            if getattr(self, key) == "release":
                raise ValueError(f"decision.{key} cannot be 'release': missing or broken data never releases")
        return self


class GateSettings(StrictModel):
    """Gate settings as written in a contract or a policy file; unset values inherit."""

    use: str | None = Field(None, description="path of a gate policy (gates/*.yaml) these settings extend")
    alpha: float | None = Field(None, gt=0.0, le=0.5, description="significance level (default 0.05)")
    power: float | None = Field(None, gt=0.0, lt=1.0, description="power for the MDE (default 0.8)")
    bootstrap_resamples: int | None = Field(None, ge=100)
    allow_corrupt: int | None = Field(
        None, ge=0, description="corrupt documents (NaN, infinite or wrong-type scores) every gate tolerates "
        "unless it sets its own (default 0: a gate whose metric has any corrupt document is an error)")
    min_coverage: float | None = Field(
        None, gt=0.0, le=1.0, description="answered / expected documents a task needs for its gates to be computed "
        "(default 1.0: every document); below it the gate is nodata")
    allow_unpaired: bool | None = Field(
        None, description="let a gate whose metric lacks per-sample values in a run fall back to an unpaired test "
        "on the reported aggregates (default false: such a gate is nodata); the decision is then at most "
        "research_only")
    allow_missing_trajectories: int | None = Field(
        None, ge=0, description="trajectories a run's log promises but lacks that a safety gate tolerates "
        "(default 0: any unknown trajectory makes a safety gate an error)")
    primary: PrimaryGate | None = None
    hard: list[HardGate] | None = None
    regression: list[RegressionGate] | None = None
    diagnostics: list[DiagnosticGate] | None = None
    decision: dict[str, DecisionName] | None = Field(
        None, description="gate outcome -> decision: hard_fail, regression_fail, regression_inconclusive, nodata, "
        "error, primary_fail "
        "(improvement not shown; default research_only), primary_regression (primary significantly worse; "
        "default block), diagnostic_fail, monitor_critical, monitor_warning, monitor_info")

    @field_validator("decision")
    @classmethod
    def _known_outcomes(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None:
            DecisionPolicy.model_validate(value)
        return value


class GatePolicy(GateSettings):
    """A reusable gate policy file under gates/."""

    # Built on first use (defer_build): only a contract that names a policy file (`use:`) needs it.
    model_config = ConfigDict(defer_build=True)

    schema_version: Literal[1]
    name: str = Field(min_length=1)
    description: str = ""


class Capability(StrictModel):
    """Tasks that together make one capability, and whether its gates decide for the whole model.

    scope `model` (default) behaves as if no capability were declared: a failing gate decides the
    global decision. scope `feature`: its gates decide only this capability; the global decision
    ignores them and flags the capability `block_for_<name>` (or `research_only_for_<name>`).
    """

    tasks: list[str] = Field(min_length=1, description="task names (as gates refer to them) of this capability")
    scope: Literal["model", "feature"] = Field(
        "model", description="model: its failing gates decide the global decision (default); feature: they "
        "block only this capability, the model can still be released with `block_for_<capability>`")
    description: str = ""


class GateConfig(StrictModel):
    """Gate settings after policies and the contract are merged: what the engine reads."""

    alpha: float = 0.05
    power: float = 0.8
    bootstrap_resamples: int = 10_000
    allow_corrupt: int = Field(0, ge=0, description="corrupt documents a gate tolerates unless it sets its own")
    min_coverage: float = Field(1.0, gt=0.0, le=1.0)
    task_min_coverage: dict[str, float] = Field(default_factory=dict, description="per-task min_coverage (suites)")
    task_limits: dict[str, int] = Field(default_factory=dict, description="per-task document limit (suites): "
                                        "what a complete run of the task holds when the suite caps it")
    allow_unpaired: bool = Field(False, description="unpaired fallback without per-sample values (at most "
                                 "research_only)")
    allow_missing_trajectories: int = Field(0, ge=0, description="unknown trajectories a safety gate tolerates")
    primary: PrimaryGate | None = None
    hard: list[HardGate] = Field(default_factory=list)
    regression: list[RegressionGate] = Field(default_factory=list)
    diagnostics: list[DiagnosticGate] = Field(default_factory=list)
    decision: DecisionPolicy = Field(default_factory=DecisionPolicy)
    decision_sources: dict[str, str] = Field(
        default_factory=dict, description="decision-policy key -> the file, line and key that set it (`use:` chains "
        "included); keys absent here are rlgate's defaults")
    capabilities: dict[str, Capability] = Field(
        default_factory=dict, description="the contract's capabilities (scoped decisions), copied by the loader")
    vocabularies: dict[str, TaskVocabulary] = Field(
        default_factory=dict, description="task -> what its harness says its metrics mean (filled by the check "
        "right after the contract loads: rlgate.harness.vocabulary)")

    def listed(self) -> list[tuple[GateKindSpec, AnyGate]]:
        """Every gate with its kind (rlgate.contract.gatekinds), in the kinds' order."""
        return list(listed(self))

    def all_gates(self) -> list[AnyGate]:
        """Every gate, in the kinds' order."""
        return all_gates(self)

    def vocabulary(self, task: str) -> TaskVocabulary | None:
        """The vocabulary of a task (or of a group whose name prefixes its leaves), None when unchecked."""
        return self.vocabularies.get(task)

    def samples_hint(self, task: str) -> str:
        """How to get per-sample results for `task`, in its harness's words."""
        found = self.vocabularies.get(task)
        return found.samples_hint if found is not None else GENERIC_SAMPLES_HINT

    def samples_option(self, task: str) -> str:
        """What paired tests of `task` need from its harness (lm-eval: --log_samples)."""
        found = self.vocabularies.get(task)
        return found.samples_option if found is not None else "per-sample results"

    def default_filter(self, task: str) -> str:
        """The filter a metric reference of `task` without one reads."""
        found = self.vocabularies.get(task)
        return found.default_filter if found is not None else NO_FILTER


# --------------------------------------------------------------------------- contract
class Contract(StrictModel):
    """What a checkpoint must show to ship, and under which protocol it is measured."""

    schema_version: Literal[1]
    name: str = Field(min_length=1)
    description: str = ""
    baseline: Baseline | dict[str, Reference] = Field(
        description="the reference to compare against (checkpoint or results), or several named references "
        "(sft, previous_release, reference: each role gated or reported; the first gated one is the main baseline)")
    protocol: Protocol = Field(default_factory=Protocol)
    splits: dict[str, Split] = Field(min_length=1)
    suites: list[str | Suite] = Field(min_length=1, description="suite files (relative paths) or inline suites")
    gates: GateSettings
    trusted_task_paths: list[str] = Field(
        default_factory=list, description="local lm-eval task folders allowed to run Python (!function)"
    )
    allow_protocol_mismatch: bool = Field(False, description="compare runs made under different protocols")
    monitor: MonitorSpec | None = None
    judge: JudgeSpec | None = Field(None, description="default judge policy of every task (rule, llm, ...)")
    contamination: ContaminationSpec | None = Field(None, description="n-gram overlap of eval vs training data")
    watch: WatchSpec | None = Field(None, description="`rlgate watch`: gating checkpoints while the run trains")
    safety: SafetyRules | None = Field(None, description="unsafe agent actions: forbidden tools and argument patterns")
    unsafe_code: Literal["sandboxed"] | None = Field(
        None, description="tasks that execute model-written code (humaneval_plus, mbpp_plus) run only when the "
        "contract says `sandboxed`: in rlgate's sandbox (docs/sandbox.md); without it such a suite is refused")
    capabilities: dict[str, Capability] = Field(
        default_factory=dict, description="capability name -> its tasks and scope; a verdict per capability is "
        "reported beside the global one, and scope: feature capabilities block only themselves")
    suite_health: SuiteHealth | None = Field(
        None, description="whether each gated task can still discriminate: every reference near 0 % or 100 % warns, "
        "the candidate outside the band gets a note, anchor sets catch a suite that changed difficulty (on by "
        "default with several references)")

    @field_validator("baseline", mode="wrap")
    @classmethod
    def _one_form(cls, value: Any, handler: Any) -> Baseline | dict[str, Reference]:
        """A mapping of mappings names references; anything else is one baseline. Validating only the form it
        is written in keeps the error about what was written (`baseline.sft.result: unknown key`)."""
        from pydantic import TypeAdapter

        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            return check_references(TypeAdapter(dict[str, Reference]).validate_python(value))
        return value if isinstance(value, Baseline) else Baseline.model_validate(value)

    @property
    def main_baseline(self) -> Baseline:
        """The reference the engine's gate table compares against: the baseline, or the first gated reference."""
        if isinstance(self.baseline, Baseline):
            return self.baseline
        return next(ref for ref in self.baseline.values() if ref.role == "gated")

    @property
    def references(self) -> dict[str, Reference]:
        """Every named reference (empty for a single `baseline:`), in the contract's order."""
        return dict(self.baseline) if isinstance(self.baseline, dict) else {}

    @property
    def health(self) -> SuiteHealth | None:
        """The suite-health settings in force: the contract's, else the defaults when it names several references."""
        return self.suite_health or (SuiteHealth() if self.references else None)

    @field_validator("capabilities")
    @classmethod
    def _capability_names(cls, value: dict[str, Capability]) -> dict[str, Capability]:
        import re

        seen: dict[str, str] = {}
        for name, cap in value.items():
            if not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
                raise ValueError(f"capability name {name!r}: use letters, digits, _ and - "
                                 f"(it becomes block_for_{name})")
            for task in cap.tasks:
                if task in seen:
                    raise ValueError(f"task {task!r} is in two capabilities ({seen[task]} and {name}); a task "
                                     "belongs to one capability")
                seen[task] = name
        return value
