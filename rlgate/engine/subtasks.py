"""Subtasks of a gated group that a run lacks: counted as unanswered documents, failing the gate closed.

A group's value (and its paired comparison) is formed over the leaves a run holds. When the candidate's
results lack a subtask the baseline has (or that its own group lists), gating on the rest would quietly
judge a smaller suite than the contract names, so such a gate is `nodata` unless the documents of the
subtasks present still reach `min_coverage` (then the missing subtasks are named beside the gate's
values). The same holds for a baseline that lacks one of the candidate's subtasks, for the gates that
read the baseline. Only subtasks that report the gated metric count: a group may mix metrics.
"""

from __future__ import annotations

from collections.abc import Iterator

from rlgate.engine.context import GateContext
from rlgate.engine.gaps import CoverageGap
from rlgate.results.models import MetricKey, RunResult, TaskResult


def _declared(run: RunResult, name: str) -> list[str]:
    """The leaf names a run's group tree lists under `name`, whether or not the run holds results for them."""
    if name in run.tasks or name not in run.groups:
        return [name]
    out: list[str] = []
    for child in run.groups[name]:
        if child != name:
            out.extend(_declared(run, child))
    return out


def _reports(task: TaskResult, key: MetricKey) -> bool:
    """Whether a leaf has the gated metric at all (its aggregate, or a score on its first sample)."""
    if task.value(key.metric, key.filter) is not None:
        return True
    return bool(task.samples) and key.metric in task.samples[0].scores.get(key.filter, {})


def _size(task: TaskResult | None) -> int:
    """A subtask's documents: the most its samples, its reported count and its full split say; one when none is
    known."""
    if task is None:
        return 1
    return max(len(task.samples), task.n_samples, task.n_expected or 0) or 1


def _lacking(run: RunResult, other: RunResult | None, key: MetricKey) -> list[tuple[str, int]]:
    """(subtask, documents) for each subtask of `key.task` that `run` lacks: listed by its own group but
    absent from its results, or held by the other run (with the metric) and absent here."""
    found: dict[str, int] = {}
    for leaf in _declared(run, key.task):
        if leaf not in run.tasks and leaf != key.task:
            found[leaf] = _size(other.tasks.get(leaf) if other is not None else None)
    if other is not None and run.has(key.task):
        for leaf in other.leaves(key.task):
            if leaf not in run.tasks and _reports(other.tasks[leaf], key):
                found[leaf] = _size(other.tasks[leaf])
    return sorted(found.items())


def subtask_gaps(ctx: GateContext, key: MetricKey, roles: tuple[str, ...]) -> Iterator[CoverageGap]:
    """Each run's documents in the subtasks it lacks (where any, all named), for `gaps.judged`."""
    for role in roles:
        run, other = (ctx.candidate, ctx.baseline) if role == "candidate" else (ctx.baseline, ctx.candidate)
        if run is None:
            continue
        lacking = _lacking(run, other, key)
        if not lacking:
            continue
        missing = sum(size for _, size in lacking)
        held = sum(_size(run.tasks[leaf]) for leaf in run.leaves(key.task) if _reports(run.tasks[leaf], key))
        yield CoverageGap(role, missing, held + missing, "subtasks", tuple(leaf for leaf, _ in lacking))
