"""The badcase report: failure clusters, what drove a drop, and the next round's fixes.

Written to `badcases.json` and into `Decision.extensions`; renderers only read it. Nothing in it
comes from a `release_gate_only` split except counts.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.engine.versions import VersionCheck
from rlgate.results.models import DocId

BADCASE_SCHEMA_VERSION: Final = 1
#: What kind of failure a class is: it decides which fix applies and how a drop is explained.
FailureKind = Literal["format", "truncation", "knowledge", "instruction", "tool", "safety", "other"]
#: Where a fix belongs, in the attribution the project uses for every failure.
Area = Literal["data", "reward", "algorithm", "tool", "evaluation", "safety"]
#: format / truncation: those account for most lost answers; knowledge: parsed-but-wrong answers dominate and the
#: paired test on parseable answers is significant; wrong_answers: they dominate but that test is not;
#: instructions: IFEval prompts lost to violated instructions; improved: the metric went up.
DropDriver = Literal["format", "knowledge", "format_and_knowledge", "truncation", "wrong_answers", "instructions",
                     "improved", "none"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BadcaseExample(_Model):
    """One document where the candidate has the failure (non-private tasks only; texts shortened)."""

    task: str
    doc_id: DocId
    prompt: str | None = None
    target: str | None = None
    candidate_response: str | None = None
    candidate_answer: str | None = None
    baseline_response: str | None = None
    baseline_answer: str | None = None
    baseline_had_failure: bool | None = Field(None, description="None when the baseline lacks the document")


class ClusterStat(_Model):
    """Counts of one failure class (optionally within one category) in both runs, and whether it grew."""

    cluster: str = Field(description="class, or class[category] for a category-level cluster")
    failure_class: str
    category: str | None = None
    family: str
    kind: FailureKind
    baseline_count: int | None = Field(None, description="documents with the failure; None without a baseline")
    candidate_count: int
    baseline_n: int = 0
    candidate_n: int = 0
    baseline_rate: float | None = None
    candidate_rate: float = 0.0
    delta_rate: float | None = None
    n_paired: int = 0
    new_in_candidate: int = Field(0, description="paired documents: failure in the candidate only")
    fixed_in_candidate: int = Field(0, description="paired documents: failure in the baseline only")
    test: str | None = Field(None, description="mcnemar_exact (paired) or two_proportion_z (unpaired)")
    p_value: float | None = None
    p_adjusted: float | None = Field(None, description="Holm-adjusted across the clusters of the same level")
    grew: bool = False
    private_tasks: list[str] = Field(default_factory=list, description="private tasks counted (samples withheld)")
    examples: list[BadcaseExample] = Field(default_factory=list)


class DropExplanation(_Model):
    """Why a family's accuracy moved: answers lost to format versus answers lost to knowledge."""

    family: str
    n_paired: int
    baseline_accuracy: float
    candidate_accuracy: float
    delta: float
    lost_to_format: int = Field(description="paired docs right in the baseline, unparseable in the candidate")
    lost_to_truncation: int = 0
    lost_to_wrong_answer: int = Field(description="paired docs right in the baseline, parsed but wrong in candidate")
    gained: int = Field(description="paired docs wrong in the baseline, right in the candidate")
    n_both_parsed: int = Field(description="paired docs where both runs gave a parseable answer")
    baseline_accuracy_parsed: float | None = None
    candidate_accuracy_parsed: float | None = None
    knowledge_p_value: float | None = Field(
        None, description="one-sided exact McNemar: candidate worse on docs both runs parsed"
    )
    driver: DropDriver
    text: str
    gate: str | None = Field(None, description="the gate on this family's metric whose p-value the text quotes")
    gate_p_value: float | None = Field(None, description="that gate's deciding p (Holm-adjusted in a family)")
    instruction_losses: dict[str, int] = Field(
        default_factory=dict, description="IFEval: lost prompts per violated instruction group, most first")


class NextAction(_Model):
    """A concrete fix for the next training round, with the evidence that triggered it."""

    rule: str
    area: Area
    cluster: str
    action: str
    evidence: str


class AnchorShift(_Model):
    """Difficulty change between two suite versions, measured against fixed anchor documents."""

    task: str
    n_anchor_old: int
    n_anchor_new: int
    n_rest_old: int
    n_rest_new: int
    anchor_delta: float = Field(description="accuracy change on the anchors: the model's own change")
    rest_delta: float = Field(description="accuracy change on the other documents: model + difficulty")
    difficulty_shift: float = Field(description="rest_delta - anchor_delta; negative means the suite got harder")
    p_value: float | None = None
    flagged: bool
    missing_anchors: int = 0
    text: str


class BadcaseReport(_Model):
    """Everything `rlgate badcases` computes for one baseline/candidate pair."""

    schema_version: Literal[1] = BADCASE_SCHEMA_VERSION
    candidate: str
    baseline: str | None = None
    alpha: float = 0.05
    clusters: list[ClusterStat] = Field(default_factory=list, description="class-level clusters")
    category_clusters: list[ClusterStat] = Field(default_factory=list, description="class x category clusters")
    badcase_top: list[str] = Field(default_factory=list, description="'cluster: candidate_count', grown first")
    explanations: list[DropExplanation] = Field(default_factory=list)
    next_actions: list[NextAction] = Field(default_factory=list)
    private_tasks: list[str] = Field(default_factory=list, description="tasks whose samples are withheld")
    versions: VersionCheck | None = None
    anchor_shifts: list[AnchorShift] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
