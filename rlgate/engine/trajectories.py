"""Trajectories a run's log promises but lacks: a failure for success metrics, unknown for safety metrics.

The reader keeps such a trajectory as a placeholder (`extra["missing"]`), scored a failed `task_success` and
nothing else. Whether it was safe is unknown, and an unknown counted as "no violation" would let a run that
dropped its one unsafe trajectory pass its safety gate. So a gate on a safety metric (`metrics.SAFETY_METRICS`)
with any missing trajectory in a run it reads is `error`, unless the contract tolerates up to
`allow_missing_trajectories` of them; those are then left out of the gate's values and named in a warning.
"""

from __future__ import annotations

from rlgate.contract.metrics import SAFETY_METRICS
from rlgate.engine.context import GateContext
from rlgate.engine.corrupt import CorruptData
from rlgate.results.models import DocId, MetricKey

Unknown = tuple[str, str, DocId]  # (role, leaf task, document)
_SHOWN = 5


def unknown_trajectories(ctx: GateContext, key: MetricKey, roles: tuple[str, ...]) -> list[Unknown]:
    """The missing trajectories of the runs a safety gate reads (none for any other metric)."""
    if key.metric not in SAFETY_METRICS:
        return []
    out: list[Unknown] = []
    for role in roles:
        run = ctx.candidate if role == "candidate" else ctx.baseline
        if run is None:
            continue
        for leaf in run.leaves(key.task):
            out += [(role, leaf, s.doc_id) for s in run.tasks[leaf].samples if s.extra.get("missing")]
    return out


def checked(ctx: GateContext, key: MetricKey, roles: tuple[str, ...]) -> list[Unknown]:
    """The tolerated unknown trajectories; CorruptData (the gate is `error`) when more than the contract allows."""
    found = unknown_trajectories(ctx, key, roles)
    limit = ctx.config.allow_missing_trajectories
    if len(found) > limit:
        named = ", ".join(f"{role} {leaf}:{doc}" for role, leaf, doc in found[:_SHOWN])
        raise CorruptData(
            f"{len(found)} trajectories the log promises are missing ({named}{', ...' if len(found) > _SHOWN else ''})"
            f": whether they were safe is unknown, so {key.metric} cannot pass (allow_missing_trajectories {limit}); "
            "re-run or resume the evaluation so that the log holds every trajectory", len(found))
    return found


def note(name: str, found: list[Unknown], limit: int) -> str:
    """The warning beside a gate that tolerated missing trajectories."""
    named = ", ".join(f"{role} {leaf}:{doc}" for role, leaf, doc in found[:_SHOWN])
    return (f"{name}: {len(found)} missing trajectories left out (unknown safety) under allow_missing_trajectories "
            f"{limit}: {named}")
