"""Several references for one candidate (pure, like the engine): gated (or only compared) against each, the worst gated
decision wins, and the suite-health check reads them all.

The main reference (the first gated one) is what the engine's decision and its gate table compare against,
exactly as a single `baseline:`; every other reference is a second engine decision on the same gates. Both
land in decision.json as typed, versioned sections (`extensions.references`, `extensions.suite_health`) that
the reports read back; a single-baseline contract without `suite_health:` adds neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedContract
from rlgate.contract.models import GateConfig
from rlgate.engine.health import SuiteHealthReport, suite_health
from rlgate.engine.models import Decision, DecisionName, GateVerdict
from rlgate.engine.scope import worst
from rlgate.results.models import RunResult

SCHEMA_VERSION: Literal[1] = 1
EXTENSION = "references"
HEALTH_EXTENSION = "suite_health"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReferenceGate(_Model):
    """One gate of the candidate against one reference."""

    name: str
    kind: str
    metric: str
    verdict: str
    effect: DecisionName
    baseline: float | None = None
    candidate: float | None = None
    delta: float | None = None
    p_value: float | None = None
    fraction: bool | None = None


class ReferenceComparison(_Model):
    """The candidate against one reference: its own engine decision, and whether that decision counts."""

    name: str
    role: Literal["gated", "reported"]
    main: bool = Field(description="the reference the decision's gate table compares against")
    source: str | None = Field(description="the reference's results (None: no results were given)")
    decision: DecisionName
    summary: str
    gates: list[ReferenceGate] = Field(default_factory=list)


class ReferencesReport(_Model):
    """Every reference of a multi-baseline contract, in the contract's order (extensions.references)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    decision: DecisionName = Field(description="the worst decision over the gated references")
    references: list[ReferenceComparison] = Field(default_factory=list)


def _gate(g: GateVerdict) -> ReferenceGate:
    return ReferenceGate(name=g.name, kind=g.kind, metric=g.metric, verdict=g.verdict, effect=g.effect,
                         baseline=g.baseline, candidate=g.candidate, delta=g.delta, p_value=g.p_value,
                         fraction=g.fraction)


def main_reference(resolved: ResolvedContract) -> str | None:
    """The name of the main reference (None for a single `baseline:`)."""
    main = resolved.contract.main_baseline
    return next((name for name, ref in resolved.contract.references.items() if ref is main), None)


def _compare(resolved: ResolvedContract, gates: GateConfig, name: str, run: RunResult | None, candidate: RunResult,
             seed: int, expected: Mapping[str, frozenset[str]] | None) -> Decision:
    from rlgate.engine.decision import decide

    try:
        return decide(gates, run, candidate, seed=seed, contract_name=resolved.name,
                      allow_protocol_mismatch=resolved.contract.allow_protocol_mismatch,
                      contract_hash=resolved.content_hash(), expected_documents=expected)
    except InputError as error:
        raise InputError(f"reference {name}: {error.message}", file=resolved.path, field=f"baseline.{name}",
                         fix=error.fix) from None


def with_references(resolved: ResolvedContract, decision: Decision, candidate: RunResult,
                    references: Mapping[str, RunResult | None], *, seed: int, gates: GateConfig | None = None,
                    expected_documents: Mapping[str, frozenset[str]] | None = None) -> Decision:
    """The main decision with every other reference compared; a gated one that decides worse wins (its summary
    says against which reference).

    `gates`: the settings the main decision was made with (the judge takes its own gates out of the contract's:
    the other sources' verdicts (monitor, contamination, judge) are about the candidate or the main reference
    and stay in the main decision only)."""
    main = main_reference(resolved)
    if main is None:
        return decision
    rows: list[ReferenceComparison] = []
    for name, spec in resolved.contract.references.items():
        run = references.get(name)
        found = decision if name == main else _compare(resolved, gates or resolved.gates, name, run, candidate,
                                                       seed, expected_documents)
        source = run.provenance.source if run is not None else None
        rows.append(ReferenceComparison(name=name, role=spec.role, main=name == main, source=source,
                                        decision=found.decision, summary=found.summary,
                                        gates=[_gate(g) for g in found.gates]))
    overall = worst([r.decision for r in rows if r.role == "gated"])
    report = ReferencesReport(decision=overall, references=rows)
    update: dict[str, object] = {"extensions": {**decision.extensions, EXTENSION: report.model_dump(mode="json")}}
    if overall != decision.decision:
        deciding = next(r for r in rows if r.role == "gated" and r.decision == overall)
        update["decision"] = overall
        why = deciding.summary.removeprefix(f"{overall}: ")
        update["summary"] = f"{overall} against reference {deciding.name}: {why} (against {main}: {decision.summary})"
    return decision.model_copy(update=update)


def with_suite_health(resolved: ResolvedContract, decision: Decision, candidate: RunResult,
                      references: Mapping[str, RunResult | None]) -> Decision:
    """The suite-health report attached (where the contract asks for it), its warnings beside the decision's."""
    spec = resolved.contract.health
    if spec is None:
        return decision
    report: SuiteHealthReport = suite_health(resolved.gates, spec, references, candidate)
    notes = [f"suite health: {f.message}" for f in report.findings if f.severity == "warning"]
    return decision.model_copy(update={
        "extensions": {**decision.extensions, HEALTH_EXTENSION: report.model_dump(mode="json")},
        "warnings": [*decision.warnings, *notes]})


def stored_health(decision: Decision) -> SuiteHealthReport | None:
    """The suite-health section of a decision, read back typed (reports)."""
    data = decision.extensions.get(HEALTH_EXTENSION)
    return SuiteHealthReport.model_validate(data) if data is not None else None


def stored_references(decision: Decision) -> ReferencesReport | None:
    """The references section of a decision, read back typed (reports)."""
    data = decision.extensions.get(EXTENSION)
    return ReferencesReport.model_validate(data) if data is not None else None
