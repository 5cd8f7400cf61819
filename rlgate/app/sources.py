"""Gate sources: the layers beside the contract's own gates that feed the engine (monitor, contamination, judge).

Each is one small object behind the `GateSource` protocol: whether the contract asks for it, and what
it contributes to one decision: extra verdicts for the engine, the gate settings the engine should
apply (the judge takes its own gates out of the contract's), and a typed report attached to the
decision under the source's name. `decide_and_report` runs them in order and knows nothing of their
insides, so a new source is one class and one registry entry (`GATE_SOURCES`), or a plugin's entry point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from rlgate.contract.loader import ResolvedContract
from rlgate.contract.metrics import JUDGE_WIN_RATE, MetricRef
from rlgate.contract.models import GateConfig
from rlgate.engine.models import GateVerdict
from rlgate.registry import Registry
from rlgate.results.models import RunResult

if TYPE_CHECKING:
    from rlgate.store.protocol import HistoryStore


@dataclass
class SourceInput:
    """What every source may read for one decision (the history is the decision's one open store)."""

    resolved: ResolvedContract
    baseline: RunResult | None
    candidate: RunResult
    out: Path
    history: HistoryStore | None = None


@dataclass
class Contribution:
    """A source's part of one decision."""

    verdicts: list[GateVerdict] = field(default_factory=list)
    report: BaseModel | None = None
    gates: GateConfig | None = None  # replaces the contract's gate settings for the engine, when set
    warnings: list[str] = field(default_factory=list)  # joined to the decision's warnings


class GateSource(Protocol):
    """One layer whose verdicts join the contract's gates in the engine."""

    name: str

    def applies(self, resolved: ResolvedContract) -> bool:
        """Whether the contract asks for this source (a source that does not apply contributes nothing)."""
        ...

    def contribute(self, given: SourceInput) -> Contribution:
        """Run the source; bad input raises InputError, as everywhere."""
        ...


class MonitorSource:
    """The training monitor: log rules and cross-checkpoint rules on the project history."""

    name = "monitor"

    def applies(self, resolved: ResolvedContract) -> bool:
        spec = resolved.contract.monitor
        return spec is not None and bool(spec.logs or spec.training_run)

    def contribute(self, given: SourceInput) -> Contribution:
        from rlgate.monitor.api import monitor_contract
        from rlgate.monitor.gate import monitor_gates

        # A log that cannot be read is the monitor gate's `error`, never the end of the decision: every other
        # gate and report is still written.
        report = monitor_contract(given.resolved, history=given.history, unreadable="report",
                                  checkpoint=checkpoint_identity(given.candidate))
        warnings = [] if report.logs else [
            f"training monitor: no training logs (monitor.logs is not set), so its {len(report.rules_not_run)} "
            f"log rules were not run; only the rules across gated checkpoints of training run "
            f"'{report.training_run}' were"]
        warnings += [f"training monitor: {log.path}: {note}" for log in report.logs for note in log.warnings]
        return Contribution(monitor_gates(report, given.resolved.gates.decision), report, warnings=warnings)


def checkpoint_identity(run: RunResult) -> str | None:
    """The gated model as its results name it (model, model arguments), for the monitor's metadata check."""
    prov = run.provenance
    args = prov.model_args
    text = args if isinstance(args, str) else ",".join(f"{k}={v}" for k, v in args.items()) if args else ""
    joined = ",".join(part for part in (prov.model or "", text) if part)
    return joined or None


class ContaminationSource:
    """Evaluation documents found in the training data, judged by the contract's contamination gate."""

    name = "contamination"

    def applies(self, resolved: ResolvedContract) -> bool:
        spec = resolved.contract.contamination
        return spec is not None and bool(spec.train_files)

    def contribute(self, given: SourceInput) -> Contribution:
        from rlgate.contamination.api import contract_contamination
        from rlgate.contamination.index import contamination_gates

        report = contract_contamination(given.resolved, results=given.candidate)
        return Contribution(contamination_gates(report), report)


class JudgeSource:
    """The judge policy: LLM or rule judgements; its gates leave the contract's and are decided here."""

    name = "judge"

    def __init__(self, llm: object | None = None) -> None:
        """`llm`: a deepeval model that replaces the contract's judge model (tests, notebooks)."""
        self.llm = llm

    def applies(self, resolved: ResolvedContract) -> bool:
        """A judge policy (contract default or a task's) or a gate on `judge_win_rate`: without either,
        `judge_for_decision` changes nothing, so the judge's modules are not even imported."""
        if resolved.contract.judge is not None or any(task.entry.judge is not None for task in resolved.tasks):
            return True
        return any(MetricRef.parse(gate.metric).metric == JUDGE_WIN_RATE for gate in resolved.gates.all_gates())

    def contribute(self, given: SourceInput) -> Contribution:
        from rlgate.judge.api import judge_for_decision

        judged = judge_for_decision(given.resolved, given.candidate, given.baseline, given.out,
                                    history=given.history, llm=self.llm)
        trust = [f"{task}: {t.trust.message}" for task, t in (judged.report.tasks.items() if judged.report else ())
                 if t.trust is not None and not t.trust.trusted]
        return Contribution(judged.extra_gates, judged.report, gates=judged.gates, warnings=trust)


#: every gate source, in the order their reports appear; a third-party package adds one through the
#: `rlgate.plugins` entry point `gate_source.<name>` = a GateSource class (built with no arguments)
GATE_SOURCES: Registry[GateSource] = Registry("gate_source", {
    "monitor": "rlgate.app.sources:MonitorSource",
    "contamination": "rlgate.app.sources:ContaminationSource",
    "judge": "rlgate.app.sources:JudgeSource",
})


def default_sources(judge_llm: object | None = None) -> list[GateSource]:
    """The sources every gate and check decision consults: the registry's, in its order (plugins last);
    `judge_llm` replaces the contract's judge model."""
    sources = [GATE_SOURCES.get(name) for name in GATE_SOURCES.names()]
    if judge_llm is not None:
        sources = [JudgeSource(judge_llm) if isinstance(source, JudgeSource) else source for source in sources]
    return sources
