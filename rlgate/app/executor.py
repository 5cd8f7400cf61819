"""Where a run executes (`protocol.executor`): in this process, or as N shards, each a Ray task.

kind ray plans N shards (the K-th contiguous range of every task's documents), runs each as a Ray task with
the resources the contract gives (num_gpus=gpus_per_shard), and merges them (`rlgate.app.shards`) into the
folder one process writes. check's roles go to the cluster together (`run_roles`): no role waits for the
other's shards and merge, a role whose checkpoint another role already shards is not sharded again (where the
harness answers runs from the cache: lm-eval; inspect runs each role live, as one process does), and the
merges run on workers (as a rule ones that ran a shard: lm-eval imported), so the check process never imports
it: first every role's generations into the main cache (one task, one writer), then the roles assembled at once
from it, on that task's node (they only read the cache).

Each shard writes only its own cache file (one SQLite writer per file, so a shared filesystem holds them
safely), under a key of the run: a shard whose worker died is re-run by Ray (max_retries) and a restarted
`rlgate check` re-runs its shards, both resuming from that file, so nothing is generated twice. Ray is
imported only here, only for kind ray (the `ray` extra).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.harness import ProgressSink, RunOutcome, SilentProgress
from rlgate.harness.checkpoint import CheckpointInfo

#: written in a shard's folder while a Ray worker runs it: which host and process (to find or stop it)
RUNNING_FILE = "running.json"


def run_role(resolved: ResolvedContract, tasks: list[ResolvedTask], out: Path, *, cache_dir: Path,
             checkpoint: CheckpointInfo, limit: int | None, role: str, progress: ProgressSink | None = None,
             sequential_look: int | None = None, order_seed: int = 0) -> RunOutcome:
    """One of check's runs, by the contract's executor: `evaluate` in this process, or shards on Ray."""
    from rlgate.app.runs import evaluate

    progress = progress or SilentProgress()
    spec = resolved.contract.protocol.executor
    if spec.kind == "local":
        return evaluate(resolved, tasks, out, cache_dir=cache_dir, checkpoint=checkpoint, limit=limit, role=role,
                        progress=progress, sequential_look=sequential_look, order_seed=order_seed)
    if sequential_look is not None:
        raise InputError("protocol.sequential generates look by look in one process; the ray executor runs "
                         "shards of every document", file=resolved.path, field="protocol.executor.kind",
                         fix="remove protocol.sequential, or set protocol.executor.kind: local")
    return _on_ray(resolved, tasks, [RoleRun(role, checkpoint, out, progress)], cache_dir=cache_dir, limit=limit,
                   progress=progress)[0]


def run_key(resolved: ResolvedContract, tasks: list[ResolvedTask], checkpoint: CheckpointInfo,
            limit: int | None, shards: int) -> str:
    """The run a shard belongs to (contract content, tasks, checkpoint, limit, shard count): its caches' folder."""
    text = json.dumps([resolved.content_hash(), [t.name for t in tasks], checkpoint.fingerprint, limit, shards])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RoleRun:
    """One of check's runs: its role, checkpoint, folder and progress."""

    role: str
    checkpoint: CheckpointInfo
    out: Path
    progress: ProgressSink


def run_roles(resolved: ResolvedContract, tasks: list[ResolvedTask], runs: list[RoleRun], *, cache_dir: Path,
              limit: int | None, progress: ProgressSink | None = None) -> list[RunOutcome]:
    """check's runs (baseline, candidate), by the contract's executor: in this process one after another, or on
    Ray all at once (every role's shards submitted together, then merged on a worker)."""
    progress = progress or SilentProgress()
    if resolved.contract.protocol.executor.kind == "local":
        outcomes = []
        for run in runs:
            progress.message(f"{run.role} {run.checkpoint.source}")
            outcomes.append(run_role(resolved, tasks, run.out, cache_dir=cache_dir, checkpoint=run.checkpoint,
                                     limit=limit, role=run.role, progress=run.progress))
        return outcomes
    for run in runs:
        progress.message(f"{run.role} {run.checkpoint.source}")
    return _on_ray(resolved, tasks, runs, cache_dir=cache_dir, limit=limit, progress=progress)


def _on_ray(resolved: ResolvedContract, tasks: list[ResolvedTask], runs: list[RoleRun], *, cache_dir: Path,
            limit: int | None, progress: ProgressSink) -> list[RunOutcome]:
    """Every role's shards at once; a role whose checkpoint an earlier role shards (same fingerprint: the same
    requests) is evaluated from the merged cache, as one process finds it cached. The merges run on a worker
    that ran a shard (lm-eval already imported there), so this process never imports lm-eval."""
    from rlgate.app.runs import one_harness
    from rlgate.harness import get_harness

    ray = _ray()
    spec = resolved.contract.protocol.executor
    problem = gcs_problem(spec.address)
    if problem is not None:
        raise InputError(f"cannot reach the Ray cluster at '{spec.address}': {problem}", file=resolved.path,
                         field="protocol.executor.address",
                         fix="start one (ray start --head), set $RAY_ADDRESS, or give the address `ray start` printed")
    try:
        ray.init(address=spec.address, ignore_reinit_error=True, logging_level="ERROR", log_to_driver=False,
                 configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise InputError(f"cannot reach the Ray cluster at '{spec.address}': {str(exc).splitlines()[0]}",
                         file=resolved.path, field="protocol.executor.address",
                         fix="start one (ray start --head), set $RAY_ADDRESS, or give ray://HOST:PORT") from None
    remote = ray.remote(num_cpus=spec.cpus_per_shard, num_gpus=spec.gpus_per_shard, max_retries=spec.max_retries,
                        retry_exceptions=False)(run_shard)
    cache_dir = cache_dir.resolve()
    refs: dict[Any, str] = {}
    steps: list[MergeStep] = []
    sharded: set[str] = set()
    from_cache = get_harness(one_harness(resolved, tasks)).answers_from_cache  # inspect: every role runs live
    for run in runs:
        out = run.out.resolve()
        if from_cache and run.checkpoint.fingerprint in sharded:  # from the cache the earlier role's merge fills
            steps.append(MergeStep(run.role, out, run.checkpoint, None))
            continue
        sharded.add(run.checkpoint.fingerprint)
        key = run_key(resolved, tasks, run.checkpoint, limit, spec.shards)
        folders = [out.parent / f"{out.name}-shards" / f"{k}-of-{spec.shards}" for k in range(1, spec.shards + 1)]
        steps.append(MergeStep(run.role, out, run.checkpoint, folders))
        job = {"contract": str(resolved.path), "tasks": [t.name for t in tasks], "checkpoint": asdict(run.checkpoint),
               "limit": limit, "role": run.role, "shards": spec.shards}
        caches = [cache_dir / "shards" / key / str(k) for k in range(1, spec.shards + 1)]
        _seed(cache_dir, caches, run.checkpoint.fingerprint)
        for k, folder in enumerate(folders, 1):
            refs[remote.remote(job, k, str(folder), str(caches[k - 1]))] = f"{run.role} shard {k}/{spec.shards}"
    progress.message(f"{len(refs)} shard(s) of {', '.join(r.role for r in runs)} on the Ray cluster "
                     f"({spec.gpus_per_shard:g} GPU each)")
    _wait(ray, refs, spec.max_retries, progress)
    options = {"num_cpus": spec.cpus_per_shard, "num_gpus": 0, "max_retries": spec.max_retries,
               "retry_exceptions": False}
    merged = ray.remote(**options)(merge_generations).remote(str(resolved.path), steps, str(cache_dir))
    node = _wait(ray, {merged: "the merge of the shards' generations"}, spec.max_retries, progress)[0]
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    # the roles only read the merged cache now, so they are assembled at once, on the host that holds its
    # SQLite write-ahead log (its readers must share one host); a role's retries stay there too
    assemble = ray.remote(**options, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))(
        assemble_role)
    names = [t.name for t in tasks]
    assembled = {assemble.remote(str(resolved.path), names, step, str(cache_dir), limit): f"the merge of {step.role}"
                 for step in steps}
    outcomes: list[RunOutcome] = _wait(ray, assembled, spec.max_retries, progress)
    return [replace(o, out_dir=run.out, results_file=run.out / o.results_file.relative_to(o.out_dir))
            for o, run in zip(outcomes, runs, strict=True)]


def gcs_problem(address: str, timeout: float = 5.0) -> str | None:
    """Why nothing answers at the cluster `address` names (None: its GCS accepts a connection, or this cannot
    tell). ray.init retries an address whose GCS does not answer without end (seen: ten minutes of 'Failed to
    get cluster ID' for a stopped cluster), so a dead or mistyped address is refused before it, in seconds."""
    if address.startswith("ray://"):  # Ray Client: ray.init gives up by itself
        return None
    try:  # Ray's own reading of the address ('auto': $RAY_ADDRESS, then the cluster `ray start` recorded)
        from ray._private.services import canonicalize_bootstrap_address

        found = canonicalize_bootstrap_address(address)
    except Exception:  # no cluster recorded for 'auto', or the private helper moved: ray.init says what it says
        return None
    host, _, port = (found or "").rpartition(":")
    if not host or not port.isdigit():
        return None
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return None
    except OSError as exc:
        return f"nothing answers at {found} ({exc.strerror or exc})"


def _wait(ray: Any, refs: dict[Any, str], retries: int, progress: ProgressSink) -> list[Any]:
    """The tasks' results in the order given; a failed one stops the run (its shards' caches stay for a re-run)."""
    results: dict[Any, Any] = {}
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        try:
            results[done[0]] = ray.get(done[0])
        except Exception as exc:  # a Ray error wraps the task's; bad input stays bad input (exit 2)
            cause = getattr(exc, "cause", None)
            if isinstance(cause, InputError):
                raise cause from None
            raise RuntimeError(f"{refs[done[0]]} failed after {retries} retries: {str(exc).splitlines()[0]}; its "
                               "generations so far are cached: run the same command again to resume") from None
        progress.message(f"{refs[done[0]]} done")
    return [results[ref] for ref in refs]


@dataclass(frozen=True)
class MergeStep:
    """What the merging worker does for one role: merge its shards' folders, or (`shards` None) evaluate it
    from the cache the other role's merge filled (the same checkpoint)."""

    role: str
    out: Path
    checkpoint: CheckpointInfo
    shards: list[Path] | None


def merge_generations(contract: str, steps: list[MergeStep], cache_dir: str) -> str:
    """On a Ray worker: every sharded role's generations into the main cache, one role after another (one
    writer); returns the node it ran on, where the roles are then assembled (`assemble_role`)."""
    import ray

    from rlgate.app.shards import ShardMerge
    from rlgate.harness.vocabulary import load_contract

    resolved = load_contract(Path(contract))
    for step in steps:
        if step.shards is not None:
            ShardMerge.of(step.shards, step.out, cache_dir=Path(cache_dir), resolved=resolved).generations()
    return str(ray.get_runtime_context().get_node_id())


def assemble_role(contract: str, task_names: list[str], step: MergeStep, cache_dir: str,
                  limit: int | None) -> RunOutcome:
    """On a Ray worker, once the generations are merged: a role's whole run from its shards, or (no shards of its
    own) evaluated from the cache the other role's shards filled; the cache is only read."""
    from rlgate.app.runs import evaluate
    from rlgate.app.shards import ShardMerge
    from rlgate.harness.vocabulary import load_contract

    resolved = load_contract(Path(contract))
    if step.shards is not None:
        return ShardMerge.of(step.shards, step.out, cache_dir=Path(cache_dir), resolved=resolved).assemble()
    by_name = {t.name: t for t in resolved.tasks}
    return evaluate(resolved, [by_name[name] for name in task_names], step.out, cache_dir=Path(cache_dir),
                    checkpoint=step.checkpoint, limit=limit, role=step.role, cached_only=True)


def _seed(cache_dir: Path, caches: list[Path], fingerprint: str) -> None:
    """A new shard cache starts with what the main cache holds for the checkpoint (a baseline cached by an
    earlier run, one process or sharded), so a shard never generates what is already cached."""
    from rlgate.store.cache import GenerationCache

    main = cache_dir / "cache.sqlite"
    fresh = [c for c in caches if not (c / "cache.sqlite").exists()]
    if not fresh or not main.exists():
        return
    with GenerationCache(main) as cache:
        for folder in fresh:
            cache.export_fingerprint(fingerprint, folder / "cache.sqlite")


def run_shard(job: dict[str, Any], k: int, out: str, cache_dir: str) -> str:
    """Shard `k` of a run, on a Ray worker: `evaluate` with the shard's own cache file; returns its folder."""
    from rlgate.app.runs import evaluate
    from rlgate.harness.vocabulary import load_contract

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RUNNING_FILE).write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))
    resolved = load_contract(Path(job["contract"]))
    by_name = {t.name: t for t in resolved.tasks}
    evaluate(resolved, [by_name[name] for name in job["tasks"]], folder, cache_dir=Path(cache_dir),
             checkpoint=CheckpointInfo(**job["checkpoint"]), limit=job["limit"], role=job["role"],
             shard=(k, job["shards"]))
    (folder / RUNNING_FILE).unlink(missing_ok=True)
    return out


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError.for_extra("protocol.executor.kind: ray", "ray", "ray") from None
    return ray
