"""`rlgate check`'s use case: contract -> checkpoint checks -> baseline and candidate runs -> decision -> reports.

Everything heavy happens in the layers this calls (harnesses, engine, report); this module decides the
order, where each run's folder goes, and that every check that can fail fast runs before any model is
loaded. The decision itself is `rlgate.app.decide`'s, shared with `rlgate gate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlgate.app.executor import RoleRun, run_role, run_roles
from rlgate.app.runs import Prefixed, baseline_override, check_checkpoint, default_cache_dir, select_tasks
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.engine.models import Decision, SequentialReplay
from rlgate.harness import ProgressSink, RunOutcome, SilentProgress
from rlgate.harness.checkpoint import CheckpointInfo
from rlgate.harness.vocabulary import load_contract
from rlgate.results.manifest import RunManifest
from rlgate.results.shared_values import SharedValues


@dataclass
class CheckResult:
    """What `check` produced: the decision, the two runs, the reports, and what it warned about."""

    decision: Decision
    out_dir: Path
    candidate: RunOutcome
    baseline: RunOutcome | None
    reports: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    baselines: dict[str, float] = field(default_factory=dict)  # as GateOutcome.baselines


def _read_run(folder: Path, outcome: RunOutcome | None, shared: SharedValues | None = None) -> Any:
    from rlgate.harness import read_results

    run = read_results(folder, harness=outcome.manifest.harness if outcome is not None else None, shared=shared)
    return run if outcome is None else outcome.manifest.attach_to(run)


def check(contract: Path | ResolvedContract, checkpoint: str, out: Path, *, cache_dir: Path | None = None,
          lora_base: str | None = None, limit: int | None = None, seed: int = 0, progress: ProgressSink | None = None,
          baseline: str | None = None) -> CheckResult:
    """Evaluate the baseline (once per fingerprint: cached) and the candidate, gate, and write the reports.

    `contract`: a contract file, or one already loaded (`rlgate watch` passes a view of it restricted to the
    splits it gates). `baseline` overrides the contract's baseline: a checkpoint to evaluate or a stored
    results folder.
    """
    from rlgate.app.decide import decide_runs, write_decided

    progress = progress or SilentProgress()
    cache_dir = cache_dir or default_cache_dir()
    resolved = contract if isinstance(contract, ResolvedContract) else load_contract(contract)
    tasks = select_tasks(resolved, None, release_gate=True)
    from rlgate.app.sources import MonitorSource

    if MonitorSource().applies(resolved):
        from rlgate.monitor.api import contract_policy

        contract_policy(resolved)  # read at decision time; a broken policy file is an error before the runs
    warnings: list[str] = []
    candidate_info = check_checkpoint(resolved, checkpoint, cache_dir=cache_dir, lora_base=lora_base)
    baseline_info = None
    base = resolved.contract.main_baseline
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
    manifests: dict[str, RunManifest] = {"candidate": cand_outcome.manifest}
    if base_outcome is not None:
        manifests["baseline"] = base_outcome.manifest
    from rlgate.app.decide import other_references

    decided = decide_runs(resolved, *runs.read(), out, seed=seed, checkpoint=checkpoint, manifests=manifests,
                          warnings=warnings, sequential_status=status, references=other_references(resolved))
    runs.release()  # the reports are written from the report model: the runs' records are freed first
    gated = write_decided(decided, out)
    decision, reports = gated.decision, gated.reports
    return CheckResult(decision, out, cand_outcome, base_outcome, reports, warnings, gated.baselines)


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
            shared = SharedValues()  # the candidate's values equal to the baseline's: the baseline's objects
            if self.base_outcome is not None:
                baseline = _read_run(self.out / "baseline", self.base_outcome, shared)
            else:
                if self._stored_baseline is None:
                    self._stored_baseline = _read_run(self.base_results, None)  # type: ignore[arg-type]
                baseline = shared.share(self._stored_baseline)  # read once, the reference of every look
            self._read = (baseline, _read_run(self.out / "candidate", self.cand_outcome, shared))
        return self._read

    def release(self) -> None:
        """Forget the runs read (the last look's and a stored baseline): the decision no longer needs them."""
        self._read = self._stored_baseline = None

    def look(self, k: int | None) -> None:
        self._read = None
        if k is None:  # every role at once where the executor can (Ray: both roles' shards together)
            runs = [RoleRun("candidate", self.candidate_info, self.out / "candidate",
                            Prefixed(self.progress, "candidate "))]
            if self.baseline_info is not None:
                runs.insert(0, RoleRun("baseline", self.baseline_info, self.out / "baseline",
                                       Prefixed(self.progress, "baseline ")))
            *base, self.cand_outcome = run_roles(self.resolved, self.tasks, runs, cache_dir=self.cache_dir,
                                                 limit=self.limit, progress=self.progress)
            self.base_outcome = base[0] if base else None
            return
        step = f" (look {k})"
        if self.baseline_info is not None:
            self.progress.message(f"baseline {self.baseline_info.source}{step}")
            self.base_outcome = run_role(self.resolved, self.tasks, self.out / "baseline", cache_dir=self.cache_dir,
                                         checkpoint=self.baseline_info, limit=self.limit, role="baseline",
                                         progress=Prefixed(self.progress, "baseline "), sequential_look=k,
                                         order_seed=self.seed)
        self.progress.message(f"candidate {self.candidate_info.source}{step}")
        self.cand_outcome = run_role(self.resolved, self.tasks, self.out / "candidate", cache_dir=self.cache_dir,
                                     checkpoint=self.candidate_info, limit=self.limit, role="candidate",
                                     progress=Prefixed(self.progress, "candidate "), sequential_look=k,
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
