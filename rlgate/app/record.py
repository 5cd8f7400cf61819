"""What a decision leaves in the project history: private-split consultations and the gated checkpoint.

Each decision that scores a private (release_gate_only) split counts one consultation of its tasks per
training run (rlgate.engine.private warns past the split's consult_budget); a contract with a monitored
training run also stores the gated checkpoint, which the monitor's cross-checkpoint rules read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rlgate.contract.loader import ResolvedContract
from rlgate.engine.models import Decision
from rlgate.engine.private import consult_budget_warnings, training_run_of

if TYPE_CHECKING:
    from rlgate.app.sources import Contribution
    from rlgate.store.protocol import HistoryStore

_STEP_RE = re.compile(r"(?:step|checkpoint|ckpt|iter)[_\-]?(\d+)", re.IGNORECASE)


def checkpoint_step(checkpoint: str | None) -> int | None:
    """The training step in a checkpoint path such as `checkpoint-250` or `global_step_100`, if any."""
    if not checkpoint:
        return None
    found = _STEP_RE.findall(checkpoint)
    return int(found[-1]) if found else None


def record_history(history: HistoryStore, resolved: ResolvedContract, decision: Decision, checkpoint: str | None,
                    step: int | None, monitor: Contribution | None) -> list[str]:
    """Count private-split consultations and store the gated checkpoint; return budget warnings."""
    spec = resolved.contract.monitor
    run = training_run_of(resolved)
    private = resolved.private_tasks
    _, warnings = record_consultations(history, resolved, run, private) if private else ({}, [])
    if spec is not None and spec.training_run:
        # the monitor's modules load only when a training run is recorded (not on every gate)
        from rlgate._core.text import stored_text
        from rlgate.monitor.api import record_gated_checkpoint, training_metrics
        from rlgate.monitor.report import MonitorReport

        step = step if step is not None else checkpoint_step(checkpoint)
        name = checkpoint or decision.inputs[-1].source
        if "://" not in name:  # one spelling per folder: `check` passes the text as typed, `gate` a Path
            name = str(Path(name))
        if step is None:  # no step in the name: its place when gated before (under any contract), else the next one
            records = history.history(run)
            stored = stored_text(name)
            step = next((r.step for r in records if r.checkpoint == stored), len({r.checkpoint for r in records}))
        report = monitor.report if monitor is not None else None
        record_gated_checkpoint(history, run, step, name, decision,
                                extra_metrics=training_metrics(report if isinstance(report, MonitorReport) else None),
                                contract=resolved.name)
    return warnings


def record_consultations(history: HistoryStore, resolved: ResolvedContract, training_run: str,
                         tasks: Sequence[str] | None = None) -> tuple[dict[str, int], list[str]]:
    """Count one consultation of each private task evaluated (all when `tasks` is None); return counts and warnings.

    Called for each decision that scores a private split; the counts of one decision are written in one
    transaction.
    """
    names = [t.name for t in resolved.tasks if t.release_gate_only and (tasks is None or t.name in tasks)]
    counts = history.record_consultations(training_run, names) if names else {}
    return counts, consult_budget_warnings(resolved, counts, training_run)
