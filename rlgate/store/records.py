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

from rlgate.jsonl_fast import visible_surrogates

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


def stored_text(value: Any) -> Any:
    """A text as every backend stores it: a lone surrogate (a checkpoint path of non-UTF-8 bytes) encodes in no
    UTF-8 database and PostgreSQL refuses NUL, so each is kept as its visible `\\uXXXX` escape. Every statement's
    parameters pass here, and so does a name compared with stored records, so it is found by the name it was
    recorded under."""
    if isinstance(value, str):
        return visible_surrogates(value).replace("\x00", "\\u0000")
    return value


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
