"""What the history stores: gated checkpoints (one model for every backend) and the schema version.

Schema 3 keys a record by (run, checkpoint, contract): the contract is the contract's `name:` (what
`rlgate history --contract` selects by), so a checkpoint gated under two contracts keeps both verdicts, and an
edited contract of the same name re-gating a checkpoint replaces its own earlier record. Records stored before
schema 2 carry the contract "" (unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlgate._core.text import stored_text

HISTORY_SCHEMA_VERSION = 3


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
    contract: str = Field("", description="the name of the contract it was gated under (\"\": recorded before "
                          "rlgate stored contracts)")


def of_contract(records: Sequence[CheckpointRecord], contract: str) -> list[CheckpointRecord]:
    """The records a contract gated, plus unlabelled ones from before labels of checkpoints it has no record of
    (a checkpoint it gated again since is listed once, with its own record)."""
    contract = stored_text(contract)
    own = {r.checkpoint for r in records if r.contract == contract}
    return [r for r in records if r.contract == contract or (r.contract == "" and r.checkpoint not in own)]


class CounterRecord(BaseModel):
    """One per-run counter (private-split consultations, judge drift checks, ...)."""

    # Validators are built on first use (defer_build): a gate without a history store never uses them.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    run: str
    key: str
    value: int
    updated_at: float
