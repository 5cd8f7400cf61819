"""The judge policy as a contract states it: who decides each item (rule, LLM, or rule then LLM) and how.

The contract fixes the judge as firmly as the sampling protocol, so runs judged differently are never
compared silently. These models are light (pydantic only): the contract loader imports them, and
deepeval is imported only when a judge actually runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rlgate._core.errors import InputError
from rlgate.contract.base import StrictModel

JudgeType = Literal["rule", "llm", "rule_then_llm_judge"]
JudgeMode = Literal["pointwise", "pairwise"]
TiePolicy = Literal["count_as_half", "exclude", "count_as_loss"]

#: Judge-trust defaults; gates/release_default.yaml states them with their sources (a test keeps both equal).
MAX_POSITION_FLIP_RATE = 0.35
MAX_LENGTH_FOLLOW_RATE = 0.80
MIN_BIAS_ITEMS = 10


class JudgeModelSpec(StrictModel):
    """The judge LLM: an OpenAI-compatible endpoint (e.g. `vllm serve`) or a local HF model folder."""

    base_url: str | None = Field(None, description="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    model: str | None = Field(None, description="served model name sent in each request")
    api_key_env: str | None = Field(None, description="name of the env var holding the API key (never the key)")
    path: str | None = Field(None, description="local Hugging Face model folder (instead of an endpoint)")
    temperature: float = Field(0.0, ge=0.0, description="judge sampling temperature; 0 keeps verdicts stable")
    max_tokens: int = Field(512, ge=1, description="maximum tokens per judge answer")
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10, description="retries per request on connection errors and 5xx")

    @model_validator(mode="after")
    def _one_source(self) -> JudgeModelSpec:
        if bool(self.base_url) == bool(self.path):
            raise ValueError("give judge.model.base_url (an OpenAI-compatible endpoint) or judge.model.path "
                             "(a local Hugging Face model folder), not both")
        if self.base_url and not self.model:
            raise ValueError("judge.model.model (the served model name) is required with base_url")
        return self

    def describe(self) -> str:
        if self.path:
            return f"local:{self.path}"
        return f"{self.model}@{self.base_url}"


class CalibrationSpec(StrictModel):
    """Anchor items with human labels; the judge must agree with them at least this often."""

    anchors: str = Field(description="JSONL of anchor items with human labels (path relative to the contract)")
    min_agreement: float = Field(0.8, ge=0.0, le=1.0, description="floor on judge-human accuracy")
    min_kappa: float | None = Field(None, ge=-1.0, le=1.0, description="optional floor on Cohen's kappa")
    on_below_floor: Literal["error", "warn"] = Field(
        "error", description="error: the judge gate fails closed; warn: flag it and keep the verdict")


class JudgeSpec(StrictModel):
    """How open-ended items are judged. Set contract-wide under `judge:`; a task's `judge:` overrides fields."""

    type: JudgeType = Field("rule", description="rule | llm | rule_then_llm_judge (LLM only where the rule "
                                                "cannot decide, e.g. no parseable answer)")
    model: JudgeModelSpec | None = None
    criteria: str = Field("Which response answers the user's request more helpfully, correctly and honestly?",
                          description="what the judge assesses (G-Eval criteria)")
    rubric: str | None = Field(None, description="extra guidance shown to the judge with the criteria")
    evaluation_steps: list[str] | None = Field(
        None, description="fixed G-Eval steps; when unset deepeval asks the judge to write them once")
    mode: JudgeMode = Field("pairwise", description="pairwise: candidate vs baseline; pointwise: a score each")
    order_randomization: bool = Field(True, description="show the two answers in seeded random order")
    tie_policy: TiePolicy = "count_as_half"
    samples: int = Field(1, ge=1, le=16, description="judge calls per item; >= 2 judges both orders")
    seed: int = Field(0, description="seed of the order randomisation")
    rule_metric: str | None = Field(
        None, description="metric[/filter] whose per-sample score decides on the rule path (default: the "
                          "task's main metric)")
    tie_margin: float = Field(0.0, ge=0.0, le=1.0, description="pointwise: score differences up to this are ties")
    max_error_rate: float = Field(
        0.0, ge=0.0, le=1.0, description="share of judge errors tolerated before the gate fails closed")
    calibration: CalibrationSpec | None = None
    max_position_flip_rate: float = Field(
        MAX_POSITION_FLIP_RATE, ge=0.0, le=1.0,
        description="most items whose verdict may change when the two answers swap places (measured with "
                    "samples >= 2; with one sample and random order, estimated as 2*|first-shown win rate - 0.5|)")
    max_length_follow_rate: float = Field(
        MAX_LENGTH_FOLLOW_RATE, ge=0.0, le=1.0,
        description="most decisive verdicts on answers of unequal length that may go to the longer answer")
    min_bias_items: int = Field(
        MIN_BIAS_ITEMS, ge=1, description="items (or calls) needed before a bias limit is enforced; fewer are "
                                          "reported as not measured")
    on_bias: Literal["error", "warn"] = Field(
        "error", description="a judge over a bias limit: error (its gates fail closed) or warn (keep the verdict, "
                             "flag it)")

    def summary(self) -> str:
        """One line for `rlgate validate`."""
        parts: list[str] = [self.type]
        if self.type != "rule":
            parts += [self.mode, f"model={self.model.describe() if self.model else '-'}",
                      f"order_randomization={'on' if self.order_randomization else 'off'}",
                      f"samples={self.samples}", f"seed={self.seed}"]
        if self.mode == "pairwise" or self.type == "rule":
            parts.append(f"ties={self.tie_policy}")
        if self.rule_metric:
            parts.append(f"rule_metric={self.rule_metric}")
        if self.type != "rule" and self.mode == "pairwise":
            parts += [f"max_position_flip_rate={self.max_position_flip_rate:g}",
                      f"max_length_follow_rate={self.max_length_follow_rate:g}", f"on_bias={self.on_bias}"]
        if self.calibration:
            parts.append(f"calibration={self.calibration.anchors} (agreement >= {self.calibration.min_agreement:g})")
        return " ".join(parts)


def resolve_judge(default: JudgeSpec | None, override: JudgeSpec | None, *, task: str = "",
                  file: object = None) -> JudgeSpec | None:
    """The policy one task runs under: the contract default with the fields the task sets replaced.

    Raises InputError when an LLM judge is asked for without a model, so `rlgate validate` catches it.
    """
    if default is None and override is None:
        return None
    if default is None:
        merged = override
    elif override is None:
        merged = default
    else:
        data = default.model_dump(exclude_unset=True)
        data.update(override.model_dump(exclude_unset=True))
        merged = JudgeSpec.model_validate(data)
    assert merged is not None
    if merged.type != "rule" and merged.model is None:
        where = f"task {task}: " if task else ""
        raise InputError(f"{where}judge type '{merged.type}' needs a judge model",
                         file=str(file) if file else None, field="judge.model",
                         fix="add judge.model with base_url and model (an OpenAI-compatible endpoint) or path")
    return merged
