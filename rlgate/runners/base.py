"""The runner interface: what every way of producing results (a live backend, imported responses) takes and returns.

Runners only produce results (an lm-eval output folder and a run manifest); they never gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol as TypingProtocol

from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.runners.checkpoint import CheckpointInfo
from rlgate.runners.manifest import RunManifest


class ProgressSink(TypingProtocol):
    """Receives per-task progress; the CLI draws it with rich, tests count it, the library prints nothing."""

    def task_started(self, task: str, total: int, cached: int) -> None: ...

    def advanced(self, task: str, count: int) -> None: ...

    def task_finished(self, task: str) -> None: ...

    def message(self, text: str) -> None: ...


class SilentProgress:
    """A ProgressSink that discards everything."""

    def task_started(self, task: str, total: int, cached: int) -> None:
        return None

    def advanced(self, task: str, count: int) -> None:
        return None

    def task_finished(self, task: str) -> None:
        return None

    def message(self, text: str) -> None:
        return None


@dataclass
class RunPlan:
    """One evaluation: which contract tasks, on which checkpoint (or imported responses), written where."""

    contract: ResolvedContract
    tasks: list[ResolvedTask]
    out_dir: Path
    cache_dir: Path
    checkpoint: CheckpointInfo | None = None
    responses: Path | None = None
    responded_only: bool = False
    limit: int | None = None
    role: str = "candidate"
    progress: ProgressSink = field(default_factory=SilentProgress)


@dataclass
class RunOutcome:
    """Where the results went and what the run recorded about itself."""

    out_dir: Path
    results_file: Path
    manifest: RunManifest
    model_loaded: bool


class Runner(TypingProtocol):
    """Anything that turns a RunPlan into an lm-eval-compatible output folder plus a run manifest."""

    name: str

    def run(self, plan: RunPlan) -> RunOutcome: ...
