"""Which checkpoints a training run's output folder holds, and which of them are completely written.

Layouts (found side by side, so a run dir of any trainer works):
- TRL / transformers: `checkpoint-STEP/`; complete once `trainer_state.json` (which `Trainer._save_checkpoint`
  writes after the weights, optimizer and RNG state) parses and names that step.
- verl: `global_step_N/actor/huggingface` (or `actor/hf_model`); complete once verl's tracker
  `latest_checkpointed_iteration.txt`, written after the whole save, names N or a later step.
- plain: `step_N/` (or `step-N`), the model folder itself; it has no marker.

A layout with a marker is complete only on it (a TRL checkpoint whose trainer_state.json never parses is a save
cut short: never gated); a folder of a layout without one (plain, or verl without its tracker file) counts
as complete once its files keep their sizes for `stable_seconds` (a half-written one does not while it is
being written), so a checkpoint is never read while it is being saved.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

VERL_TRACKER = "latest_checkpointed_iteration.txt"
_TRL = re.compile(r"^checkpoint-(\d+)$")
_VERL = re.compile(r"^global_step_(\d+)$")
_PLAIN = re.compile(r"^step[_-](\d+)$")
_VERL_MODEL = ("huggingface", "hf_model")


@dataclass(frozen=True)
class Checkpoint:
    """One saved step: `root` is the folder the trainer creates and deletes, `model` the one rlgate loads."""

    step: int
    root: Path
    model: Path
    layout: str  # "trl" | "verl" | "plain"
    marker: bool  # the trainer's own completion marker says it is complete
    needs_marker: bool = True  # the layout has a marker; without one, a size-stable folder counts as complete

    @property
    def log(self) -> Path | None:
        """The trainer's log saved with the checkpoint (TRL's trainer_state.json), for the monitor."""
        state = self.root / "trainer_state.json"
        return state if self.layout == "trl" and state.is_file() else None


def _trl_complete(folder: Path, step: int) -> bool:
    try:
        state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # absent, or still being written
    return isinstance(state, dict) and state.get("global_step") == step


def _verl_tracked(run_dir: Path) -> int | None:
    try:
        return int((run_dir / VERL_TRACKER).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def find_checkpoints(run_dir: Path) -> list[Checkpoint]:
    """Every checkpoint folder under `run_dir` in step order, complete or not (`marker` says which are)."""
    found: dict[int, Checkpoint] = {}
    try:
        entries = sorted(p for p in run_dir.iterdir() if p.is_dir())
    except OSError:
        return []
    tracked = _verl_tracked(run_dir)
    for entry in entries:
        if match := _TRL.match(entry.name):
            step = int(match.group(1))
            found[step] = Checkpoint(step, entry, entry, "trl", _trl_complete(entry, step))
        elif match := _VERL.match(entry.name):
            step = int(match.group(1))
            model = next((entry / "actor" / name for name in _VERL_MODEL if (entry / "actor" / name).is_dir()), None)
            if model is not None:
                found.setdefault(step, Checkpoint(step, entry, model, "verl", tracked is not None and tracked >= step,
                                                  needs_marker=(run_dir / VERL_TRACKER).exists()))
        elif match := _PLAIN.match(entry.name):
            step = int(match.group(1))
            found.setdefault(step, Checkpoint(step, entry, entry, "plain", False, needs_marker=False))
    return [found[s] for s in sorted(found)]


def snapshot(folder: Path) -> tuple[tuple[str, int], ...] | None:
    """(relative path, size) of every file below `folder`; None when it vanished while being listed."""
    try:
        return tuple(sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*") if p.is_file()))
    except OSError:
        return None


@dataclass
class Completion:
    """Decides when a checkpoint is complete: its marker, or files whose sizes stayed put for `stable_seconds`."""

    stable_seconds: float
    clock: Callable[[], float] = time.monotonic
    _seen: dict[Path, tuple[tuple[tuple[str, int], ...], float]] = field(default_factory=dict)

    def complete(self, checkpoint: Checkpoint) -> bool:
        if checkpoint.marker or checkpoint.needs_marker:
            return checkpoint.marker
        now = self.clock()
        files = snapshot(checkpoint.root)
        if not files:  # gone, or nothing written yet
            self._seen.pop(checkpoint.root, None)
            return False
        previous = self._seen.get(checkpoint.root)
        if previous is None or previous[0] != files:
            self._seen[checkpoint.root] = (files, now)
            return False
        return now - previous[1] >= self.stable_seconds
