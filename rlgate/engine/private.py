"""Private splits: which tasks are release_gate_only, and how often they may be consulted.

A private test set consulted during training decays into a training set. So iteration-mode `rlgate eval`
refuses these tasks (rlgate.app.runs.select_tasks), their samples are withheld from reports, exports and
logs (counts only), and each consultation by a decision is counted per training run (rlgate.app.record)
with a warning past its split's `consult_budget`. These are the pure parts: contract (and runs) in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rlgate.contract.base import RELEASE_GATE_ONLY
from rlgate.contract.loader import ResolvedContract
from rlgate.results.models import RunResult


def private_leaf_tasks(resolved: ResolvedContract | None, runs: Iterable[RunResult | None] = (),
                       visibility: Mapping[str, str] | None = None) -> frozenset[str]:
    """Leaf and group names of every release_gate_only task, expanded through each run's groups.

    `visibility` (task -> visibility, e.g. from a run manifest) is used where no contract is given.
    """
    names: set[str] = set()
    if resolved is not None:
        names.update(t.name for t in resolved.tasks if t.release_gate_only)
    if visibility:
        names.update(task for task, vis in visibility.items() if vis == RELEASE_GATE_ONLY)
    leaves = set(names)
    for run in runs:
        if run is None:
            continue
        for name in names:
            leaves.update(run.leaves(name))
    return frozenset(leaves)


def consult_budget_warnings(resolved: ResolvedContract, counts: Mapping[str, int],
                            training_run: str | None) -> list[str]:
    """Warnings for private tasks consulted more often than their split's `consult_budget`."""
    out: list[str] = []
    for task in resolved.tasks:
        if not task.release_gate_only:
            continue
        split = resolved.contract.splits.get(task.split)
        budget = split.consult_budget if split else None
        used = counts.get(task.name, 0)
        if budget is not None and used > budget:
            run = f" in training run '{training_run}'" if training_run else ""
            out.append(f"private task '{task.name}' (split '{task.split}') has been consulted {used} times{run}, "
                       f"over its consult_budget of {budget}: its scores are at risk of being tuned to; "
                       "refresh the private set or stop consulting it until release")
    return out


def training_run_of(resolved: ResolvedContract, explicit: str | None = None) -> str:
    """The training run consultations are counted against: explicit, the contract's monitor setting, or 'default'."""
    if explicit:
        return explicit
    monitor = resolved.contract.monitor
    return monitor.training_run if monitor is not None and monitor.training_run else "default"
