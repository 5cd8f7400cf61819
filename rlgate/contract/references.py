"""Several references for one candidate (`baseline: {sft: ..., previous_release: ..., reference: ...}`) and the
suite-health settings that read them.

The field's calibration rule runs at least three baselines (the SFT model, the previous release, a strong open
model) so that a suite can still tell checkpoints apart. The first gated reference is the one the engine's gate
table compares against (what a single `baseline:` is); every other gated reference is gated the same way and the
worst decision wins; a `role: reported` reference is shown beside them and never decides.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from rlgate.contract.base import StrictModel

#: the names the field uses for the three baselines (any other name of letters, digits, _ and - is accepted too)
REFERENCE_NAMES = ("sft", "previous_release", "reference")


class Baseline(StrictModel):
    """The reference the candidate is compared against: a checkpoint to evaluate, or stored results."""

    checkpoint: str | None = None
    results: str | None = Field(None, description="lm-eval output folder of the baseline")
    lora_base: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Baseline:
        if not self.checkpoint and not self.results:
            raise ValueError("give baseline.checkpoint (a path or HF id) or baseline.results (a folder)")
        return self


class Reference(Baseline):
    """One named reference of a multi-baseline contract: gated (its comparison can decide) or only reported."""

    role: Literal["gated", "reported"] = Field(
        "gated", description="gated: the candidate is gated against it too (the worst decision wins); reported: "
        "shown beside the others, never decides")
    description: str = ""


def check_references(value: dict[str, Reference]) -> dict[str, Reference]:
    """Names usable in reports and file names, and at least one gated reference (someone must decide)."""
    if not value:
        raise ValueError("baseline names no reference; give baseline.checkpoint / baseline.results, or name "
                         f"references such as {', '.join(REFERENCE_NAMES)}")
    for name in value:
        if not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
            raise ValueError(f"reference name {name!r}: use letters, digits, _ and - (e.g. {REFERENCE_NAMES[0]})")
    if not any(ref.role == "gated" for ref in value.values()):
        raise ValueError("every reference is role: reported, so nothing gates the candidate; make one "
                         "role: gated (the first gated one is the main baseline)")
    return value


class AnchorSet(StrictModel):
    """Fixed documents of a task whose content never changes between suite versions."""

    task: str = Field(description="leaf task the documents belong to (as results name it)")
    doc_ids: list[str] = Field(min_length=1, description="document ids (as the results' samples name them)")

    @field_validator("doc_ids", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return [str(v) for v in value] if isinstance(value, list) else value


class SuiteHealth(StrictModel):
    """Whether each gated task can still tell checkpoints apart, read from every reference and the candidate."""

    floor: float = Field(0.05, ge=0.0, lt=0.5, description="every reference at or below this: the task is too hard "
                         "to discriminate (a fraction metric)")
    ceiling: float = Field(0.95, gt=0.5, le=1.0, description="every reference at or above this: the task is too easy "
                           "to discriminate")
    band: tuple[float, float] = Field((0.4, 0.8), description="the candidate's value outside [low, high] gets a "
                                      "note: the suite is near its floor or ceiling for the model being gated")
    anchor_sets: list[AnchorSet] = Field(
        default_factory=list, description="fixed documents per task: a suite version that changed difficulty shows "
        "as a gap between the candidate's change on the anchors and on the whole task")
    anchor_tolerance: float = Field(0.05, gt=0.0, le=1.0, description="largest tolerated gap between the change "
                                    "on the anchors and on the whole task, in the metric's units")

    @model_validator(mode="after")
    def _ordered_band(self) -> SuiteHealth:
        low, high = self.band
        if not 0.0 <= low < high <= 1.0:
            raise ValueError(f"suite_health.band is [{low}, {high}]; give [low, high] with 0 <= low < high <= 1")
        return self
