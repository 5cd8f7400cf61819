"""What every contract model shares: strictness, the schema version, visibility and decision names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1
Visibility = Literal["iteration", "nightly", "release_gate_only"]
#: the one spelling of the private split's visibility: evaluated by the release gate only, samples never shown
RELEASE_GATE_ONLY: Visibility = "release_gate_only"
DecisionName = Literal["release", "research_only", "block"]


class StrictModel(BaseModel):
    """Base for every contract model: unknown keys are errors, and so are nan and inf (a nan threshold compares
    false both ways, so `max: nan` would pass every value)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, allow_inf_nan=False)
