"""The judge report: per item which path decided it and how, per task the win rate and the judge's biases.

Stored in `Decision.extensions["judge"]` (as `model_dump(mode="json")`) and read by the renderers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.results.models import DocId

JUDGE_REPORT_SCHEMA_VERSION: Literal[1] = 1
Order = Literal["candidate_first", "baseline_first"]
Outcome = Literal["win", "loss", "tie", "error", "undecided", "scored"]
DecidedBy = Literal["rule", "llm", "undecided"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgeCall(_Model):
    """One call of the LLM judge on one item."""

    sample: int
    order: Order | None = Field(None, description="pairwise: which answer was shown first")
    answer: Literal["candidate", "baseline"] | None = Field(None, description="pointwise: the answer scored")
    verdict: Literal["first", "second", "tie"] | None = Field(None, description="pairwise verdict by position")
    score: float | None = Field(None, description="deepeval's normalised score in [0, 1]")
    outcome: Literal["win", "loss", "tie"] | None = Field(None, description="for the candidate")
    error: str | None = Field(None, description="why the judgement could not be used (never counted as a win)")
    cached: bool = False


class JudgeItem(_Model):
    """One document: who decided it, what the judge saw and said."""

    doc_id: DocId
    task: str | None = Field(None, description="leaf task, when the judged task is a group")
    decided_by: DecidedBy
    outcome: Outcome
    reason: str = Field(description="why this path decided the item")
    candidate_chars: int
    baseline_chars: int | None = None
    rule: dict[str, float] | None = Field(None, description="rule scores: candidate, baseline")
    candidate_score: float | None = Field(None, description="pointwise: mean judge score of the candidate")
    baseline_score: float | None = Field(None, description="pointwise: mean judge score of the baseline")
    calls: list[JudgeCall] = Field(default_factory=list)

    @property
    def value(self) -> float | None:
        """The item's win value for the candidate (1, 0.5, 0); None for errors, undecided and unpaired items."""
        return {"win": 1.0, "tie": 0.5, "loss": 0.0}.get(self.outcome)


class WinRate(_Model):
    """Win rate of the candidate over the baseline with its Wilson interval and a sign test against 50 %."""

    wins: int
    losses: int
    ties: int
    errors: int = Field(description="judge errors tolerated by max_error_rate; counted as losses")
    tie_policy: str
    n: int = Field(description="comparisons in the denominator under the tie policy")
    successes: float
    win_rate: float | None
    ci: tuple[float, float] | None
    ci_level: float
    p_value: float | None = Field(None, description="two-sided exact sign test against 50 %")
    p_greater: float | None = None
    p_less: float | None = None
    sign_test_n: int = 0
    test: str = "exact sign test (binomial, p = 0.5)"


class PositionBias(_Model):
    """How often the verdict follows the position instead of the answer."""

    items_both_orders: int = Field(0, description="items judged in both orders with valid verdicts")
    flips: int = Field(0, description="items whose verdict for the candidate changed with the order")
    flip_rate: float | None = None
    decisive_calls: int = Field(0, description="valid non-tie calls")
    first_position_wins: int = 0
    first_position_win_rate: float | None = Field(None, description="0.5 means no preference for position")


class LengthSplit(_Model):
    n: int = 0
    win_rate: float | None = Field(None, description="ties count as half here, whatever the policy")


class LengthBias(_Model):
    """Win rate split by which answer is longer (characters): a judge that loves length shows it here."""

    candidate_longer: LengthSplit = Field(default_factory=LengthSplit)
    baseline_longer: LengthSplit = Field(default_factory=LengthSplit)
    same_length: LengthSplit = Field(default_factory=LengthSplit)
    decisive_unequal: int = Field(0, description="decisive judge verdicts on answers of unequal length")
    longer_wins: int = 0
    longer_win_rate: float | None = None


class BiasCheck(_Model):
    """One bias figure against its contract limit."""

    rate: float | None = Field(None, description="the measured (or estimated) rate; None when not measurable")
    n: int = Field(0, description="items or calls the rate rests on")
    limit: float
    basis: str = Field(description="how the rate was measured, or why it was not")
    enforced: bool = Field(description="the rate rests on at least min_bias_items and was compared with the limit")
    exceeded: bool = False


class JudgeTrust(_Model):
    """Whether the judge's verdicts count as evidence: its position and length bias within the contract's limits."""

    position: BiasCheck | None = Field(None, description="pairwise judges only")
    length: BiasCheck | None = None
    on_bias: Literal["error", "warn"] = "error"
    trusted: bool = Field(description="no enforced limit was exceeded and the judge is not the candidate")
    message: str
    self_judging: str | None = Field(None, description="the candidate model the judge model is, when it grades "
                                                       "its own answers (self-preference bias)")


class CalibrationReport(_Model):
    """Judge-human agreement on the anchor set, and whether it fell below the contract's floor."""

    anchors: str
    n: int
    errors: int
    accuracy: float | None
    kappa: float | None
    min_agreement: float
    min_kappa: float | None = None
    below_floor: bool
    previous_accuracy: float | None = None
    previous_kappa: float | None = None
    previous_judge: str | None = Field(None, description="judge fingerprint of the previous run")
    drift: bool = Field(description="agreement is below the floor now but was not at the last run")
    message: str


class TaskJudgeReport(_Model):
    """Everything the judge did for one task."""

    task: str
    policy: dict[str, Any] = Field(description="the resolved JudgeSpec this task ran under")
    judge_model: str | None = None
    judge_fingerprint: str | None = None
    items: list[JudgeItem] = Field(default_factory=list)
    unpaired: int = Field(0, description="documents in only one of the two runs (not judged, reported)")
    decided_by: dict[str, int] = Field(default_factory=dict, description="rule / llm / undecided counts")
    errors: int = 0
    error_rate: float | None = None
    error_examples: list[str] = Field(default_factory=list)
    win_rate: WinRate | None = None
    mean_candidate_score: float | None = None
    mean_baseline_score: float | None = None
    position_bias: PositionBias | None = None
    length_bias: LengthBias | None = None
    calibration: CalibrationReport | None = None
    trust: JudgeTrust | None = Field(None, description="bias limits of the policy; None without LLM judgements")
    llm_calls: int = 0
    cache_hits: int = 0

    def values(self) -> list[float]:
        """Per-item win values (1 / 0.5 / 0) for an engine that gates a per-sample series."""
        return [v for v in (item.value for item in self.items) if v is not None]


class JudgeReport(_Model):
    """The judge section of a decision: one entry per judged task."""

    schema_version: Literal[1] = JUDGE_REPORT_SCHEMA_VERSION
    tasks: dict[str, TaskJudgeReport] = Field(default_factory=dict)
    deepeval_folder: str | None = Field(None, description="where deepeval keeps its files for this run")
    cache: str | None = Field(None, description="judge result cache file")
    warnings: list[str] = Field(default_factory=list)
