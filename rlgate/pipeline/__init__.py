"""From two runs to a written decision: the one place where every layer's gate input meets.

`rlgate gate` (stored results) and `rlgate check` (fresh runs) both end here, so they decide the
same way: training-monitor, contamination and judge verdicts join the contract's gates in the
pure engine; failure clusters, the monitor report and the judge report are attached; private-split
consultations and the gated checkpoint are recorded in the project history; every report format
is written. Nothing here computes statistics or renders anything itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlgate._core.errors import InputError
from rlgate._core.gcpause import collector_paused
from rlgate.contract.loader import ResolvedContract
from rlgate.engine.models import Decision, SequentialReplay
from rlgate.pipeline.sources import Contribution, GateSource, SourceInput, default_sources
from rlgate.results.models import RunResult

if TYPE_CHECKING:
    from rlgate.contract.models import GateConfig
    from rlgate.results.manifest import RunManifest
    from rlgate.store.protocol import HistoryStore

_STEP_RE = re.compile(r"(?:step|checkpoint|ckpt|iter)[_\-]?(\d+)", re.IGNORECASE)


@dataclass
class GateOutcome:
    """The decision and the files written for it."""

    decision: Decision
    reports: dict[str, Path] = field(default_factory=dict)


def checkpoint_step(checkpoint: str | None) -> int | None:
    """The training step in a checkpoint path such as `checkpoint-250` or `global_step_100`, if any."""
    if not checkpoint:
        return None
    found = _STEP_RE.findall(checkpoint)
    return int(found[-1]) if found else None


def _record_history(history: HistoryStore, resolved: ResolvedContract, decision: Decision, checkpoint: str | None,
                    step: int | None, monitor: Contribution | None) -> list[str]:
    """Count private-split consultations and store the gated checkpoint; return budget warnings."""
    from rlgate.badcases.discipline import record_consultations, training_run_of

    spec = resolved.contract.monitor
    run = training_run_of(resolved)
    private = resolved.private_tasks
    _, warnings = record_consultations(history, resolved, run, private) if private else ({}, [])
    if spec is not None and spec.training_run:
        # the monitor's modules load only when a training run is recorded (not on every gate)
        from rlgate._core.text import stored_text
        from rlgate.monitor.api import record_gated_checkpoint, training_metrics
        from rlgate.monitor.report import MonitorReport

        step = step if step is not None else checkpoint_step(checkpoint)
        name = checkpoint or decision.inputs[-1].source
        if "://" not in name:  # one spelling per folder: `check` passes the text as typed, `gate` a Path
            name = str(Path(name))
        if step is None:  # no step in the name: its place when gated before (under any contract), else the next one
            records = history.history(run)
            stored = stored_text(name)
            step = next((r.step for r in records if r.checkpoint == stored), len({r.checkpoint for r in records}))
        report = monitor.report if monitor is not None else None
        record_gated_checkpoint(history, run, step, name, decision,
                                extra_metrics=training_metrics(report if isinstance(report, MonitorReport) else None),
                                contract=resolved.name)
    return warnings


def _needs_history(resolved: ResolvedContract, record: bool) -> bool:
    """Recording, the monitor's cross-checkpoint rules and judge calibration drift all read or write it."""
    spec = resolved.contract.monitor
    if record or bool(spec and spec.training_run):
        return True
    from rlgate.judge.api import task_policies  # the judge's modules only when the answer depends on them

    return any(p.calibration is not None for p in task_policies(resolved).values())


def _apply_agent_rules(resolved: ResolvedContract, *runs: RunResult | None) -> None:
    """Agent trajectories are re-scored with the contract's tool-call budget and safety rules (the readers
    that produced them do not know the contract)."""
    from rlgate.results.agent_metrics import apply_agent_rules

    for run in runs:
        if run is not None:
            apply_agent_rules(run.tasks.values(), resolved.contract.protocol.agent, resolved.contract.safety)


def decide_and_report(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path, *,
                      seed: int = 0, checkpoint: str | None = None, step: int | None = None,
                      manifests: dict[str, RunManifest] | None = None, warnings: list[str] | None = None,
                      record: bool = True, judge_llm: object | None = None,
                      sources: Sequence[GateSource] | None = None, sequential: bool = False,
                      sequential_status: SequentialReplay | None = None) -> GateOutcome:
    """Gate `candidate` against `baseline` under the contract and write decision.json and every report.

    `sequential` also replays the contract's protocol.sequential order (its defaults when absent) and
    records at which look the decision was reached (Decision.sequential). `sequential_status`: a sequential
    `rlgate check` stopped there (the gates it settled take their anytime-valid verdicts).

    The project history is opened once here and handed to the gate sources (monitor, contamination,
    judge: `sources.default_sources`) and the recording.
    """
    from rlgate.store.open import open_contract_history

    history = open_contract_history(resolved) if _needs_history(resolved, record) else None
    try:
        chosen = list(sources) if sources is not None else default_sources(judge_llm)
        return _decide(resolved, baseline, candidate, out, history, chosen, seed=seed, checkpoint=checkpoint,
                       step=step, manifests=manifests, warnings=warnings, record=record, sequential=sequential,
                       sequential_status=sequential_status)
    finally:
        if history is not None:
            history.close()


def _decide(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path,
            history: HistoryStore | None, sources: list[GateSource], *, seed: int, checkpoint: str | None,
            step: int | None, manifests: dict[str, RunManifest] | None, warnings: list[str] | None,
            record: bool, sequential: bool = False,
            sequential_status: SequentialReplay | None = None) -> GateOutcome:
    """decide_and_report with the history already open (one store for every source and the recording)."""
    from rlgate.engine.versions import check_versions

    notes = list(warnings or [])
    _apply_agent_rules(resolved, baseline, candidate)
    if baseline is not None:
        try:
            versions = check_versions(baseline, candidate, allow=resolved.contract.allow_protocol_mismatch)
        except InputError as error:  # gate/check have no --allow-version-mismatch: point at the contract
            raise InputError(error.message, file=resolved.path, field="allow_protocol_mismatch",
                             fix="re-run the baseline on the candidate's suite version, or set "
                             "allow_protocol_mismatch: true in the contract (the difference is then recorded)"
                             ) from None
        notes += [f"benchmark version differs: {d}" for d in versions.differences]
    given = SourceInput(resolved, baseline, candidate, out, history)
    # the sources (monitor logs, contamination index, an LLM judge) run with the collector as it was; the
    # gate's own work over every sample below runs with it paused (rlgate._core.gcpause)
    contributions = {source.name: source.contribute(given) for source in sources if source.applies(resolved)}
    with collector_paused():
        return _decide_paused(resolved, baseline, candidate, out, history, contributions, seed=seed,
                              checkpoint=checkpoint, step=step, manifests=manifests, notes=notes, record=record,
                              sequential=sequential, sequential_status=sequential_status)


def _decide_paused(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path,
                   history: HistoryStore | None, contributions: dict[str, Contribution], *, seed: int,
                   checkpoint: str | None, step: int | None, manifests: dict[str, RunManifest] | None, notes: list[str],
                   record: bool, sequential: bool, sequential_status: SequentialReplay | None) -> GateOutcome:
    """The engine's decision, badcases, drops, history record and reports, from the sources' contributions."""
    from rlgate.badcases.checks import decision_with_badcases
    from rlgate.badcases.discipline import private_leaf_tasks
    from rlgate.engine.coverage import shortfalls
    from rlgate.engine.decision import decide
    from rlgate.report.io import write_reports
    from rlgate.results.drops import drops_manifest
    from rlgate.results.expected import cached_documents

    gates = resolved.gates
    for contribution in contributions.values():
        gates = contribution.gates or gates
        notes += contribution.warnings
    decision = decide(
        gates, baseline, candidate, seed=seed, contract_name=resolved.name,
        allow_protocol_mismatch=resolved.contract.allow_protocol_mismatch,
        contract_hash=resolved.content_hash(),
        extra_gates=[v for c in contributions.values() for v in c.verdicts],
        expected_documents=cached_documents([baseline, candidate]),
    )
    if sequential_status is not None:
        from rlgate.engine.sequential_check import with_sequential

        decision = with_sequential(decision, sequential_status, gates)
    elif sequential:
        decision = _with_replay(resolved, gates, baseline, candidate, decision, seed)
    decision = decision_with_badcases(decision, candidate, baseline, resolved)
    extensions: dict[str, Any] = {"contract_path": str(resolved.path)}
    dropped = drops_manifest(baseline, candidate, private_leaf_tasks(resolved, [candidate, baseline]))
    dropped.shortfalls = shortfalls(decision.gates)  # gates nodata for want of documents
    if dropped.trajectories or dropped.shortfalls:  # agent runs: every errored, limited, ... one, listed
        extensions["drops"] = dropped.model_dump(mode="json", exclude=None if dropped.shortfalls else {"shortfalls"})
    if history is not None:
        extensions["history"] = history.location  # a DSN's password is already redacted to ***
    for name, contribution in contributions.items():  # each report is a versioned pydantic model
        if contribution.report is not None:
            extensions[name] = contribution.report.model_dump(mode="json")
    if record and history is not None:
        notes += _record_history(history, resolved, decision, checkpoint, step, contributions.get("monitor"))
    decision = decision.model_copy(update={
        "extensions": {**decision.extensions, **extensions},
        "warnings": [*decision.warnings, *notes],
    })
    reports = write_reports(out, decision, contract=resolved, baseline=baseline, candidate=candidate,
                            manifests=manifests)
    return GateOutcome(decision, reports)


def _with_replay(resolved: ResolvedContract, gates: GateConfig, baseline: RunResult | None, candidate: RunResult,
                 decision: Decision, seed: int) -> Decision:
    """The decision with its sequential replay attached (`rlgate gate --sequential`)."""
    from rlgate.contract.models import Sequential
    from rlgate.engine.sequential import replay

    if baseline is None:
        raise InputError("--sequential replays paired documents and needs the baseline's results",
                         fix="give --baseline or baseline.results in the contract")
    plan = resolved.contract.protocol.sequential or Sequential()
    result = replay(gates, baseline, candidate, plan, decision, seed=seed, contract_name=resolved.name,
                    allow_protocol_mismatch=resolved.contract.allow_protocol_mismatch)
    return decision.model_copy(update={"sequential": result})
