"""Shards of inspect tasks: shard K of N runs the K-th contiguous range of each task's dataset, and the merge
joins the shards' logs into the one log per task that one process writes.

A shard runs inspect's positional `limit=(start, stop)`, so every sample keeps the id the whole dataset gives it
(inspect numbers id-less samples by their position in the dataset, not in the slice). The merge trusts no log's
own account of itself: each shard log must be a finished log of the shard's checkpoint, protocol and range,
holding every epoch of exactly the samples of that range, and no sample id may come from two shards. The joined
log's aggregates are recomputed by inspect (`recompute_metrics`) from the joined samples.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedTask
from rlgate.harness.base import RunPlan
from rlgate.harness.inspect import protocol as mapping
from rlgate.harness.inspect.log import CHECKPOINT_KEY, PROTOCOL_KEY, epochs_of, read_log, task_name
from rlgate.results.shard import SHARD_FILE, ShardManifest, shard_range, write_shard

#: metadata key of a shard's log: the [start, stop) positions of the dataset it ran
SHARD_KEY = "rlgate_shard"
LOGS = "logs"
_FIX = "re-run that shard (rlgate eval --shard K/N, same out folder: it resumes), then merge all N folders"


def samples_in_run(dataset_size: int, limit: int | None) -> int:
    """The samples one run of a task evaluates: the first `limit` of its dataset (all, without a limit)."""
    return min(dataset_size, limit) if limit else dataset_size


def window_key(window: range | None) -> list[int] | None:
    return None if window is None else [window.start, window.stop]


@dataclass
class ShardPlan:
    """What shard K of N of an inspect run covers: per task, the run's sample count and the shard's positions."""

    shard: tuple[int, int] | None
    base: dict[str, int] = field(default_factory=dict)
    documents: dict[str, list[int]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        assert self.shard is not None
        return f"{self.shard[0]}/{self.shard[1]}"

    def window(self, task: str, dataset_size: int, limit: int | None) -> range:
        """The shard's positions of `task`: its share of the first `limit` samples (all, without a limit)."""
        assert self.shard is not None
        total = samples_in_run(dataset_size, limit)
        window = shard_range(total, self.shard)
        self.base[task], self.documents[task] = total, list(window)
        return window

    def refuse_empty(self) -> None:
        """A shard that holds no sample of any task is refused (before its run manifest is written)."""
        assert self.shard is not None
        if not any(self.documents.values()):
            raise InputError(f"shard {self.label} holds no sample: every task has fewer than {self.shard[1]} "
                             "samples", field="--shard", fix="use fewer shards (protocol.executor.shards or --shard "
                                                            "K/N)")

    def write(self, plan: RunPlan, harness: str) -> Path:
        """shard.json beside the shard's logs."""
        return write_shard(plan.out_dir, plan.shard_manifest(
            harness=harness, protocol_hash=mapping.protocol_hash(plan.contract.contract.protocol),
            base=self.base, documents=self.documents, generations=LOGS))


def _shard_log(folder: Path, manifest: ShardManifest, task: str) -> Path:
    logs = folder / manifest.generations
    found = [f for f in sorted(logs.glob("*.eval")) if task_name(read_log(f, header_only=True)) == task]
    if len(found) != 1:
        what = "no log" if not found else f"{len(found)} logs ({', '.join(f.name for f in found)})"
        raise InputError(f"shard {manifest.shard}/{manifest.shards} has {what} of task '{task}' in {logs}",
                         file=folder / SHARD_FILE, field="generations", fix=_FIX)
    return found[0]


def _checked(file: Path, manifest: ShardManifest, task: ResolvedTask, plan: RunPlan) -> Any:
    """The shard's log of `task`, refused unless it is the finished run of exactly the shard's range."""
    log = read_log(file)
    protocol = plan.contract.contract.protocol
    positions = manifest.documents[task.name]
    meta = log.eval.metadata or {}
    expected = {CHECKPOINT_KEY: manifest.checkpoint.fingerprint, PROTOCOL_KEY: mapping.agent_protocol(protocol, task),
                SHARD_KEY: [positions[0], positions[-1] + 1]}
    for key, value in expected.items():
        if meta.get(key) != value:
            raise InputError(f"the log's {key} is {meta.get(key)!r}, not the shard's {value!r}: it is not this "
                             "shard's run", file=file, field=f"eval.metadata.{key}", fix=_FIX)
    if positions != list(range(positions[0], positions[-1] + 1)):
        raise InputError(f"the shard's samples of '{task.name}' are not one contiguous range",
                         file=file.parent.parent / SHARD_FILE, field=f"documents.{task.name}", fix=_FIX)
    if log.status != "success":
        raise InputError(f"the shard's log ended '{log.status}', not 'success': what it lacks is unknown", file=file,
                         fix=_FIX)
    epochs = epochs_of(log)
    if epochs != protocol.sampling.n:
        raise InputError(f"the log ran {epochs} epochs, the contract {protocol.sampling.n}", file=file,
                         field="eval.config.epochs", fix=_FIX)
    ids = list(log.eval.dataset.sample_ids or [])
    pairs = Counter((str(s.id), s.epoch) for s in log.samples or [])
    want = {(str(i), e) for i in ids for e in range(1, epochs + 1)}
    if len(ids) != len(positions) or set(pairs) != want or max(pairs.values(), default=1) > 1:
        raise InputError(f"the log holds {sum(pairs.values())} sample runs of {len(set(map(str, ids)))} ids; the "
                         f"shard's {len(positions)} samples x {epochs} epochs are {len(positions) * epochs}, each "
                         "once", file=file, field="samples", fix=_FIX)
    return log


def join_logs(plan: RunPlan, task: ResolvedTask, shards: list[tuple[Path, ShardManifest]], out: Path) -> Path:
    """The shards' logs of `task` (in shard order) as one log in `out`: the samples in dataset order, the header
    of the one-process run (no shard range, every id, the run's limit), aggregates recomputed by inspect."""
    from inspect_ai.log import recompute_metrics, write_eval_log

    logs: list[Any] = []
    owner: dict[str, Path] = {}
    for folder, manifest in shards:
        if not manifest.documents.get(task.name):
            continue
        file = _shard_log(folder, manifest, task.name)
        log = _checked(file, manifest, task, plan)
        for sample_id in log.eval.dataset.sample_ids:
            if str(sample_id) in owner:
                raise InputError(f"sample id {sample_id!r} of '{task.name}' is in two shards ({owner[str(sample_id)]} "
                                 f"and {file}): every sample must come from exactly one shard", file=file,
                                 field="samples", fix=_FIX)
            owner[str(sample_id)] = file
        logs.append(log)
    protocol = plan.contract.contract.protocol
    merged = logs[0]
    ids = [i for log in logs for i in log.eval.dataset.sample_ids]
    order = {str(i): n for n, i in enumerate(ids)}
    merged.samples = sorted((s for log in logs for s in log.samples), key=lambda s: (order[str(s.id)], s.epoch))
    merged.eval.dataset.sample_ids = ids
    merged.eval.config.limit = plan.limit or task.entry.limit or protocol.limit
    merged.eval.metadata = {k: v for k, v in (merged.eval.metadata or {}).items() if k != SHARD_KEY}
    merged.stats.completed_at = max(log.stats.completed_at for log in logs)
    usage: dict[str, Any] = {}
    for log in logs:
        for model, used in log.stats.model_usage.items():
            usage[model] = usage[model] + used if model in usage else used
    merged.stats.model_usage = usage
    recompute_metrics(merged)
    for old in out.glob("*.eval"):  # an earlier merge's log of the task
        if task_name(read_log(old, header_only=True)) == task.name:
            old.unlink()
    target = out / Path(merged.location).name
    partial = target.with_name(f".{target.name}.partial")
    write_eval_log(merged, str(partial), format="eval")
    os.replace(partial, target)
    return target
