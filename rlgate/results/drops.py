"""The drops manifest: every agent run that errored, hit a limit, timed out, lost its sandbox or is missing.

None of them is ever skipped: each stays in every count and pair and is scored as a failure
(`task_success` 0). The manifest lists them, one entry per (run, task, sample, epoch), with how each
was counted, so a reviewer can check that nothing vanished. Written into `decision.json`
(`extensions.drops`) and shown in the reports' rollout card; the run manifest's `Drops` counts use the
same classification (`drop_kind`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate.results.models import DocId, RunResult, Trajectory, doc_order

DROPS_SCHEMA_VERSION: Literal[1] = 1
DropKind = Literal["missing", "sandbox_failed", "errored", "timed_out", "limit"]
#: the order drops are counted and listed in
DROP_KINDS: tuple[DropKind, ...] = ("missing", "sandbox_failed", "errored", "timed_out", "limit")
#: inspect limit types that are a clock running out (the rest: message, token, context, turn, cost, ...)
TIME_LIMITS = frozenset({"time", "working"})
_SANDBOX_WORDS = ("sandbox", "docker", "container", "k8s", "kubernetes")
DETAIL_CAP = 300
COUNTED_AS = "failure: task_success = 0, kept in every count and pair"
COUNTED_AS_MISSING = ("failure for task_success; unknown for every other metric (a safety gate with an unknown "
                      "trajectory is an error unless allow_missing_trajectories)")
RULE = ("A run that crashed, timed out, hit a message, turn, token or tool-call limit, lost its sandbox, or is missing "
        "from the log counts as a failure (task_success = 0) and stays in every count and pair; it is never "
        "skipped. Each is listed in the drops manifest.")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DroppedRun(_Model):
    """One trajectory that did not finish normally."""

    run: Literal["baseline", "candidate"]
    task: str
    doc_id: DocId
    epoch: int = 1
    kind: DropKind
    detail: str = Field(description="the error, or the limits hit (shortened)")
    counted_as: str = COUNTED_AS


class CoverageShortfall(_Model):
    """A gate left `nodata` because a run answered fewer of a task's documents than the contract expects
    (rlgate.engine.coverage): which run, how many, and why (each cause with its count; docs/coverage.md
    has the fix for each)."""

    gate: str
    run: Literal["baseline", "candidate"]
    task: str
    check: str = Field(description="contract, manifest, samples, values or subtasks: which count fell short")
    expected: int
    answered: int
    min_coverage: float
    causes: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)


class DropsManifest(_Model):
    """Every dropped-out agent run of both runs, with counts per run and kind, and every coverage shortfall."""

    schema_version: Literal[1] = DROPS_SCHEMA_VERSION
    rule: str = RULE
    counts: dict[str, dict[str, int]] = Field(default_factory=dict, description="run -> kind -> trajectories")
    trajectories: dict[str, int] = Field(default_factory=dict, description="run -> agent trajectories in all")
    runs: list[DroppedRun] = Field(default_factory=list)
    shortfalls: list[CoverageShortfall] = Field(
        default_factory=list, description="gates nodata for want of documents (written only when any)")

    @property
    def total(self) -> int:
        return len(self.runs)


def drop_kind(trajectory: Trajectory, missing: bool = False) -> DropKind | None:
    """Why a trajectory did not finish normally, or None when it did (a missing sample first, then errors
    (sandbox failures apart), then a clock limit, then any other limit)."""
    if missing:
        return "missing"
    if trajectory.error:
        text = trajectory.error.lower()
        return "sandbox_failed" if any(word in text for word in _SANDBOX_WORDS) else "errored"
    if any(limit in TIME_LIMITS for limit in trajectory.limits_hit):
        return "timed_out"
    if trajectory.limits_hit:
        return "limit"
    return None


def _detail(trajectory: Trajectory) -> str:
    limits = [str(x) for x in trajectory.limits_hit]
    text = trajectory.error or ("limits hit: " + ", ".join(limits) if limits else "")
    return text if len(text) <= DETAIL_CAP else text[:DETAIL_CAP] + "…"


WITHHELD = "[withheld: release_gate_only split]"


def drops_manifest(baseline: RunResult | None, candidate: RunResult | None,
                   private: frozenset[str] = frozenset()) -> DropsManifest:
    """The manifest of both runs (the contract's tool-call budget counts once `apply_agent_rules` ran).

    Runs of `private` (release_gate_only) tasks are listed with their kind, but an error's text is withheld.
    """
    out = DropsManifest()
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        if run is None:
            continue
        counts: dict[str, int] = dict.fromkeys(DROP_KINDS, 0)
        total = 0
        for name in sorted(run.tasks):
            samples = run.tasks[name].samples
            if all(sample.trajectory is None for sample in samples):  # not an agent task: nothing to sort
                continue
            for sample in sorted(samples, key=lambda s: doc_order(s.doc_id)):
                trajectory = sample.trajectory
                if trajectory is None:
                    continue
                total += 1
                limits = sample.limits_reached()
                if limits != trajectory.limits_hit:  # the contract's tool-call budget, applied after reading
                    trajectory = trajectory.model_copy(update={"limits_hit": limits})
                kind = drop_kind(trajectory, bool(sample.extra.get("missing")))
                if kind is None:
                    continue
                counts[kind] += 1
                out.runs.append(DroppedRun(run=role, task=name, doc_id=sample.doc_id, epoch=trajectory.epoch,
                                           kind=kind, detail=WITHHELD if name in private and trajectory.error
                                           else _detail(trajectory),
                                           counted_as=COUNTED_AS_MISSING if kind == "missing" else COUNTED_AS))
        if total:
            out.counts[role] = counts
            out.trajectories[role] = total
    return out
