"""Run a contract's inspect tasks live (or import `.eval` logs) into an rlgate run folder.

One log per task under `<out>/logs/`, beside `run_manifest.json`. Resuming: a complete log made
under the same model and protocol is reused (nothing generated twice); an interrupted one (killed,
cancelled, errored) is resumed with inspect's `eval_retry`, which keeps its finished samples (for a
killed run, whose log is still "started", it first recovers the finished samples from inspect's sample
buffer; tests/harness/test_inspect_resume.py kills a run to check that nothing is generated twice). Model
calls go through inspect's providers; the cache of tasks whose solvers cache lives in rlgate's cache
folder (INSPECT_CACHE_DIR). Sample errors never abort the run: they are failed trajectories.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic
from rlgate.contract.loader import ResolvedTask, local_task_file
from rlgate.harness.base import RunOutcome, RunPlan
from rlgate.harness.inspect import protocol as mapping
from rlgate.harness.inspect.log import CHECKPOINT_KEY, PROTOCOL_KEY, TASK_NAME_KEY, read_log, task_name, task_result
from rlgate.harness.inspect.shards import LOGS, SHARD_KEY, ShardPlan, join_logs, samples_in_run, window_key
from rlgate.harness.inspect.toolbox.policies import scripted_model
from rlgate.results.manifest import MANIFEST_FILE, Drops, RunManifest, TaskRun
from rlgate.results.shard import ShardManifest


def _task_spec(task: ResolvedTask) -> str:
    """What inspect loads: `inspect_evals/x`, or `/abs/file.py[@function]` for a trusted local file."""
    if local_task_file(task.entry) is not None:
        if task.path is None:
            raise InputError(f"local task file '{local_task_file(task.entry)}' does not exist, and running task "
                             f"'{task.name}' needs it", field="suites.tasks.task",
                             fix="restore the task file (its path is relative to the suite file), or gate the "
                                 "task's stored logs with `rlgate gate`, which needs no task source")
        assert task.trusted  # the loader refuses untrusted files
        function = task.entry.task.split("@", 1)[1] if "@" in task.entry.task else None
        return f"{task.path}@{function}" if function else str(task.path)
    return task.entry.task


def _load_task(task: ResolvedTask) -> Any:
    """The inspect Task object; an unknown task or a task file that fails to load is an InputError."""
    from inspect_ai._eval.loader import load_tasks

    from rlgate.harness.bfcl import categories_of
    from rlgate.harness.bfcl.flags import FLAG_ARGS

    spec = _task_spec(task)
    args = dict(task.entry.task_args)
    if categories_of(task):  # the BFCL model flags are for bfcl-eval's checker (imports), not the inspect task
        args = {k: v for k, v in args.items() if k not in FLAG_ARGS}
    try:
        found = load_tasks([spec], task_args=args)
    except Exception as exc:
        raise InputError(f"inspect cannot load task '{task.entry.task}' ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:200] if str(exc) else ''})", field="suites.tasks.task",
                         fix="name an inspect-evals task (pip install 'rl-release-gate[agent]'; e.g. "
                             "inspect_evals/bfcl) or a local task file in trusted_task_paths") from None
    if not found:
        raise InputError(f"inspect knows no task '{task.entry.task}'", field="suites.tasks.task",
                         fix="check the name (inspect list tasks) or the file's @task function")
    return found[0]


def _reusable(log_file: Path, fingerprint: str, fields: dict[str, Any],
              window: list[int] | None) -> tuple[bool, bool]:
    """(same run?, complete?) of an existing log: same checkpoint, protocol and shard window in its metadata."""
    log = read_log(log_file, header_only=True)
    meta = log.eval.metadata or {}
    same = meta.get(CHECKPOINT_KEY) == fingerprint and meta.get(PROTOCOL_KEY) == fields \
        and meta.get(SHARD_KEY) == window
    return same, log.status == "success"


class InspectRunner:
    """Runs inspect tasks with the contract's protocol; writes logs and a run manifest."""

    def run(self, plan: RunPlan) -> RunOutcome:
        from inspect_ai import eval as inspect_eval
        from inspect_ai import eval_retry

        started, stamp = time.monotonic(), datetime.now(timezone.utc).isoformat(timespec="seconds")
        contract = plan.contract.contract
        protocol = contract.protocol
        if plan.responses is not None:
            return self._import(plan, started, stamp)
        if plan.checkpoint is None:
            raise InputError("no checkpoint to evaluate", fix="pass --checkpoint PATH or --responses LOG.eval")
        model, model_args = mapping.model_name(protocol, plan.checkpoint.load_path)
        base_url = model_args.pop("base_url", None)
        model_obj: Any = scripted_model(model) or model
        key = mapping.api_key(protocol)
        if key:
            model_args["api_key"] = key
        logs_dir = plan.out_dir / LOGS
        logs_dir.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("INSPECT_CACHE_DIR", str((plan.cache_dir / "inspect").resolve()))
        runs: list[TaskRun] = []
        shard = ShardPlan(plan.shard)
        for task in plan.tasks:
            fields = mapping.agent_protocol(protocol, task)
            limit = plan.limit or task.entry.limit or protocol.limit
            loaded = _load_task(task) if plan.shard is not None else None
            window = shard.window(task.name, len(loaded.dataset), limit) if loaded is not None else None
            if window is not None and not window:
                plan.progress.message(f"{task.name}: no sample in shard {shard.label}")
                continue
            existing = self._existing(logs_dir, task.name)
            reuse = _reusable(existing, plan.checkpoint.fingerprint, fields, window_key(window)) \
                if existing is not None else None
            t0 = time.monotonic()
            same, complete = reuse or (False, False)
            if existing is not None and same and complete:
                plan.progress.message(f"{task.name}: complete log from an earlier run reused ({existing.name})")
                log_file, cached = existing, True
            elif existing is not None and same and model_obj is model:
                plan.progress.message(f"{task.name}: resuming the interrupted run {existing.name}")
                logs = eval_retry(str(existing), log_dir=str(logs_dir), display="none", fail_on_error=False)
                log_file, cached = self._replace(existing, logs), False
            else:
                if existing is not None:  # another checkpoint or protocol (or a scripted policy): never mixed in
                    existing.unlink()
                if loaded is None:
                    loaded = _load_task(task)
                count = len(window) if window is not None else samples_in_run(len(loaded.dataset), limit)
                plan.progress.task_started(task.name, count * protocol.sampling.n, 0)
                metadata: dict[str, Any] = {TASK_NAME_KEY: task.name, PROTOCOL_KEY: fields,
                                            CHECKPOINT_KEY: plan.checkpoint.fingerprint}
                if window is not None:  # inspect's positional range: ids as the whole dataset numbers them
                    metadata[SHARD_KEY] = window_key(window)
                logs = inspect_eval(
                    loaded, model=model_obj, model_args=model_args if model_obj is model else {},
                    model_base_url=base_url, epochs=protocol.sampling.n,
                    limit=(window.start, window.stop) if window is not None else limit, log_dir=str(logs_dir),
                    log_format="eval", display="none", fail_on_error=False, metadata=metadata,
                    **mapping.limits(protocol.agent), **mapping.generate_config(protocol))
                log_file, cached = Path(logs[0].location), False
                plan.progress.advanced(task.name, count * protocol.sampling.n)
            plan.progress.task_finished(task.name)
            runs.append(self._task_run(task, log_file, time.monotonic() - t0, cached))
        if plan.shard is not None:
            shard.refuse_empty()
        for run in runs if plan.shard is not None else []:  # a shard's folder alone covers part of each task
            run.expected_documents = shard.base[run.task] * protocol.sampling.n
        outcome = self._finish(plan, runs, model, model_args, started, stamp, plan.checkpoint.fingerprint)
        if plan.shard is not None:
            shard.write(plan, outcome.manifest.harness)
        return outcome

    def merge(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> RunOutcome:
        """The shards' logs joined into one log per task in `<out>/logs/`, with the run manifest one process
        writes (what the shards generated is counted by `rlgate.app.shards`)."""
        assert plan.checkpoint is not None
        started, stamp = time.monotonic(), datetime.now(timezone.utc).isoformat(timespec="seconds")
        model, model_args = mapping.model_name(plan.contract.contract.protocol, plan.checkpoint.load_path)
        model_args.pop("base_url", None)
        logs_dir = plan.out_dir / LOGS
        logs_dir.mkdir(parents=True, exist_ok=True)
        runs = [self._task_run(task, join_logs(plan, task, shards, logs_dir), 0.0, False) for task in plan.tasks
                if any(m.documents.get(task.name) for _, m in shards)]
        return self._finish(plan, runs, model, model_args, started, stamp, plan.checkpoint.fingerprint)

    @staticmethod
    def _existing(logs_dir: Path, name: str) -> Path | None:
        for file in sorted(logs_dir.glob("*.eval")):
            try:
                if task_name(read_log(file, header_only=True)) == name:
                    return file
            except InputError:  # truncated by a kill: kept aside (inspect's recover_eval_log may save samples)
                aside = logs_dir / "unreadable"
                aside.mkdir(exist_ok=True)
                file.replace(aside / file.name)
        return None

    @staticmethod
    def _replace(old: Path, logs: list[Any]) -> Path:
        new = Path(logs[0].location)
        if new.resolve() != old.resolve() and new.exists():
            old.unlink(missing_ok=True)  # eval_retry wrote a new log holding the old one's samples
        return new

    def _task_run(self, task: ResolvedTask, log_file: Path, seconds: float, cached: bool) -> TaskRun:
        log = read_log(log_file)
        result = task_result(log, log_file)
        drops = Drops.of_trajectories(result.samples, lambda _, traj: traj.error or ", ".join(traj.limits_hit))
        tokens = sum((s.trajectory.total_tokens or 0) for s in result.samples if s.trajectory is not None)
        return TaskRun(task=task.name, suite_task=task.entry.task, version=str(log.eval.task_version),
                       task_hash=str(log.eval.task_id), dataset=str(log.eval.dataset.name or ""),
                       documents=len(result.samples), requests=len(result.samples),
                       cached=len(result.samples) if cached else 0, generated=0 if cached else len(result.samples),
                       tokens_out=tokens or None, wall_time_s=round(seconds, 3), drops=drops)

    def _import(self, plan: RunPlan, started: float, stamp: str) -> RunOutcome:
        """`--responses LOG.eval` (or a folder of logs): copy them in, checked against the contract's tasks."""
        assert plan.responses is not None
        from rlgate.harness.inspect.log import log_files

        logs_dir = plan.out_dir / LOGS
        logs_dir.mkdir(parents=True, exist_ok=True)
        wanted = {t.name: t for t in plan.tasks}
        runs: list[TaskRun] = []
        for file in log_files(plan.responses):
            log = read_log(file, header_only=True)
            name = task_name(log)
            if name not in wanted:
                raise InputError(f"this log is of task '{log.eval.task}' ({name}), which the contract's suites do "
                                 f"not list (they list: {', '.join(wanted)})", file=file,
                                 fix="import the log of a contract task, or give the suite entry `name: "
                                     f"{name}`")
            target = logs_dir / file.name
            if target.resolve() != file.resolve():
                shutil.copyfile(file, target)
            runs.append(self._task_run(wanted[name], target, 0.0, True))
        missing = [n for n in wanted if n not in {r.task for r in runs}]
        if missing and not plan.responded_only:
            raise InputError(f"no log for task(s) {', '.join(missing)}", file=plan.responses,
                             fix="add their .eval logs, or pass --responded-only to score only the logs given")
        digest = "logs:" + ",".join(sorted(r.task_hash for r in runs))
        return self._finish(plan, runs, "imported", {}, started, stamp, digest, backend="responses")

    def _finish(self, plan: RunPlan, runs: list[TaskRun], model: str, model_args: dict[str, Any], started: float,
                stamp: str, fingerprint: str, backend: str | None = None) -> RunOutcome:
        from rlgate.harness.inspect import InspectHarness

        protocol = plan.contract.contract.protocol
        version = InspectHarness().version()
        ckpt = plan.checkpoint
        manifest = RunManifest(
            contract=str(plan.contract.path), contract_name=plan.contract.name, role=plan.role,
            checkpoint=ckpt.source if ckpt else str(plan.responses),
            checkpoint_kind=ckpt.kind if ckpt else "responses", checkpoint_fingerprint=fingerprint,
            weights_hash=ckpt.weights_hash if ckpt else None, load_path=ckpt.load_path if ckpt else None,
            checkpoint_notes=list(ckpt.notes) if ckpt else [], backend=backend or protocol.backend,
            harness="inspect", harness_version=version, model_spec={"inspect_model": model},
            model_args={k: v for k, v in model_args.items() if "key" not in k.lower()},
            protocol_hash=mapping.protocol_hash(protocol), protocol=mapping.agent_protocol(protocol),
            library_versions={"inspect_ai": version or "unknown"}, started=stamp,
            wall_time_s=round(time.monotonic() - started, 3), model_loaded=backend is None, tasks=runs,
            benchmark_versions={t.name: t.benchmark_version for t in plan.tasks if t.name in {r.task for r in runs}},
            task_visibility={t.name: t.visibility for t in plan.tasks}, results_file=LOGS,
            seeds={"seed": protocol.sampling.seed})
        write_text_atomic(plan.out_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2))
        return RunOutcome(plan.out_dir, plan.out_dir / LOGS, manifest, backend is None)
