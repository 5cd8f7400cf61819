"""Private-split discipline: release_gate_only tasks stay out of iteration, reports, exports and logs.

A private test set consulted during training decays into a training set. So iteration-mode
`rlgate eval` refuses these tasks, their samples are withheld everywhere (counts only), and each
consultation is counted per training run with a warning past the contract's budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from rlgate._core.errors import InputError
from rlgate.contract.models import RELEASE_GATE_ONLY
from rlgate.store.sql import CONSULT_KEY

__all__ = ["CONSULT_KEY", "check_iteration_access", "consult_budget_warnings", "consultation_counts",
           "is_private", "iteration_tasks", "private_leaf_tasks", "record_consultations", "training_run_of",
           "without_private_samples"]

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract, ResolvedTask
    from rlgate.results.models import RunResult
    from rlgate.store.protocol import HistoryStore


def is_private(task: ResolvedTask) -> bool:
    return task.release_gate_only


def check_iteration_access(resolved: ResolvedContract, tasks: Sequence[str] | None = None) -> None:
    """Refuse release_gate_only tasks in iteration mode (`rlgate eval`).

    `tasks` are the task names the user asked for; None means every task of the contract.
    """
    wanted = list(tasks) if tasks is not None else [t.name for t in resolved.tasks]
    private = [t for t in resolved.tasks if is_private(t) and t.name in wanted]
    if not private:
        return
    names = ", ".join(f"'{t.name}' (split '{t.split}')" for t in private)
    public = [t.name for t in resolved.tasks if not is_private(t)]
    raise InputError(
        f"{names} {'is' if len(private) == 1 else 'are'} release_gate_only: private test sets are evaluated "
        "only by `rlgate check` / `rlgate gate`, never by an iteration-mode `rlgate eval`, so they stay unseen "
        "by training and tuning",
        file=str(resolved.path), field="splits",
        fix=(f"evaluate only the other tasks ({', '.join(public)})" if public else "add an iteration split")
        + ", or run `rlgate check` for the release decision",
    )


def iteration_tasks(resolved: ResolvedContract) -> list[ResolvedTask]:
    """The tasks iteration mode may evaluate."""
    return [t for t in resolved.tasks if not is_private(t)]


def private_leaf_tasks(resolved: ResolvedContract | None, runs: Iterable[RunResult | None] = (),
                       visibility: Mapping[str, str] | None = None) -> frozenset[str]:
    """Leaf and group names of every release_gate_only task, expanded through each run's groups.

    `visibility` (task -> visibility, e.g. from a run manifest) is used where no contract is given.
    """
    names: set[str] = set()
    if resolved is not None:
        names.update(t.name for t in resolved.tasks if is_private(t))
    if visibility:
        names.update(task for task, vis in visibility.items() if vis == RELEASE_GATE_ONLY)
    leaves = set(names)
    for run in runs:
        if run is None:
            continue
        for name in names:
            leaves.update(run.leaves(name))
    return frozenset(leaves)


def without_private_samples(run: RunResult, private: frozenset[str]) -> RunResult:
    """A copy of the run whose private tasks keep their aggregates but no samples (for reports and logs)."""
    tasks = {name: (result.model_copy(update={"samples": []}) if name in private else result)
             for name, result in run.tasks.items()}
    return run.model_copy(update={"tasks": tasks})


def consult_budget_warnings(resolved: ResolvedContract, counts: Mapping[str, int],
                            training_run: str | None) -> list[str]:
    """Warnings for private tasks consulted more often than their split's `consult_budget`."""
    out: list[str] = []
    for task in resolved.tasks:
        if not is_private(task):
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


def record_consultations(history: HistoryStore, resolved: ResolvedContract, training_run: str,
                         tasks: Sequence[str] | None = None) -> tuple[dict[str, int], list[str]]:
    """Count one consultation of each private task evaluated (all when `tasks` is None); return counts and warnings.

    Called by `rlgate check` / `rlgate gate` each time a private split is scored for a decision; the
    counts of one decision are written in one transaction.
    """
    names = [t.name for t in resolved.tasks if is_private(t) and (tasks is None or t.name in tasks)]
    counts = history.record_consultations(training_run, names) if names else {}
    return counts, consult_budget_warnings(resolved, counts, training_run)


def consultation_counts(history: HistoryStore, training_run: str) -> dict[str, int]:
    """How often each private task has been consulted in a training run."""
    return history.consultations(training_run)
