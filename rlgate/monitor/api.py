"""The monitor's entry points: read logs, apply the policy, consult the history, build the report.

This is the only monitor module that touches files (logs, policy) or the history store (handed in by the
caller, opened once per decision); rules, gate mapping and plots are pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rlgate._core.errors import InputError
from rlgate.contract.models import MonitorSpec
from rlgate.engine.models import Decision
from rlgate.monitor.duplicates import DuplicatePolicy
from rlgate.monitor.duplicates import resolve as resolve_duplicates
from rlgate.monitor.findings import Finding
from rlgate.monitor.history_rules import HistoryTargets, evaluate_history_with_status
from rlgate.monitor.mapping import apply_mapping, check_mapping
from rlgate.monitor.notes import unreadable_log, with_notes
from rlgate.monitor.plots import plots_for
from rlgate.monitor.policy import MonitorPolicy, apply_overrides, load_policy_file
from rlgate.monitor.readers import read_log
from rlgate.monitor.report import MonitorReport, build_report
from rlgate.monitor.rules import RULES, RuleStatus, evaluate
from rlgate.store.protocol import HistoryStore


def resolve_policy(spec: MonitorSpec | None = None, base: Path | None = None,
                   origin: str | Path | None = None) -> tuple[MonitorPolicy, str]:
    """The policy for a contract's monitor section: its file (relative to `base`) plus overrides."""
    policy, name = MonitorPolicy(), "monitor_default (built in; gates/monitor_default.yaml)"
    if spec is not None and spec.policy:
        path = Path(spec.policy)
        if not path.is_absolute() and base is not None:
            path = base / path
        policy, name = load_policy_file(path), str(path)
    if spec is not None and spec.overrides:
        policy = apply_overrides(policy, spec.overrides, origin=origin)
        name += " + contract overrides"
    return policy, name


NO_LOGS = "no training logs given (monitor.logs is not set)"


def contract_policy(resolved: object) -> tuple[MonitorPolicy, str]:
    """The monitor policy a contract sets (its `monitor.policy` file plus `monitor.overrides`), and its name;
    the same for gating and for `rlgate history`, so both evaluate the cross-checkpoint rules alike."""
    from rlgate.contract.loader import ResolvedContract

    assert isinstance(resolved, ResolvedContract)
    spec = resolved.contract.monitor or MonitorSpec()
    if spec.policy:  # found as the contract's other references are (its folder, then the folders above)
        found = resolved.resolve_path(spec.policy)
        if not found.exists():
            from rlgate.contract.yamlpos import load_yaml

            raise load_yaml(resolved.path).error(
                ("monitor", "policy"), f"monitor policy '{spec.policy}' does not exist (looked for {found} and in "
                "the folders above)", "fix the path (relative to the contract or the project root), or remove "
                "monitor.policy to use the built-in thresholds (gates/monitor_default.yaml)")
        spec = spec.model_copy(update={"policy": str(found)})
    try:
        return resolve_policy(spec, resolved.path.parent, resolved.path)
    except InputError as error:
        raise _located(error, resolved.path) from None


def run_monitor(paths: Sequence[str | Path], *, fmt: str = "auto", policy: MonitorPolicy | None = None,
                policy_name: str = "monitor_default", history_findings: Sequence[Finding] = (),
                training_run: str | None = None, plots: bool = True, metrics: Mapping[str, str] | None = None,
                metrics_field: str = "--map", history: HistoryCheck | None = None,
                duplicates: DuplicatePolicy = "refuse", unreadable: Literal["raise", "report"] = "raise",
                checkpoint: str | None = None) -> MonitorReport:
    """Read every log, map keys (`metrics`: canonical -> log key), run every rule, and build the report.

    Damaged logs are kept partially and listed; a mapped key a log lacks is an error naming that log.
    Repeated steps are resolved by `duplicates` (`rlgate.monitor.duplicates`). `unreadable="report"`
    (`rlgate gate`) keeps a log that cannot be read at all as a log with that one problem, so the monitor
    gate is `error` and every other output of the decision is still written. `checkpoint`: the model being
    gated; a log whose run metadata names another model is warned.
    Without logs, a training run's history (`history`) is still checked: the cross-checkpoint rules
    work on gated results, and every log rule is listed as not run, with the reason.
    """
    if not paths and history is None:
        raise InputError("no training logs given", field="LOGS",
                         fix="pass log files, or set monitor.logs (or monitor.training_run) in the contract")
    policy = policy or MonitorPolicy()
    mapping = dict(metrics or {})
    check_mapping(mapping, field_prefix=metrics_field)
    if history is not None:
        history_findings = [*history_findings, *history.findings]
    evaluated = []
    drawn = []
    for path in paths:
        try:
            log = apply_mapping(resolve_duplicates(read_log(path, fmt), duplicates), mapping, source=metrics_field)
        except InputError as error:
            if unreadable == "raise":
                raise
            log = unreadable_log(path, fmt, error)
        log = with_notes(log, checkpoint)
        findings, statuses = evaluate(log, policy)
        evaluated.append((log, findings, statuses))
        if plots:
            drawn.extend(plots_for(log, findings))
    report = build_report(policy_name, evaluated, list(history_findings), training_run, drawn)
    updates: dict[str, object] = {}
    if history is not None:
        updates.update(history_rules=history.statuses, history_checkpoints=history.checkpoints)
    if not paths:
        updates["rules_not_run"] = [RuleStatus(rule=rule.name, domain=rule.domain, evaluated=False,
                                               reason=NO_LOGS if policy.rule(rule.name).enabled
                                               else "disabled by the policy") for rule in RULES]
    return report.model_copy(update=updates) if updates else report


@dataclass(frozen=True)
class HistoryCheck:
    """The cross-checkpoint rules run on one training run's gated checkpoints."""

    findings: list[Finding]
    statuses: list[RuleStatus]
    checkpoints: int


def history_findings(history: HistoryStore, run: str, targets: HistoryTargets, policy: MonitorPolicy,
                     contract: str | None = None) -> list[Finding]:
    """Cross-checkpoint findings for one training run (a new, empty store has none)."""
    return check_history(history, run, targets, policy, contract).findings


def check_history(history: HistoryStore, run: str, targets: HistoryTargets, policy: MonitorPolicy,
                  contract: str | None = None) -> HistoryCheck:
    """Cross-checkpoint findings and rule statuses for one training run (a new, empty store has none), on the
    checkpoints `contract` gated when given (another contract's records of a checkpoint would count it twice)."""
    from rlgate.store.records import of_contract

    records = history.history(run)
    records = records if contract is None else of_contract(records, contract)
    findings, statuses = evaluate_history_with_status(records, targets, policy)
    return HistoryCheck(findings, statuses, len(records))


def monitor_contract(resolved: object, logs: Sequence[str | Path] = (), fmt: str | None = None,
                     history: HistoryStore | None = None, metrics: Mapping[str, str] | None = None,
                     duplicates: DuplicatePolicy | None = None, unreadable: Literal["raise", "report"] = "raise",
                     checkpoint: str | None = None) -> MonitorReport:
    """The monitor report for a `ResolvedContract`: its `monitor.logs` (or `logs`), key mapping
    (`monitor.metrics`, with `metrics` from the command line laid over it), repeated-step policy
    (`monitor.duplicate_steps`, or `duplicates`), policy and history.

    `history` is the decision's open store; without one (`rlgate monitor --contract`) the contract's
    history is opened for this report when the contract names a training run.
    """
    from rlgate.contract.loader import ResolvedContract
    from rlgate.monitor.history_rules import targets_from_contract

    assert isinstance(resolved, ResolvedContract)
    spec = resolved.contract.monitor or MonitorSpec()
    policy, name = contract_policy(resolved)
    paths = list(logs) or [resolved.resolve_path(p) for p in spec.logs]
    checked: HistoryCheck | None = None
    if spec.training_run:
        targets = targets_from_contract(resolved)
        if history is not None:
            checked = check_history(history, spec.training_run, targets, policy, resolved.name)
        else:
            from rlgate.store.open import open_contract_history

            store = open_contract_history(resolved)
            try:
                checked = check_history(store, spec.training_run, targets, policy, resolved.name)
            finally:
                store.close()
    mapping = {**spec.metrics, **(metrics or {})}
    try:
        check_mapping(spec.metrics, origin=resolved.path)
    except InputError as error:
        raise _located(error, resolved.path) from None
    if not paths and checked is None:
        raise InputError("no training logs given", file=resolved.path, field="monitor.logs",
                         fix="pass log files, or set monitor.logs (or monitor.training_run, for the rules across "
                         "gated checkpoints) in the contract")
    return run_monitor(paths, fmt=fmt or spec.format, policy=policy, policy_name=name,
                       training_run=spec.training_run, metrics=mapping,
                       metrics_field="--map" if metrics else "monitor.metrics", history=checked,
                       duplicates=duplicates or spec.duplicate_steps, unreadable=unreadable, checkpoint=checkpoint)


def _located(error: InputError, contract: Path) -> InputError:
    """An override error with the line and column of the offending key in the contract file."""
    if error.field is None or not error.field.startswith(("monitor.overrides", "monitor.metrics")) \
            or error.line is not None:
        return error
    from rlgate.contract.yamlpos import load_yaml

    pos = load_yaml(contract).pos_of(tuple(error.field.split(".")), key=True)
    return InputError(error.message, file=contract, line=pos.line, column=pos.column, field=error.field,
                      fix=error.fix)


def metrics_from_decision(decision: Decision) -> dict[str, float]:
    """The candidate's value of every gate metric, as the history stores them."""
    return {g.metric: float(g.candidate) for g in decision.gates if g.kind != "monitor" and g.candidate is not None}


def record_gated_checkpoint(history: HistoryStore, run: str, step: int, checkpoint: str, decision: Decision,
                            extra_metrics: dict[str, float] | None = None, contract: str | None = None) -> None:
    """Store a gated checkpoint (its gate metrics, training reward and costs) in the project history."""
    metrics = {**metrics_from_decision(decision), **(extra_metrics or {})}
    history.record(run, step, checkpoint, metrics, decision.decision, extra=checkpoint_extra(decision),
                   contract=contract or decision.contract)


def training_metrics(report: MonitorReport | None) -> dict[str, float]:
    """The training reward at the gated checkpoint, from its logs (the last logged mean reward), for the history.

    The cross-checkpoint rollback rule compares it between checkpoints; without logs there is none.
    """
    from rlgate.monitor.history_rules import REWARD_KEY

    for log in reversed(report.logs if report is not None else []):
        for series in log.metrics:
            if series.name == "reward_mean" and series.last is not None:
                return {REWARD_KEY: series.last}
    return {}


def checkpoint_extra(decision: Decision) -> dict[str, object]:
    """What `rlgate history` shows beside the metrics: the summary, the deciding gates, their intervals,
    and the cross-checkpoint findings that fired."""
    gates = {g.metric: {"kind": g.kind, "verdict": g.verdict, "ci": list(g.ci),
                        "on": "value" if g.kind == "hard" or g.delta is None else "delta",
                        "baseline": g.baseline, "ci_level": g.ci_level}
             for g in decision.gates if g.kind != "monitor" and g.ci is not None}
    return {"summary": decision.summary, "deciding_gates": list(decision.deciding_gates), "gates": gates}


def write_report(report: MonitorReport, out: Path) -> Path:
    """Write `OUT/monitor.json` atomically (temporary file, then rename) and return its path."""
    from rlgate._core.files import write_text_atomic

    return write_text_atomic(out / "monitor.json", report.model_dump_json(indent=2) + "\n")
