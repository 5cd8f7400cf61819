"""The decision use case, from two runs to a written decision: the one place where every layer's gate input meets.

`rlgate gate` (stored results) and `rlgate check` (fresh runs) both end here, so they decide the
same way: training-monitor, contamination and judge verdicts join the contract's gates in the
pure engine; failure clusters, the monitor report and the judge report are attached; private-split
consultations and the gated checkpoint are recorded in the project history; every report format
is written, summary.md (the decision table CI step summaries show) included. Nothing here computes
statistics or renders anything itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from rlgate._core.errors import InputError
from rlgate._core.gcpause import collector_paused
from rlgate._core.heap import phase_done
from rlgate.app.record import record_history
from rlgate.app.sources import Contribution, GateSource, SourceInput, default_sources
from rlgate.contract.loader import ResolvedContract
from rlgate.engine.models import Decision, SequentialReplay
from rlgate.results.models import RunResult

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.11; only read by type checkers here

    from rlgate.contract.models import GateConfig
    from rlgate.report.model import ReportModel
    from rlgate.results.manifest import RunManifest
    from rlgate.store.protocol import HistoryStore

@dataclass
class GateOutcome:
    """The decision and the files written for it."""

    decision: Decision
    reports: dict[str, Path] = field(default_factory=dict)
    #: gate metric -> the baseline run's value for one-run gates, as the reports show it (for the terminal table)
    baselines: dict[str, float] = field(default_factory=dict)


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


@dataclass
class DecidedGate:
    """A decision and its report model, before anything is written: all the reports need of the runs.

    Deciding and writing are two steps so a caller can let go of the runs in between: at 10^6 documents a
    run's records are ~1 GB, and the reports are written from the model alone (`write_decided`)."""

    decision: Decision
    model: ReportModel


class DecideOptions(TypedDict, total=False):
    """`decide_runs`' keyword arguments (see there), which `decide_and_report` passes on."""

    seed: int
    checkpoint: str | None
    step: int | None
    manifests: dict[str, RunManifest] | None
    warnings: list[str] | None
    record: bool
    judge_llm: object | None
    sources: Sequence[GateSource] | None
    sequential: bool
    sequential_status: SequentialReplay | None
    references: Mapping[str, RunResult | None] | None


def decide_and_report(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path,
                      **options: Unpack[DecideOptions]) -> GateOutcome:
    """Gate `candidate` against `baseline` under the contract and write decision.json and every report
    (`decide_runs`, then `write_decided`; a caller that can drop its runs before the writing calls the two)."""
    return write_decided(decide_runs(resolved, baseline, candidate, out, **options), out)


def decide_runs(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path, *,
                seed: int = 0, checkpoint: str | None = None, step: int | None = None,
                manifests: dict[str, RunManifest] | None = None, warnings: list[str] | None = None,
                record: bool = True, judge_llm: object | None = None,
                sources: Sequence[GateSource] | None = None, sequential: bool = False,
                sequential_status: SequentialReplay | None = None,
                references: Mapping[str, RunResult | None] | None = None) -> DecidedGate:
    """Gate `candidate` against `baseline` under the contract: the decision and its report model, nothing
    written yet but the project history's record (`out` is where the sources may read and the reports go).

    `sequential` also replays the contract's protocol.sequential order (its defaults when absent) and
    records at which look the decision was reached (Decision.sequential). `sequential_status`: a sequential
    `rlgate check` stopped there (the gates it settled take their anytime-valid verdicts).

    The project history is opened once here and handed to the gate sources (monitor, contamination,
    judge: `sources.default_sources`) and the recording. `references`: the stored runs of a multi-baseline
    contract's other references (name -> run; the main one is `baseline`), each compared with the candidate.
    """
    from rlgate.store.open import open_contract_history

    history = open_contract_history(resolved) if _needs_history(resolved, record) else None
    try:
        chosen = list(sources) if sources is not None else default_sources(judge_llm)
        return _decide(resolved, baseline, candidate, out, history, chosen, seed=seed, checkpoint=checkpoint,
                       step=step, manifests=manifests, warnings=warnings, record=record, sequential=sequential,
                       sequential_status=sequential_status, references=references)
    finally:
        if history is not None:
            history.close()


def write_decided(decided: DecidedGate, out: Path) -> GateOutcome:
    """Write decision.json, every report format and summary.md (the decision table CI step summaries show)."""
    from rlgate._core.files import write_text_atomic
    from rlgate.engine.summary import decision_markdown
    from rlgate.report.io import write_model
    from rlgate.report.views import known_baselines

    phase_done()  # a gate's runs are freed by now (`app.gate`)
    reports = write_model(out, decided.model)
    baselines = known_baselines(decided.model)  # one-run gates' baselines, as the reports show them
    reports["summary"] = write_text_atomic(out / "summary.md", decision_markdown(decided.decision, baselines))
    return GateOutcome(decided.decision, reports, baselines)


def _decide(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path,
            history: HistoryStore | None, sources: list[GateSource], *, seed: int, checkpoint: str | None,
            step: int | None, manifests: dict[str, RunManifest] | None, warnings: list[str] | None,
            record: bool, sequential: bool = False, sequential_status: SequentialReplay | None = None,
            references: Mapping[str, RunResult | None] | None = None) -> DecidedGate:
    """decide_runs with the history already open (one store for every source and the recording)."""
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
                              sequential=sequential, sequential_status=sequential_status,
                              references=references or {})


def _decide_paused(resolved: ResolvedContract, baseline: RunResult | None, candidate: RunResult, out: Path,
                   history: HistoryStore | None, contributions: dict[str, Contribution], *, seed: int,
                   checkpoint: str | None, step: int | None, manifests: dict[str, RunManifest] | None, notes: list[str],
                   record: bool, sequential: bool, sequential_status: SequentialReplay | None,
                   references: Mapping[str, RunResult | None]) -> DecidedGate:
    """The engine's decision, badcases, drops, history record and report model, from the sources' contributions."""
    from rlgate.badcases.checks import decision_with_badcases
    from rlgate.engine.coverage import shortfalls
    from rlgate.engine.decision import decide
    from rlgate.engine.private import private_leaf_tasks
    from rlgate.engine.references import with_references, with_suite_health
    from rlgate.report.builder import build_report
    from rlgate.results.drops import drops_manifest
    from rlgate.results.expected import cached_documents

    gates = resolved.gates
    for contribution in contributions.values():
        gates = contribution.gates or gates
        notes += contribution.warnings
    phase_done()  # each phase's temporaries are freed by the next: their heap pages go back (`_core.heap`)
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
    every = _every_reference(resolved, baseline, references)
    decision = with_references(resolved, decision, candidate, every, seed=seed, gates=gates,
                               expected_documents=cached_documents([*every.values(), candidate]))
    decision = with_suite_health(resolved, decision, candidate, every)
    phase_done()
    decision = decision_with_badcases(decision, candidate, baseline, resolved)
    phase_done()
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
        notes += record_history(history, resolved, decision, checkpoint, step, contributions.get("monitor"))
    decision = decision.model_copy(update={
        "extensions": {**decision.extensions, **extensions},
        "warnings": [*decision.warnings, *notes],
    })
    model = build_report(decision, contract=resolved, baseline=baseline, candidate=candidate, manifests=manifests)
    phase_done()
    return DecidedGate(decision, model)


def other_references(resolved: ResolvedContract, harness: str | None = None) -> dict[str, RunResult]:
    """The stored runs of a multi-baseline contract's references besides the main one (read here, once)."""
    from rlgate.engine.references import main_reference
    from rlgate.harness import read_results

    main = main_reference(resolved)
    return {name: read_results(path, harness=harness) for name, path in resolved.reference_results.items()
            if name != main}


def _every_reference(resolved: ResolvedContract, baseline: RunResult | None,
                     others: Mapping[str, RunResult | None]) -> dict[str, RunResult | None]:
    """name -> run of every reference in the contract's order; a single baseline is named `baseline`."""
    from rlgate.engine.references import main_reference

    main = main_reference(resolved)
    if main is None:
        return {"baseline": baseline}
    return {name: baseline if name == main else others.get(name) for name in resolved.contract.references}


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
