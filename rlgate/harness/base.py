"""The harness port: what every evaluation harness (lm-eval, inspect-ai, an importer) takes and returns.

A harness plans a run of a contract's tasks, runs it into an output folder with a run manifest, and
reads stored outputs (its own or a team's existing ones) back as a harness-neutral `RunResult`.
Harnesses only produce results; they never gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol as TypingProtocol

from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.harness.checkpoint import CheckpointInfo
from rlgate.results.manifest import RunManifest
from rlgate.results.models import RunResult


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
    #: sequential gating (`rlgate check` with protocol.sequential): generate the documents of looks 1..look of
    #: the seeded order (Sequential.order with this seed) only; None: every document
    sequential_look: int | None = None
    order_seed: int = 0


@dataclass
class RunOutcome:
    """Where the results went and what the run recorded about itself."""

    out_dir: Path
    results_file: Path
    manifest: RunManifest
    model_loaded: bool


class Harness(TypingProtocol):
    """One evaluation harness behind the port; registered by name in `rlgate.harness.registry`.

    `plan` checks the tasks before any model time, `run` produces an output folder with a run
    manifest, and `read` turns stored outputs (a folder or file) into a RunResult. `can_read` lets
    `rlgate gate` pick the harness for a path nobody named.
    """

    name: str

    def version(self) -> str | None:
        """The harness library's version (recorded in every manifest), or None when not installed."""
        ...

    def can_read(self, path: Path) -> bool:
        """Whether `path` looks like this harness's stored output (cheap: names and first bytes only)."""
        ...

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        """Stored outputs as a RunResult; bad input raises InputError naming the file and the fix."""
        ...

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        """A RunPlan for `tasks`, refused (InputError) when a task is not this harness's to run."""
        ...

    def run(self, plan: RunPlan) -> RunOutcome:
        """Evaluate the plan into `plan.out_dir`; cached generations are never generated twice."""
        ...
