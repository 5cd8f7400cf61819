"""`rlgate history`: what the project history says about each training run.

Per run: every gated checkpoint (step, decision, primary metric with its interval, deciding gates), the
best checkpoint, the cross-checkpoint rules that fire on the run as stored, and private-split
consultations against their budget. Reads a HistoryStore; renders nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlgate._core.text import visible_line
from rlgate.contract.loader import ResolvedContract
from rlgate.monitor.findings import Finding
from rlgate.monitor.history_rules import HistoryTargets, evaluate_history, targets_from_contract
from rlgate.monitor.policy import MonitorPolicy
from rlgate.store.protocol import HistoryStore
from rlgate.store.records import CheckpointRecord, of_contract

OVERVIEW_SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckpointRow(_Model):
    step: int
    checkpoint: str
    decision: str | None
    contract: str
    primary_metric: str | None = None
    primary_value: float | None = None
    primary_interval: list[float] | None = Field(None, description="the gate's interval (of the change over "
                                                 "the baseline for a primary gate)")
    deciding_gates: list[str] = Field(default_factory=list)
    metrics: dict[str, float] = Field(default_factory=dict)
    intervals: dict[str, list[float]] = Field(default_factory=dict, description="per gated metric, as gated")
    recorded_at: float


class Consultation(_Model):
    task: str
    used: int
    budget: int | None = None
    over_budget: bool = False


class RunOverview(_Model):
    run: str
    contract: str | None = Field(None, description="without --contract, a run whose checkpoints were gated under "
                                 "several contracts is listed once per contract: this one (\"\": unlabelled records "
                                 "from before rlgate stored contracts)")
    checkpoints: list[CheckpointRow]
    best: str | None = Field(None, description="checkpoint with the best primary metric")
    rules_fired: list[Finding] = Field(default_factory=list)
    rules_note: str | None = None
    consultations: list[Consultation] = Field(default_factory=list)


class HistoryOverview(_Model):
    schema_version: int = OVERVIEW_SCHEMA_VERSION
    history: str = Field(description="where the history lives (password redacted)")
    contract: str | None = None
    runs: list[RunOverview]


def _primary(rec: CheckpointRecord, targets: HistoryTargets | None) -> tuple[str | None, list[float] | None]:
    gates: dict[str, Any] = rec.extra.get("gates") or {}
    name = targets.primary if targets is not None else next(
        (m for m, g in gates.items() if isinstance(g, dict) and g.get("kind") == "primary"), None)
    gate = gates.get(name) if name else None
    ci = gate.get("ci") if isinstance(gate, dict) else None
    return name, [float(c) for c in ci] if isinstance(ci, list) and len(ci) == 2 else None


def _row(rec: CheckpointRecord, targets: HistoryTargets | None) -> CheckpointRow:
    name, interval = _primary(rec, targets)
    gates: dict[str, Any] = rec.extra.get("gates") or {}
    intervals = {m: [float(c) for c in g["ci"]] for m, g in gates.items()
                 if isinstance(g, dict) and isinstance(g.get("ci"), list) and len(g["ci"]) == 2}
    return CheckpointRow(step=rec.step, checkpoint=rec.checkpoint, decision=rec.decision, contract=rec.contract,
                         primary_metric=name, primary_value=rec.metrics.get(name) if name else None,
                         primary_interval=interval, deciding_gates=list(rec.extra.get("deciding_gates") or []),
                         metrics=rec.metrics, intervals=intervals, recorded_at=rec.recorded_at)


def contract_records(store: HistoryStore, run: str, resolved: ResolvedContract | None = None,
                     contract: str | None = None) -> list[CheckpointRecord]:
    """The run's stored checkpoints; with a contract (or a contract name), only those it gated (and unlabelled ones
    from before labels)."""
    name = resolved.name if resolved is not None else contract
    records = store.history(run)
    return records if name is None else of_contract(records, name)


def _by_contract(records: list[CheckpointRecord]) -> list[tuple[str | None, list[CheckpointRecord]]]:
    """A run's records, one group per contract when several contracts gated it (one verdict per checkpoint and
    contract: a best or a rule across contracts would compare different gates)."""
    names = sorted({r.contract for r in records} - {""})  # unlabelled records (before schema 2) join a lone contract
    if len(names) <= 1:
        return [(None, records)]
    groups: list[tuple[str | None, list[CheckpointRecord]]] = [
        (name, [r for r in records if r.contract == name]) for name in ["", *names]]
    return [(name, group) for name, group in groups if group]


def build_overview(store: HistoryStore, resolved: ResolvedContract | None = None, training_run: str | None = None,
                   policy: MonitorPolicy | None = None) -> HistoryOverview:
    """The overview of every run (or one), restricted to the contract's checkpoints when one is given."""
    targets = targets_from_contract(resolved) if resolved is not None else None
    runs = [training_run] if training_run else store.runs()
    if not training_run:  # consultations are counted even where no checkpoint is recorded (no monitor.training_run)
        from rlgate.badcases.discipline import training_run_of

        counted = training_run_of(resolved) if resolved is not None else "default"
        runs += [counted] if counted not in runs else []
    out: list[RunOverview] = []
    for run in runs:
        records = contract_records(store, run, resolved)
        if not records and not store.consultations(run):
            continue
        for i, (contract, group) in enumerate(_by_contract(records) if resolved is None else [(None, records)]):
            overview = _run_overview(run, contract, group, targets)
            if targets is not None:
                if policy is None and resolved is not None:
                    from rlgate.monitor.api import contract_policy

                    policy = contract_policy(resolved)[0]  # the thresholds the contract gates with
                overview.rules_fired = evaluate_history(group, targets, policy or MonitorPolicy())
            else:
                overview.rules_note = "pass --contract to evaluate the cross-checkpoint rules with its gate directions"
            if i == 0:  # consultations are counted per training run, whichever contract consulted
                overview.consultations = _consultations(store, run, resolved)
            out.append(overview)
    return HistoryOverview(history=store.location, contract=resolved.name if resolved else None, runs=out)


def _run_overview(run: str, contract: str | None, records: list[CheckpointRecord],
                  targets: HistoryTargets | None) -> RunOverview:
    """A run's (or one contract's part of a run's) rows and best checkpoint."""
    rows = [_row(r, targets) for r in records]
    primary = targets.primary if targets is not None else next((r.primary_metric for r in rows
                                                                if r.primary_metric), None)
    higher = targets.primary_higher_is_better if targets is not None else True
    best = _best(records, primary, higher) if primary else None
    return RunOverview(run=run, contract=contract, checkpoints=rows, best=best.checkpoint if best else None)


def _best(records: list[CheckpointRecord], metric: str, higher_is_better: bool) -> CheckpointRecord | None:
    """The listed checkpoint with the best value of `metric`, the earliest on ties (as `HistoryStore.best`, but
    among the contract's own checkpoints only)."""
    scored = [r for r in records if metric in r.metrics and r.metrics[metric] == r.metrics[metric]]
    sign = 1.0 if higher_is_better else -1.0
    return max(scored, key=lambda r: (sign * r.metrics[metric], -r.step)) if scored else None


def _consultations(store: HistoryStore, run: str, resolved: ResolvedContract | None) -> list[Consultation]:
    used = store.consultations(run)
    budgets: dict[str, int | None] = {}
    if resolved is not None:
        for task in resolved.tasks:
            if task.release_gate_only:
                split = resolved.contract.splits.get(task.split)
                budgets[task.name] = split.consult_budget if split else None
    return [Consultation(task=t, used=used.get(t, 0), budget=budgets.get(t),
                         over_budget=budgets.get(t) is not None and used.get(t, 0) > (budgets.get(t) or 0))
            for t in sorted(set(used) | set(budgets))]


def render_text(overview: HistoryOverview) -> str:
    """Plain lines per run: a table of checkpoints, then best, rules, consultations."""
    named = f" (contract {visible_line(overview.contract)})" if overview.contract else ""
    lines = [f"history: {overview.history}{named}"]
    if not overview.runs:
        lines.append("no gated checkpoints yet: `rlgate check` records a checkpoint in the history only when the "
                     "contract names its run (monitor.training_run: NAME, e.g. the trainer's run id)")
    for run in overview.runs:
        label = visible_line(run.contract or "") or "(unlabelled, from before schema 2)"
        part = "" if run.contract is None else f", contract {label}"
        lines.append(f"\ntraining run {visible_line(run.run)}{part}: {len(run.checkpoints)} gated checkpoint(s)")
        for row in run.checkpoints:
            value = "n/a" if row.primary_value is None else f"{row.primary_value:.4f}"
            ci = f" [{row.primary_interval[0]:+.4f}, {row.primary_interval[1]:+.4f}]" if row.primary_interval else ""
            gates = visible_line(", ".join(row.deciding_gates))
            deciding = f"  deciding: {gates}" if row.deciding_gates else ""
            star = " *best*" if row.checkpoint == run.best else ""
            metric = visible_line(row.primary_metric or "primary")
            lines.append(f"  step {row.step:>7}  {row.decision or '-'!s:13} {metric} "
                         f"{value}{ci}  {visible_line(row.checkpoint)}{star}{deciding}")
        lines.append(f"  best: {visible_line(run.best or 'n/a')}")
        if run.rules_note:
            lines.append(f"  rules: {run.rules_note}")
        elif run.rules_fired:
            for f in run.rules_fired:
                action = f" -> {f.action}" + (f" to {f.rollback_to}" if f.rollback_to else "") if f.action else ""
                lines.append(f"  rule {f.severity.upper()} {f.rule}{visible_line(action)}: {visible_line(f.message)}")
        else:
            lines.append("  rules: none fired")
        for c in run.consultations:
            budget = f" of budget {c.budget}" if c.budget is not None else " (no budget set)"
            over = " OVER BUDGET" if c.over_budget else ""
            lines.append(f"  private split {visible_line(c.task)}: consulted {c.used}{budget}{over}")
    return "\n".join(lines)
