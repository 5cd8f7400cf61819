"""The monitor's report model: what `monitor.json` stores and `Decision.extensions["monitor"]` embeds.

Shape (schema_version 1): `logs[]` (path, format, steps, canonical metrics with the key each came
from, unknown keys, read problems, which rules ran and why others did not), `findings[]` (most severe
first), `diagnosis` (the root cause: candidate fault domains ranked, with evidence), `severity`, `plots[]` (inline SVG
strings with finding markers), the policy used and, when a history was consulted, `history_findings`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rlgate.monitor.diagnosis import Candidate, rank_causes
from rlgate.monitor.findings import FaultDomain, Finding, Severity, worst_severity
from rlgate.monitor.rules import RuleStatus, sort_findings
from rlgate.monitor.series import ReadProblem, Series, TrainingLog

MONITOR_REPORT_VERSION = 1
#: Exit codes of `rlgate monitor`, by the worst finding.
SEVERITY_EXIT = {"critical": 1, "warning": 3, "info": 0, None: 0}
#: Rules that run whatever metrics a log holds: their running says nothing about what could be checked.
DATA_FREE_RULES = frozenset({"non_finite"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Problem(_Model):
    file: str
    message: str
    line: int | None = None
    column: int | None = None
    record: int | None = None
    text: str = Field(description="the problem as one line, file:line:column first")
    fix: str | None = None

    @classmethod
    def of(cls, p: ReadProblem) -> Problem:
        return cls(file=p.file, message=p.message, line=p.line, column=p.column, record=p.record, text=p.describe(),
                   fix=p.fix)


class SeriesInfo(_Model):
    name: str
    source_key: str
    points: int
    first_step: int
    last_step: int
    first: float | None
    last: float | None
    min: float | None
    max: float | None
    non_finite: int = 0


class LogSummary(_Model):
    path: str
    format: str
    steps: int
    first_step: int | None
    last_step: int | None
    metrics: list[SeriesInfo]
    unknown_keys: list[str] = Field(default_factory=list, description="keys outside the vocabulary, kept as read")
    ignored_keys: list[str] = Field(default_factory=list, description="keys whose values are not numbers")
    problems: list[Problem] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list,
                                description="what was read but needs a look: repeated steps (with counts), "
                                "metadata naming another model, keys that look like canonical metrics")
    rules: list[RuleStatus] = Field(default_factory=list)

    @property
    def checked(self) -> bool:
        """Whether any rule judged a metric of this log. `non_finite` runs on every log, even one with no
        recognised metric or no steps at all, so it alone does not make a log checked."""
        return any(r.evaluated and r.rule not in DATA_FREE_RULES for r in self.rules)


class Plot(_Model):
    log: str
    metric: str
    title: str
    svg: str


class Diagnosis(_Model):
    """The root cause: the best-ranked candidate's domain and leading rule, and every candidate ranked."""

    domain: FaultDomain
    rule: str
    severity: Severity
    summary: str
    evidence: list[str] = Field(default_factory=list,
                                description="the winner's findings and the symptoms it explains")
    candidates: list[Candidate] = Field(default_factory=list, description="every candidate cause, best first")


class MonitorReport(_Model):
    schema_version: Literal[1] = 1
    policy: str = Field(description="name or path of the threshold policy used")
    logs: list[LogSummary]
    findings: list[Finding]
    history_findings: list[Finding] = Field(default_factory=list)
    training_run: str | None = None
    history_checkpoints: int | None = Field(
        None, description="gated checkpoints of the training run the cross-checkpoint rules looked at")
    history_rules: list[RuleStatus] = Field(
        default_factory=list,
        description="the cross-checkpoint rules (on gated results), whether each ran and why not")
    rules_not_run: list[RuleStatus] = Field(
        default_factory=list,
        description="log-based rules not run on any log, with the reason (e.g. no logs given)")
    unchecked_logs: list[str] = Field(
        default_factory=list, description="logs no rule could judge (no recognised metric with a finite "
        "value, no steps, a wrong format): 'could not check', never 'healthy'; the monitor gate is nodata")
    severity: Severity | None = Field(None, description="the worst finding's severity; None when nothing was found")
    diagnosis: Diagnosis | None = None
    plots: list[Plot] = Field(default_factory=list)

    @property
    def problems(self) -> list[Problem]:
        return [p for log in self.logs for p in log.problems]

    @property
    def unchecked(self) -> list[LogSummary]:
        """Logs no rule could judge (no recognised metric, no steps, a wrong --format): "could not check",
        never "healthy"."""
        return [log for log in self.logs if not log.checked]

    def all_findings(self) -> list[Finding]:
        return sort_findings([*self.findings, *self.history_findings])

    def exit_code(self) -> int:
        """1 critical, 3 warning, 0 info or nothing; 2 when a log could not be read completely or checked at all."""
        if self.problems or self.unchecked:
            return 2
        return SEVERITY_EXIT[self.severity]


def _float(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def series_info(s: Series) -> SeriesInfo:
    finite = s.values[np.isfinite(s.values)]
    return SeriesInfo(name=s.name, source_key=s.source_key, points=len(s), first_step=s.first_step,
                      last_step=s.last_step, first=_float(s.values[0]), last=_float(s.values[-1]),
                      min=float(finite.min()) if finite.size else None,
                      max=float(finite.max()) if finite.size else None,
                      non_finite=int(s.values.size - finite.size))


def log_summary(log: TrainingLog, rules: list[RuleStatus]) -> LogSummary:
    span = log.step_range()
    return LogSummary(path=log.path, format=log.format, steps=log.n_steps(), first_step=span[0] if span else None,
                      last_step=span[1] if span else None,
                      metrics=[series_info(s) for _, s in sorted(log.metrics.items())],
                      unknown_keys=log.unknown_keys, ignored_keys=log.ignored_keys,
                      problems=[Problem.of(p) for p in log.problems], warnings=list(log.warnings), rules=rules)


def diagnose(findings: list[Finding]) -> Diagnosis | None:
    """The root cause among the findings (see `rlgate.monitor.diagnosis`); None when only notes were found."""
    ranked = rank_causes(findings)
    if not ranked:
        return None
    top = ranked[0]
    lead = next(f for f in sort_findings(findings) if f.rule == top.rule and f.domain == top.domain)
    explains = f"; explains {', '.join(top.explains)}" if top.explains else ""
    others = "; other candidates: " + ", ".join(f"{c.domain} ({c.rule}, score {c.score})" for c in ranked[1:]) \
        if len(ranked) > 1 else ""
    return Diagnosis(domain=top.domain, rule=top.rule, severity=top.severity,
                     summary=f"{top.domain} fault ({top.rule}): {lead.message}{explains}{others}",
                     evidence=top.evidence, candidates=ranked)


def build_report(policy_name: str, logs: list[tuple[TrainingLog, list[Finding], list[RuleStatus]]],
                 history_findings: list[Finding] | None = None, training_run: str | None = None,
                 plots: list[Plot] | None = None) -> MonitorReport:
    findings = sort_findings([f for _, found, _ in logs for f in found])
    history = sort_findings(list(history_findings or []))
    every = [*findings, *history]
    summaries = [log_summary(log, st) for log, _, st in logs]
    return MonitorReport(policy=policy_name, logs=summaries, findings=findings,
                         unchecked_logs=[s.path for s in summaries if not s.checked], history_findings=history,
                         training_run=training_run, severity=worst_severity(every),
                         diagnosis=diagnose(every), plots=list(plots or []))
