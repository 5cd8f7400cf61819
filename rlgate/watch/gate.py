"""Gating one checkpoint of a watched run: the contract narrowed to the splits of that step, then `check`.

Each checkpoint is gated on the contract's iteration-visible splits; the release_gate_only splits join
only at the cadence `watch.private_every` sets and while every private split is within its
`consult_budget`. The gates, the monitor (on the trainer's log saved with the checkpoint unless the
contract names its own logs) and the history record all come from the ordinary `rlgate check` path; the
view only drops the tasks and gates of the splits not consulted, names the training run, and turns
sequential stopping on for harnesses that generate look by look.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rlgate.contract.gatekinds import keeping
from rlgate.contract.loader import ResolvedContract
from rlgate.contract.metrics import MetricRef
from rlgate.contract.models import MonitorSpec, Sequential
from rlgate.harness import ProgressSink, get_harness
from rlgate.store.protocol import HistoryStore
from rlgate.watch.layouts import Checkpoint

if TYPE_CHECKING:
    from rlgate.app.check import CheckResult


@dataclass(frozen=True)
class PrivatePlan:
    """Whether this step consults the private splits, and why (for the step's report)."""

    consult: bool
    note: str = ""


def plan_private(resolved: ResolvedContract, history: HistoryStore, training_run: str,
                 gated_so_far: int) -> PrivatePlan:
    """Private splits at every `watch.private_every`-th gated checkpoint, unless a split's budget is spent."""
    spec = resolved.contract.watch
    private = [t for t in resolved.tasks if t.release_gate_only]
    if not private:
        return PrivatePlan(False)
    if spec is None or spec.private_every is None:
        return PrivatePlan(False, "private splits are not consulted while training (watch.private_every is unset)")
    if (gated_so_far + 1) % spec.private_every != 0:
        return PrivatePlan(False, f"private splits every {spec.private_every} gated checkpoints; not this one")
    used = history.consultations(training_run)
    for task in private:
        budget = resolved.contract.splits[task.split].consult_budget
        if budget is not None and used.get(task.name, 0) + 1 > budget:
            return PrivatePlan(False, f"private task '{task.name}' (split '{task.split}') has used its consult_budget "
                               f"of {budget} in training run '{training_run}': not consulted")
    return PrivatePlan(True, "private splits consulted (watch.private_every)")


def _sequential_capable(resolved: ResolvedContract) -> bool:
    return all(get_harness(name).generates_in_looks for name in {t.harness for t in resolved.tasks})


def watch_view(resolved: ResolvedContract, checkpoint: Checkpoint, training_run: str, *,
               private: bool) -> ResolvedContract:
    """The contract as this step gates it (a copy; the loaded contract is not changed)."""
    tasks = [t for t in resolved.tasks if private or not t.release_gate_only]
    names = {t.name for t in tasks}

    def kept(metric: str) -> bool:
        return MetricRef.parse(metric).task in names

    gates = resolved.gates.model_copy(update=keeping(resolved.gates, lambda _, gate: kept(gate.metric)))
    spec = resolved.contract.monitor or MonitorSpec()
    logs = list(spec.logs) or ([str(checkpoint.log)] if checkpoint.log is not None else [])
    monitor = spec.model_copy(update={"training_run": training_run, "logs": logs})
    protocol = resolved.contract.protocol
    view = replace(resolved, tasks=tasks, gates=gates)
    if protocol.sequential is None and _sequential_capable(view):
        protocol = protocol.model_copy(update={"sequential": Sequential()})
    contract = resolved.contract.model_copy(update={"monitor": monitor, "protocol": protocol})
    return replace(view, contract=contract)


def gate_checkpoint(view: ResolvedContract, checkpoint: Checkpoint, out: Path, *, cache_dir: Path,
                    progress: ProgressSink, seed: int = 0) -> CheckResult:
    """`rlgate check` of the checkpoint's model folder under the view (the history row is written by it)."""
    from rlgate.app.check import check

    return check(view, str(checkpoint.model), out, cache_dir=cache_dir, progress=progress, seed=seed)
