"""What the history stores: gated checkpoints (one model for every backend) and the schema version."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

HISTORY_SCHEMA_VERSION = 2


class CheckpointRecord(BaseModel):
    """One gated checkpoint of a training run."""

    # Validators are built on first use (defer_build): a gate without a history store never uses them.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = HISTORY_SCHEMA_VERSION
    run: str
    checkpoint: str
    step: int
    metrics: dict[str, float] = Field(default_factory=dict)
    decision: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    recorded_at: float
    contract: str = ""


class CounterRecord(BaseModel):
    """One per-run counter (private-split consultations, judge drift checks, ...)."""

    # Validators are built on first use (defer_build): a gate without a history store never uses them.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    run: str
    key: str
    value: int
    updated_at: float
