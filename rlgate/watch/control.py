"""The signal back to the trainer: `RUN_DIR/rlgate/control.json`, written by `rlgate watch`, read by the run.

One small versioned file per training run says `continue`, `pause` or `rollback` (with the step to go
back to) and why. It is replaced atomically (temporary file, then rename), so a trainer polling it never
reads half a signal. The trainer side (`rlgate.ci.hooks`) imports only this module: pydantic and the
standard library, nothing heavy.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic

CONTROL_SCHEMA_VERSION = 1
CONTROL_FOLDER = "rlgate"
CONTROL_FILE = "control.json"
ControlAction = Literal["continue", "pause", "rollback"]
#: how strongly each action stops the run: the signal only ever escalates on its own (a person resets it)
STRENGTH: dict[str, int] = {"continue": 0, "pause": 1, "rollback": 2}


class ControlSignal(BaseModel):
    """What the watcher tells the training run to do after its latest gated checkpoint."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    action: ControlAction = "continue"
    step: int | None = Field(None, description="the gated step whose decision set this action")
    checkpoint: str | None = Field(None, description="the checkpoint folder gated at that step")
    rollback_to_step: int | None = Field(None, description="rollback: the step of the checkpoint to resume from")
    rollback_to: str | None = Field(None, description="rollback: that checkpoint's folder")
    reasons: list[str] = Field(default_factory=list, description="why, one line per rule that fired")
    last_gated_step: int | None = Field(None, description="the newest step the watcher has gated (any action)")
    updated_at: float = Field(default_factory=time.time)

    @property
    def stops(self) -> bool:
        return self.action != "continue"


def control_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / CONTROL_FOLDER / CONTROL_FILE


def read_control(run_dir: str | Path) -> ControlSignal | None:
    """The run's signal, or None when the watcher has written none yet; a damaged file is one clear error."""
    path = control_path(run_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return ControlSignal.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise InputError(f"the control file is not a valid rlgate control signal: {first['msg']}", file=path,
                         field=where, fix="delete it (the watcher writes a new one at its next gated checkpoint), "
                         "or set action to continue, pause or rollback") from None


def write_control(run_dir: str | Path, signal: ControlSignal) -> Path:
    """Replace the run's signal atomically."""
    return write_text_atomic(control_path(run_dir), signal.model_dump_json(indent=2) + "\n")
