"""Runs of a contract's tasks by their harness: which tasks, which checkpoint, into which folder.

`rlgate eval` (one run) and `rlgate check` (two) share these steps: selecting the tasks of the chosen splits
(private splits only for the release gate), checking a checkpoint before any model time, and handing the
run to the harness that owns the tasks.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.harness import ProgressSink, RunOutcome, SilentProgress, get_harness
from rlgate.harness.checkpoint import CheckpointInfo, inspect_checkpoint
from rlgate.harness.registry import importer_for
from rlgate.harness.vocabulary import load_contract


def default_cache_dir() -> Path:
    """`$RLGATE_CACHE_DIR`, else `.rlgate/` in the working folder (beside the history store)."""
    import os

    return Path(os.environ.get("RLGATE_CACHE_DIR") or ".rlgate")


def select_tasks(resolved: ResolvedContract, splits: list[str] | None, *, release_gate: bool) -> list[ResolvedTask]:
    """The contract's tasks in the chosen splits; private splits only for the release gate."""
    chosen = splits or [name for name, s in resolved.contract.splits.items()
                        if release_gate or not s.release_gate_only]
    unknown = [s for s in chosen if s not in resolved.contract.splits]
    if unknown:
        raise InputError(f"unknown split '{unknown[0]}'", field="--split",
                         fix=f"splits of {resolved.name}: {', '.join(resolved.contract.splits)}")
    if not release_gate:
        private = [s for s in chosen if resolved.contract.splits[s].release_gate_only]
        if private:
            raise InputError(f"split '{private[0]}' is release_gate_only: it is evaluated only by `rlgate check` "
                             "or `rlgate gate`, so it never becomes a tuning target",
                             field="--split",
                             fix="evaluate the other splits, or run `rlgate check` for the release gate")
    tasks = [t for t in resolved.tasks if t.split in chosen]
    if not tasks:
        raise InputError(f"no task of {resolved.name} is in split(s) {', '.join(chosen)}", field="--split",
                         fix="choose a split that has tasks (rlgate validate lists them)")
    return tasks


def check_checkpoint(resolved: ResolvedContract, ref: str, *, cache_dir: Path, lora_base: str | None = None,
                     relative_to_contract: bool = False) -> CheckpointInfo:
    """Checkpoint checks, before any model time; a contract-relative path is resolved like other references."""
    from rlgate.store.cache import GenerationCache

    if relative_to_contract and not Path(ref).expanduser().is_absolute():
        candidate = resolved.resolve_path(ref)
        ref = str(candidate) if candidate.exists() else ref
    protocol = resolved.contract.protocol
    with GenerationCache(cache_dir / "cache.sqlite") as cache:
        return inspect_checkpoint(ref, backend=protocol.backend, lora_base=lora_base, cache=cache,
                                  work_dir=cache_dir, served_url=protocol.openai.base_url,
                                  served_model=protocol.openai.model, chat_template=protocol.chat_template)


def evaluate(resolved: ResolvedContract, tasks: list[ResolvedTask], out: Path, *, cache_dir: Path,
             checkpoint: CheckpointInfo | None = None, responses: Path | None = None, responded_only: bool = False,
             limit: int | None = None, role: str = "candidate", progress: ProgressSink | None = None,
             sequential_look: int | None = None, order_seed: int = 0, shard: tuple[int, int] | None = None,
             cached_only: bool = False) -> RunOutcome:
    """One run (live or imported) of `tasks` into `out` by their harness: its outputs + run_manifest.json.

    `sequential_look`: only the documents of looks 1..k of the seeded order (protocol.sequential).
    `shard`: shard K of N of every task's documents (plus shard.json); `cached_only`: never load the model."""
    name = one_harness(resolved, tasks)
    harness = (importer_for(name, responses) if responses is not None and responses.exists() else None) \
        or get_harness(name)
    if sequential_look is not None and not harness.generates_in_looks:
        raise InputError(f"protocol.sequential generates documents look by look; the {name} harness runs every "
                         "sample", file=resolved.path, field="protocol.sequential",
                         fix="remove protocol.sequential, or gate stored results with `rlgate gate --sequential`")
    if shard is not None and not harness.runs_shards:
        raise InputError(f"the {name} harness does not run shards of a task's documents", file=resolved.path,
                         field="protocol.executor", fix="run its tasks in one process (executor kind local, no "
                         "--shard); shards are supported for lm_eval and inspect tasks")
    if cached_only and not harness.answers_from_cache:
        raise InputError(f"the {name} harness cannot answer a run from the cache alone", file=resolved.path,
                         field="protocol.executor", fix="run its tasks live (no cached-only replay)")
    if shard is not None and (sequential_look is not None or responses is not None):
        raise InputError("shards split a live run's documents; protocol.sequential and --responses choose their "
                         "own", file=resolved.path, field="--shard",
                         fix="drop --shard (or protocol.executor), or remove protocol.sequential")
    plan = harness.plan(resolved, tasks, out, cache_dir, checkpoint=checkpoint, responses=responses,
                        responded_only=responded_only, limit=limit, role=role, progress=progress or SilentProgress())
    if sequential_look is not None:
        plan = replace(plan, sequential_look=sequential_look, order_seed=order_seed)
    if shard is not None or cached_only:
        plan = replace(plan, shard=shard, cached_only=cached_only)
    return harness.run(plan)


def eval_contract(contract: Path, out: Path, *, checkpoint: str | None = None, responses: Path | None = None,
                  splits: list[str] | None = None, limit: int | None = None, cache_dir: Path | None = None,
                  lora_base: str | None = None, responded_only: bool = False,
                  progress: ProgressSink | None = None, shard: tuple[int, int] | None = None) -> RunOutcome:
    """`rlgate eval`'s use case: one checkpoint (or imported responses) on the contract's public splits.

    A missing responses file is refused before the tasks' data loads (minutes, a download)."""
    if responses is not None and not responses.exists():
        raise InputError(f"responses file '{responses}' does not exist", file=responses, field="--responses",
                         fix="check the path given to --responses")
    progress = progress or SilentProgress()
    cache_dir = cache_dir or default_cache_dir()
    resolved = load_contract(contract)
    tasks = select_tasks(resolved, splits, release_gate=False)
    info = check_checkpoint(resolved, checkpoint, cache_dir=cache_dir, lora_base=lora_base) if checkpoint else None
    for note in info.notes if info else []:
        progress.message(f"note: {note}")
    return evaluate(resolved, tasks, out, cache_dir=cache_dir, checkpoint=info, responses=responses,
                    responded_only=responded_only, limit=limit, progress=progress, shard=shard)


def one_harness(resolved: ResolvedContract, tasks: list[ResolvedTask]) -> str:
    """The harness of the run's tasks; one run folder holds one harness's outputs."""
    names = sorted({t.harness for t in tasks})
    if len(names) > 1:
        raise InputError(f"the tasks to evaluate belong to several harnesses ({', '.join(names)}); one run "
                         "folder holds one harness's outputs", file=resolved.path, field="suites.tasks.harness",
                         fix="split the suites into one contract per harness")
    return names[0]


class Prefixed:
    """Progress for one of check's two runs: task names prefixed with the run's role."""

    def __init__(self, sink: ProgressSink, prefix: str) -> None:
        self.sink, self.prefix = sink, prefix

    def task_started(self, task: str, total: int, cached: int) -> None:
        self.sink.task_started(self.prefix + task, total, cached)

    def advanced(self, task: str, count: int) -> None:
        self.sink.advanced(self.prefix + task, count)

    def task_finished(self, task: str) -> None:
        self.sink.task_finished(self.prefix + task)

    def message(self, text: str) -> None:
        self.sink.message(text)


def baseline_override(ref: str) -> tuple[str | None, Path | None]:
    """`--baseline`: stored results some harness reads (e.g. an lm-eval output folder) or a checkpoint to evaluate."""
    from rlgate.harness import harness_for

    path = Path(ref).expanduser()
    if path.exists():
        try:
            harness_for(path)
        except InputError:
            return ref, None
        return None, path.resolve()
    return ref, None
