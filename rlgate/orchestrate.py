"""Glue for `rlgate eval` and `rlgate check`: contract → checkpoint checks → runs → engine → reports.

Everything heavy happens in the layers this calls (harnesses, engine, report); this module decides
the order, where each run's folder goes, and that every check that can fail fast runs before any
model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.engine.models import Decision, SequentialReplay
from rlgate.harness import ProgressSink, RunOutcome, SilentProgress, get_harness
from rlgate.harness.checkpoint import CheckpointInfo, inspect_checkpoint
from rlgate.harness.registry import importer_for
from rlgate.harness.vocabulary import load_contract
from rlgate.results.manifest import RunManifest


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
             sequential_look: int | None = None, order_seed: int = 0) -> RunOutcome:
    """One run (live or imported) of `tasks` into `out` by their harness: its outputs + run_manifest.json.

    `sequential_look`: only the documents of looks 1..k of the seeded order (protocol.sequential)."""
    name = _one_harness(resolved, tasks)
    harness = (importer_for(name, responses) if responses is not None and responses.exists() else None) \
        or get_harness(name)
    if sequential_look is not None and not harness.generates_in_looks:
        raise InputError(f"protocol.sequential generates documents look by look; the {name} harness runs every "
                         "sample", file=resolved.path, field="protocol.sequential",
                         fix="remove protocol.sequential, or gate stored results with `rlgate gate --sequential`")
    plan = harness.plan(resolved, tasks, out, cache_dir, checkpoint=checkpoint, responses=responses,
                        responded_only=responded_only, limit=limit, role=role, progress=progress or SilentProgress())
    if sequential_look is not None:
        plan = replace(plan, sequential_look=sequential_look, order_seed=order_seed)
    return harness.run(plan)


def _one_harness(resolved: ResolvedContract, tasks: list[ResolvedTask]) -> str:
    """The harness of the run's tasks; one run folder holds one harness's outputs."""
    names = sorted({t.harness for t in tasks})
    if len(names) > 1:
        raise InputError(f"the tasks to evaluate belong to several harnesses ({', '.join(names)}); one run "
                         "folder holds one harness's outputs", file=resolved.path, field="suites.tasks.harness",
                         fix="split the suites into one contract per harness")
    return names[0]


class _Prefixed:
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


@dataclass
class CheckResult:
    """What `check` produced: the decision, the two runs, the reports, and what it warned about."""

    decision: Decision
    out_dir: Path
    candidate: RunOutcome
    baseline: RunOutcome | None
    reports: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _read_run(folder: Path, outcome: RunOutcome | None) -> Any:
    from rlgate.harness import read_results

    run = read_results(folder, harness=outcome.manifest.harness if outcome is not None else None)
    return run if outcome is None else outcome.manifest.attach_to(run)


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


def check(contract: Path | ResolvedContract, checkpoint: str, out: Path, *, cache_dir: Path | None = None,
          lora_base: str | None = None, limit: int | None = None, seed: int = 0, progress: ProgressSink | None = None,
          baseline: str | None = None) -> CheckResult:
    """Evaluate the baseline (once per fingerprint: cached) and the candidate, gate, and write the reports.

    `contract`: a contract file, or one already loaded (`rlgate watch` passes a view of it restricted to the
    splits it gates). `baseline` overrides the contract's baseline: a checkpoint to evaluate or a stored
    results folder.
    """
    from rlgate.pipeline import decide_and_report

    progress = progress or SilentProgress()
    cache_dir = cache_dir or default_cache_dir()
    resolved = contract if isinstance(contract, ResolvedContract) else load_contract(contract)
    tasks = select_tasks(resolved, None, release_gate=True)
    from rlgate.pipeline.sources import MonitorSource

    if MonitorSource().applies(resolved):
        from rlgate.monitor.api import contract_policy

        contract_policy(resolved)  # read at decision time; a broken policy file is an error before the runs
    warnings: list[str] = []
    candidate_info = check_checkpoint(resolved, checkpoint, cache_dir=cache_dir, lora_base=lora_base)
    baseline_info = None
    base = resolved.contract.baseline
    base_checkpoint, base_results = base.checkpoint, resolved.baseline_results
    if baseline is not None:
        base_checkpoint, base_results = baseline_override(baseline)
    if base_results is None:
        assert base_checkpoint is not None  # the contract requires a checkpoint or results
        baseline_info = check_checkpoint(resolved, base_checkpoint, cache_dir=cache_dir, lora_base=base.lora_base,
                                         relative_to_contract=baseline is None)
        if candidate_info.weights_hash and candidate_info.weights_hash == baseline_info.weights_hash:
            warnings.append(f"the candidate has the same weights as the baseline (sha256 "
                            f"{candidate_info.weights_hash[:12]}…): it can only earn the baseline's score")
    for info in (baseline_info, candidate_info):
        warnings.extend(info.notes if info else [])
    for text in warnings:
        progress.message(f"warning: {text}")
    runs = _Runs(resolved, tasks, out, cache_dir, limit, seed, progress, baseline_info, candidate_info,
                 base_results=base_results)
    if resolved.contract.protocol.sequential is not None:
        status = _sequential_looks(runs)
    else:
        status = None
        runs.look(None)
    base_outcome, cand_outcome = runs.base_outcome, runs.cand_outcome
    assert cand_outcome is not None
    for outcome in (base_outcome, cand_outcome):
        if outcome is None:
            continue
        drops = outcome.manifest.drops
        if drops.errored + drops.timed_out + drops.limited + drops.sandbox_failed:
            extra = "".join([f", {drops.limited} hit a limit" if drops.limited else "",
                             f", {drops.sandbox_failed} lost their sandbox" if drops.sandbox_failed else ""])
            warnings.append(f"{outcome.manifest.role}: {drops.errored} request(s) errored and {drops.timed_out} "
                            f"timed out{extra}; they are scored as failures")
    baseline_run, candidate_run = runs.read()
    manifests: dict[str, RunManifest] = {"candidate": cand_outcome.manifest}
    if base_outcome is not None:
        manifests["baseline"] = base_outcome.manifest
    gated = decide_and_report(resolved, baseline_run, candidate_run, out, seed=seed, checkpoint=checkpoint,
                              manifests=manifests, warnings=warnings, sequential_status=status)
    decision, reports = gated.decision, gated.reports
    return CheckResult(decision, out, cand_outcome, base_outcome, reports, warnings)


@dataclass
class _Runs:
    """check's two live runs, re-run look by look in sequential mode (cached documents are never regenerated)."""

    resolved: ResolvedContract
    tasks: list[ResolvedTask]
    out: Path
    cache_dir: Path
    limit: int | None
    seed: int
    progress: ProgressSink
    baseline_info: CheckpointInfo | None
    candidate_info: CheckpointInfo
    base_results: Path | None = None
    base_outcome: RunOutcome | None = None
    cand_outcome: RunOutcome | None = None
    _read: tuple[Any, Any] | None = None
    _stored_baseline: Any = None

    def read(self) -> tuple[Any, Any]:
        """(baseline, candidate) results of the latest look, read once per look; a stored baseline once."""
        if self._read is None:
            assert self.cand_outcome is not None
            if self.base_outcome is not None:
                baseline = _read_run(self.out / "baseline", self.base_outcome)
            else:
                if self._stored_baseline is None:
                    self._stored_baseline = _read_run(self.base_results, None)  # type: ignore[arg-type]
                baseline = self._stored_baseline
            self._read = (baseline, _read_run(self.out / "candidate", self.cand_outcome))
        return self._read

    def look(self, k: int | None) -> None:
        self._read = None
        step = f" (look {k})" if k is not None else ""
        if self.baseline_info is not None:
            self.progress.message(f"baseline {self.baseline_info.source}{step}")
            self.base_outcome = evaluate(self.resolved, self.tasks, self.out / "baseline", cache_dir=self.cache_dir,
                                         checkpoint=self.baseline_info, limit=self.limit, role="baseline",
                                         progress=_Prefixed(self.progress, "baseline "), sequential_look=k,
                                         order_seed=self.seed)
        self.progress.message(f"candidate {self.candidate_info.source}{step}")
        self.cand_outcome = evaluate(self.resolved, self.tasks, self.out / "candidate", cache_dir=self.cache_dir,
                                     checkpoint=self.candidate_info, limit=self.limit, role="candidate",
                                     progress=_Prefixed(self.progress, "candidate "), sequential_look=k,
                                     order_seed=self.seed)


def _sequential_looks(runs: _Runs) -> SequentialReplay:
    """Generate look after look of the seeded order until every decision gate is settled (or a blocking one
    failed decisively, or the plan's last look): the anytime-valid status at the stop (SequentialReplay)."""
    from rlgate.engine.sequential_check import judge_generated

    resolved = runs.resolved
    plan = resolved.contract.protocol.sequential
    assert plan is not None
    k = 1
    while True:
        runs.look(k)
        assert runs.cand_outcome is not None
        baseline, candidate = runs.read()
        totals = {t.task: t.expected_documents or t.documents for t in runs.cand_outcome.manifest.tasks}
        status, stop = judge_generated(resolved.gates, baseline, candidate, plan, seed=runs.seed, totals=totals,
                                       look=k)
        runs.progress.message(f"look {k} of {status.looks_planned}: {status.documents_used}/{status.documents_total} "
                              f"documents; {status.stop_reason}")
        if stop:
            return status
        k += 1
