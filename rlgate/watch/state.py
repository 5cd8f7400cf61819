"""The watcher's durable per-run state: which steps are done, so a restarted watcher gates each one once.

`RUN_DIR/rlgate/watch_state.json`, replaced atomically after every change. A step is `started` before its
gate runs and `gated` / `skipped` / `failed` once its outcome (history row, reports, control signal) is
written. A step left `started` by a killed watcher is finished on restart: when the history already holds
its row and its decision was written, that outcome is taken as it is; otherwise it is gated again from the
generation cache (the history row of a checkpoint is keyed by run, checkpoint and contract, so the second
gate replaces it and the history still has one row).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic
from rlgate.watch.control import CONTROL_FOLDER

WATCH_STATE_VERSION = 1
StepStatus = Literal["started", "gated", "skipped", "failed"]


class StepRecord(BaseModel):
    """One checkpoint step as the watcher handled it."""

    model_config = ConfigDict(extra="forbid")

    step: int
    checkpoint: str
    status: StepStatus
    decision: str | None = None
    action: str | None = None
    private: bool = Field(False, description="the release_gate_only splits were consulted at this step")
    note: str = ""
    at: float = Field(default_factory=time.time)


class WatchState(BaseModel):
    """Every step the watcher has seen for one training run and contract."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    contract: str
    training_run: str
    steps: dict[int, StepRecord] = Field(default_factory=dict)

    def done(self, step: int) -> bool:
        record = self.steps.get(step)
        return record is not None and record.status != "started"

    def gated(self) -> list[StepRecord]:
        return [r for _, r in sorted(self.steps.items()) if r.status == "gated"]


def state_path(run_dir: Path) -> Path:
    return run_dir / CONTROL_FOLDER / "watch_state.json"


def load_state(run_dir: Path, contract: str, training_run: str) -> WatchState:
    """The stored state, or a new one; a state of another contract or training run is refused, not mixed in."""
    path = state_path(run_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return WatchState(contract=contract, training_run=training_run)
    try:
        state = WatchState.model_validate_json(text)
    except ValidationError as exc:
        raise InputError(f"the watcher's state file is damaged: {exc.errors()[0]['msg']}", file=path,
                         fix="move it away: the watcher then re-derives nothing and gates every checkpoint present "
                         "again (the history keeps one row per checkpoint)") from None
    if (state.contract, state.training_run) != (contract, training_run):
        raise InputError(f"this run folder is watched under contract '{state.contract}' and training run "
                         f"'{state.training_run}', not '{contract}' / '{training_run}'", file=path,
                         fix="watch it with the same contract and --training-run, or move the state file away to start "
                         "this run's watch over")
    return state


def save_state(run_dir: Path, state: WatchState) -> None:
    write_text_atomic(state_path(run_dir), state.model_dump_json(indent=2) + "\n")
