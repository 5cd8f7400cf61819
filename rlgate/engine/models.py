"""The decision and its evidence: what the engine returns and `decision.json` stores.

Kayenta's shape: every gate is classified with fixed labels and a one-line reason, the labels are
aggregated by a policy, and the decision names the gates that decided it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DECISION_SCHEMA_VERSION = 1
DecisionName = Literal["release", "research_only", "block"]
GateKind = Literal["primary", "hard", "regression", "diagnostic", "monitor", "contamination"]
Verdict = Literal["pass", "fail", "inconclusive", "nodata", "error"]
#: Worst first; the decision is the worst effect of any gate.
DECISION_ORDER: tuple[DecisionName, ...] = ("block", "research_only", "release")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GateVerdict(_Model):
    """One gate's outcome with the numbers behind it."""

    name: str
    kind: GateKind
    metric: str = Field(description="task/metric/filter, or the monitor rule")
    verdict: Verdict
    outcome: str = Field(
        description="the decision-policy key this verdict maps to (gates.decision in the contract): pass; "
        "primary_fail (the primary improvement was not shown: default research_only); primary_regression "
        "(the primary metric dropped significantly, one-sided p < alpha, by more than primary.max_drop: "
        "default block); hard_fail, regression_fail (default block); regression_inconclusive (a three_way "
        "regression gate showed neither non-inferiority nor a significant drop: default research_only); "
        "diagnostic_fail (default research_only); "
        "monitor_critical, monitor_warning, monitor_info; nodata, error (never release)",
        examples=["pass", "primary_fail", "primary_regression", "regression_fail", "nodata"])
    effect: DecisionName = Field(description="what this gate alone would decide")
    baseline: float | None = None
    candidate: float | None = None
    delta: float | None = Field(None, description="candidate - baseline, in the metric's units")
    ci: tuple[float, float] | None = Field(None, description="confidence interval of the delta (or value)")
    ci_level: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = Field(None, description="Holm-adjusted p across the regression family")
    mde: float | None = Field(None, description="minimum detectable effect at alpha and the contract's power")
    n: int | None = Field(None, description="paired samples (or samples) used")
    n_unpaired: int = 0
    test: str | None = Field(None, description="statistical test used")
    threshold: dict[str, float] = Field(default_factory=dict)
    higher_is_better: bool = True
    fraction: bool | None = Field(
        None, description="the metric is a fraction in [0, 1] (shown in percent); false for a declared range")
    reason: str
    details: dict[str, Any] = Field(default_factory=dict)


class PairingReport(_Model):
    """How baseline and candidate samples of one task were paired; nothing is dropped silently."""

    task: str
    paired: int
    only_baseline: int = 0
    only_candidate: int = 0
    document_mismatch: int = Field(0, description="same doc_id but a different document hash")
    corrupt_baseline: int = Field(0, description="baseline documents with an unusable score (see Decision.corrupt)")
    corrupt_candidate: int = Field(0, description="candidate documents with an unusable score (see Decision.corrupt)")
    examples: list[str] = Field(default_factory=list, description="a few unpaired keys, for the report")


class CorruptDocument(_Model):
    """A document whose score for one metric and filter cannot be used (NaN, +-inf, wrong type).

    Never averaged and never dropped quietly: a gate on that metric is `error` unless the contract's
    `allow_corrupt` tolerates it, and then it is excluded and counted in the gate's details.
    """

    run: Literal["baseline", "candidate"]
    task: str
    doc_id: int | str
    metric: str
    filter: str
    problem: Literal["non_finite", "wrong_type", "out_of_range"]
    value: str = Field(description="the stored value as written")
    where: str | None = Field(None, description="samples file:line, where the harness knows it")


class CapabilityVerdict(_Model):
    """The decision on one capability (a group of tasks declared in the contract's `capabilities`)."""

    name: str
    scope: Literal["model", "feature"]
    tasks: list[str]
    decision: DecisionName = Field(description="the worst effect of this capability's gates (release if none)")
    gates: list[str] = Field(default_factory=list, description="names of the gates on this capability's tasks")
    deciding_gates: list[str] = Field(default_factory=list)
    flag: str | None = Field(
        None, description="block_for_<name> / research_only_for_<name> when a scope: feature capability is not "
        "release (the global decision then ignores its gates)")
    summary: str = ""


class RunRef(_Model):
    """Provenance of one input run, as recorded in the decision."""

    role: Literal["baseline", "candidate"]
    source: str
    model: str | None = None
    checkpoint_fingerprint: str | None = None


class SequentialGate(_Model):
    """One gate in a sequential replay: when (if ever) its outcome was settled by the sequential test."""

    name: str
    kind: str
    verdict: Literal["pass", "fail", "inconclusive", "open"] = Field(
        description="settled outcome at the stop look; open: never settled before the last look; inconclusive: "
        "a three-way regression the final group-sequential analysis settled neither way")
    outcome: str = Field("", description="policy outcome of a settled failure (e.g. regression_fail)")
    settled_look: int | None = None
    lower: float | None = Field(None, description="lower bound of the change (or value) at the stop: the betting "
                                "confidence sequence, or the group-sequential repeated confidence bound")
    upper: float | None = Field(None, description="upper bound at the stop (same method as lower)")
    critical_z: float | None = Field(None, description="group_sequential: the one-sided z boundary at the stop look "
                                     "(gate's alpha share); null for betting or a look that spends no alpha")
    n: int = Field(0, description="observations behind the bounds at the stop look")
    reason: str = ""


class SequentialLook(_Model):
    look: int
    documents: int = Field(description="documents generated by the end of this look (all tasks)")
    fraction: float
    open_gates: list[str] = Field(default_factory=list)


class NotGenerated(_Model):
    """Documents a sequential run would never have generated: listed, never silently dropped."""

    task: str
    count: int
    settled_at_look: int
    note: str = Field(description='"not generated: settled at look k"')
    documents: list[str] = Field(default_factory=list, description="their doc ids, in the seeded order")


class SequentialReplay(_Model):
    """Sequential gating: `rlgate check` generating in a seeded chunked order (mode check), or `rlgate gate
    --sequential` replaying that order over stored results (mode replay)."""

    mode: Literal["replay", "check"] = Field(
        "replay", description="check: documents generated look by look and generation stopped at stop_look; "
        "replay: the order replayed over stored results (full_decision known)")
    method: str = Field(description="the sequential test and its reference")
    procedure: Literal["betting", "group_sequential"] = Field(
        "betting", description="betting: anytime-valid at every look; group_sequential: alpha spending, valid at "
        "the planned looks only")
    spending: str | None = Field(None, description="group_sequential: the alpha-spending function (pocock, "
                                 "obrien_fleming)")
    seed: int
    looks_planned: int
    stop_look: int = Field(description="the look at which the sequential decision was reached")
    stopped_early: bool
    stop_reason: str
    decision_at_stop: DecisionName
    full_decision: DecisionName | None = Field(
        None, description="the fixed-sample decision on every stored document (replay only)")
    matches_full: bool | None = Field(None, description="decision_at_stop == full_decision (replay only)")
    documents_used: int
    documents_total: int
    fraction_used: float
    gates: list[SequentialGate] = Field(default_factory=list)
    looks: list[SequentialLook] = Field(default_factory=list)
    not_generated: list[NotGenerated] = Field(default_factory=list)

    @property
    def procedure_label(self) -> str:
        """The procedure in words, as the terminal and the reports name it."""
        if self.procedure == "group_sequential":
            return f"group-sequential, {self.spending} spending, valid at the planned looks"
        return "betting confidence sequence, valid at every look"


class Decision(_Model):
    """The verdict on a checkpoint and the evidence behind it."""

    schema_version: Literal[1] = 1
    decision: DecisionName
    summary: str = Field(description="one sentence: the decision and the gates that decided it")
    deciding_gates: list[str] = Field(default_factory=list)
    gates: list[GateVerdict]
    pairing: list[PairingReport] = Field(default_factory=list)
    protocol_differences: list[str] = Field(default_factory=list)
    corrupt: list[CorruptDocument] = Field(
        default_factory=list,
        description="every unusable per-sample score of either run, by task, document, filter")
    contract: str
    contract_hash: str | None = None
    inputs: list[RunRef] = Field(default_factory=list)
    alpha: float
    seed: int
    engine_version: str = "rlgate-engine/1"
    warnings: list[str] = Field(default_factory=list)
    capabilities: list[CapabilityVerdict] = Field(
        default_factory=list, description="a verdict per capability of the contract, beside the global one")
    flags: list[str] = Field(
        default_factory=list, description="block_for_<capability> (or research_only_for_<capability>) for each "
        "scope: feature capability that is not released; the global decision excludes their gates")
    sequential: SequentialReplay | None = Field(
        None, description="sequential (anytime-valid) replay: the look at which the decision was reached")
    extensions: dict[str, Any] = Field(
        default_factory=dict,
        description="sections added by other layers: badcase_top, next_actions, monitor, judge, contamination",
    )
