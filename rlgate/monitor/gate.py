"""Monitor findings as gate verdicts of kind `monitor`, and the monitor section of a Decision.

Each critical or warning finding becomes a failing gate whose outcome key (`monitor_critical`,
`monitor_warning`) the contract's decision policy maps to a decision (defaults: block and
research_only); info notes become passing `monitor_info` gates. A log that could not be read
completely is an `error` gate, and one no rule could judge a `nodata` gate (fail closed). The engine
aggregates these with its own gates via
`rlgate.engine.decide(..., extra_gates=monitor_gates(report, policy))`.
"""

from __future__ import annotations

from typing import Any

from rlgate.contract.models import DecisionPolicy
from rlgate.engine.models import Decision, GateVerdict
from rlgate.monitor.findings import Finding
from rlgate.monitor.report import LogSummary, MonitorReport

OUTCOME = {"critical": "monitor_critical", "warning": "monitor_warning", "info": "monitor_info"}


def _numbers(values: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in values.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def finding_gate(finding: Finding, policy: DecisionPolicy) -> GateVerdict:
    outcome = OUTCOME[finding.severity]
    return GateVerdict(
        name=f"monitor:{finding.rule}", kind="monitor", metric=finding.rule,
        verdict="pass" if finding.severity == "info" else "fail", outcome=outcome,
        effect=getattr(policy, outcome), threshold=_numbers(finding.threshold),
        reason=f"[{finding.domain}] {finding.message}",
        details={"domain": finding.domain, "severity": finding.severity, "step_start": finding.step_start,
                 "step_end": finding.step_end, "values": finding.values, "source": finding.source,
                 "metrics": finding.metrics, "action": finding.action, "rollback_to": finding.rollback_to})


def unchecked_gate(log: LogSummary, policy: DecisionPolicy) -> GateVerdict:
    """A log no rule could judge is `nodata` (fail closed): the honest answer is "could not check"."""
    found = ", ".join(m.source_key for m in log.metrics) or "none"
    needs = sorted({n for r in log.rules if not r.evaluated for n in r.needs})
    return GateVerdict(
        name="monitor:nodata", kind="monitor", metric="training_log", verdict="nodata", outcome="nodata",
        effect=policy.nodata,
        reason=f"training log {log.path} ({log.format}, {log.steps} logged steps) could not be checked: no monitor "
        f"rule (beyond the NaN/Inf check) had the finite metrics it needs (recognised: {found}); check --format / "
        "monitor.format, or map its keys with monitor.metrics",
        details={"file": log.path, "format": log.format, "steps": log.steps, "unknown_keys": log.unknown_keys[:40],
                 "needs": needs, "not_run": {r.rule: r.reason for r in log.rules if not r.evaluated}})


def monitor_gates(report: MonitorReport, policy: DecisionPolicy | None = None) -> list[GateVerdict]:
    """Gate verdicts for a monitor report; one passing `monitor` gate when nothing failed."""
    policy = policy or DecisionPolicy()
    gates = [GateVerdict(name="monitor:read", kind="monitor", metric="training_log", verdict="error",
                         outcome="error", effect=policy.error,
                         reason=f"training log could not be read completely: {p.text}"
                         + (f" (fix: {p.fix})" if p.fix else ""),
                         details={"file": p.file, "line": p.line, "column": p.column, "record": p.record})
             for p in report.problems]
    gates += [unchecked_gate(log, policy) for log in report.unchecked]
    gates += [finding_gate(f, policy) for f in report.all_findings()]
    if not any(g.verdict != "pass" for g in gates):
        evaluated = sum(1 for log in report.logs for r in log.rules if r.evaluated)
        notes = sum(1 for g in gates if g.outcome == "monitor_info")
        details: dict[str, Any] = {"logs": [log.path for log in report.logs]}
        scope = f"{len(report.logs)} log(s), {evaluated} rule check(s)"
        if not report.logs:
            not_run = [r for r in report.rules_not_run if not r.evaluated]
            ran = [r.rule for r in report.history_rules if r.evaluated]
            details["not_run"] = {r.rule: r.reason for r in [*not_run, *(h for h in report.history_rules
                                                                          if not h.evaluated)]}
            scope = (f"no training logs, so {len(not_run)} log rule(s) not run; "
                     f"{len(ran)} cross-checkpoint rule(s) run on {report.history_checkpoints or 0} earlier "
                     f"gated checkpoint(s) of training run '{report.training_run}'")
        gates.insert(0, GateVerdict(
            name="monitor", kind="monitor", metric="training_log" if report.logs else "checkpoint_history",
            verdict="pass", outcome="monitor_info", effect=policy.monitor_info,
            reason=f"{scope}: no failure signal" + (f" ({notes} note(s))" if notes else ""), details=details))
    return gates


def attach_monitor(decision: Decision, report: MonitorReport) -> Decision:
    """A copy of `decision` with `extensions["monitor"]` = the report as JSON (MonitorReport, schema_version 1)."""
    return decision.model_copy(update={"extensions": {**decision.extensions,
                                                      "monitor": report.model_dump(mode="json")}})
