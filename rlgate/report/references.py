"""The candidate against each reference (multi-baseline contracts) and the suite-health findings, as rows the
HTML and Markdown reports draw; read back typed from the decision's sections (rlgate.engine.references)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlgate.engine.references import stored_health, stored_references
from rlgate.report import fmt
from rlgate.report.model import ReportModel


@dataclass(frozen=True)
class ReferenceHeader:
    name: str
    role: str
    main: bool
    decision: str
    source: str


@dataclass(frozen=True)
class ReferenceRow:
    """One gate: the candidate's value, then per reference `value (Δ, verdict)`."""

    gate: str
    metric: str
    candidate: str
    cells: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReferenceTable:
    decision: str
    headers: list[ReferenceHeader]
    rows: list[ReferenceRow]


def reference_table(model: ReportModel) -> ReferenceTable | None:
    """The candidate against every reference, gate by gate; None for a single-baseline contract."""
    report = stored_references(model.decision)
    if report is None:
        return None
    headers = [ReferenceHeader(r.name, r.role, r.main, r.decision, r.source or "no results")
               for r in report.references]
    names = list(dict.fromkeys(g.name for r in report.references for g in r.gates))
    rows: list[ReferenceRow] = []
    for name in names:
        found = [next((g for g in r.gates if g.name == name), None) for r in report.references]
        first = next(g for g in found if g is not None)
        bounded = bool(first.fraction)
        cells = ["–" if g is None else
                 f"{fmt.value(g.baseline, bounded)} (Δ {fmt.delta(g.delta, bounded)}, {g.verdict})" for g in found]
        rows.append(ReferenceRow(name, first.metric, fmt.value(first.candidate, bounded), cells))
    return ReferenceTable(report.decision, headers, rows)


def health_lines(model: ReportModel) -> list[str]:
    """Every suite-health finding (warnings first), one line each; empty when the check did not run."""
    report = stored_health(model.decision)
    if report is None:
        return []
    ordered = sorted(report.findings, key=lambda f: f.severity != "warning")
    return [f"{'⚠ ' if f.severity == 'warning' else ''}{f.message}" for f in ordered]
