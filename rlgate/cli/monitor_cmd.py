"""`rlgate monitor`: read training logs during or after a run, print failure signals, exit by severity."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from rlgate.cli.common import EXIT_BAD_INPUT, app, handles_input_errors, output_folder

if TYPE_CHECKING:
    from rlgate.monitor.duplicates import DuplicatePolicy

#: Read problems printed per log; monitor.json lists every one.
SHOWN_PROBLEMS = 10


@app.command()
@handles_input_errors
def monitor(
    logs: Annotated[list[Path] | None, typer.Argument(
        help="training logs: trainer_state.json, verl JSONL or console log, TensorBoard run folder, CSV/JSONL "
             "(default: the contract's monitor.logs)")] = None,
    contract: Annotated[Path | None, typer.Option(
        help="contract whose monitor section sets policy and history")] = None,
    out: Annotated[Path, typer.Option(help="folder for monitor.json")] = Path("rlgate-out"),
    format: Annotated[str, typer.Option(
        help="auto | trl | verl_jsonl | verl_console | tensorboard | openrlhf | wandb | wandb_csv | mlflow | csv "
             "| jsonl")] = "auto",
    map_: Annotated[list[str] | None, typer.Option(
        "--map", metavar="CANONICAL=KEY",
        help="read log key KEY as canonical metric CANONICAL (repeatable; over the contract's monitor.metrics), "
             "e.g. --map reward_mean=reward/g --map val_score/true=reward/f")] = None,
    duplicate_steps: Annotated[str | None, typer.Option(
        help="a step logged twice with different values: refuse (exit 2), last or first (default: the contract's "
             "monitor.duplicate_steps, else refuse)")] = None,
) -> None:
    """Check training logs for failure signals; exit 0 none or notes, 3 warning, 1 critical, 2 log unread or unchecked.

    Reads TRL, verl, TensorBoard, OpenRLHF, tinker-cookbook, W&B (offline run folders, exported CSV),
    MLflow file-store runs and generic CSV/JSONL logs.
    """
    from rlgate.monitor.api import monitor_contract, run_monitor, write_report
    from rlgate.monitor.mapping import parse_map_options
    from rlgate.monitor.report import MonitorReport

    output_folder(out)
    mapping = parse_map_options(map_ or [])
    duplicates = parse_duplicates(duplicate_steps)
    report: MonitorReport
    if contract is not None:
        from rlgate.harness.vocabulary import load_contract

        report = monitor_contract(load_contract(contract), logs or [], None if format == "auto" else format,
                                  metrics=mapping, duplicates=duplicates)
    else:
        report = run_monitor(logs or [], fmt=format, metrics=mapping, duplicates=duplicates or "refuse")
    written = write_report(report, out)
    typer.echo(render_text(report))
    typer.echo(f"wrote {written}")
    for log in report.logs:  # a few per log: a log of corrupt lines would print one error per line
        for problem in log.problems[:SHOWN_PROBLEMS]:
            fix = problem.fix if problem.fix and "duplicate_steps" in problem.fix else (
                "the rest of the log was read and checked; repair the log and run again for a complete check")
            typer.echo(f"error: {problem.text}\n  fix: {fix}", err=True)
        if len(log.problems) > SHOWN_PROBLEMS:
            typer.echo(f"error: {log.path}: and {len(log.problems) - SHOWN_PROBLEMS} more problems in this log\n"
                       f"  fix: every one is listed in {written}; if none of its lines reads, check --format",
                       err=True)
    for log in report.logs:
        for note in log.warnings:
            typer.echo(f"warning: {log.path}: {note}", err=True)
    for log in report.unchecked:
        typer.echo(f"error: {log.path}: nothing could be checked: no monitor rule (beyond the NaN/Inf check) "
                   f"found the finite metrics it needs in this {log.format} log ({log.steps} logged steps)\n"
                   "  fix: check --format, or map its keys with --map CANONICAL=KEY (monitor.metrics in a contract)",
                   err=True)
    code = report.exit_code()
    raise typer.Exit(EXIT_BAD_INPUT if code == EXIT_BAD_INPUT else code)


def parse_duplicates(value: str | None) -> DuplicatePolicy | None:
    """`--duplicate-steps` checked against the policies there are."""
    from rlgate._core.errors import InputError
    from rlgate.monitor.duplicates import POLICIES

    if value is None:
        return None
    if value not in POLICIES:
        raise InputError(f"--duplicate-steps '{value}' is not a policy", field="--duplicate-steps",
                         fix=f"use one of {', '.join(POLICIES)}")
    return cast("DuplicatePolicy", value)


def render_text(report: object) -> str:
    """The report as a few plain lines per log, then findings, most severe first."""
    from rlgate.monitor.report import MonitorReport

    assert isinstance(report, MonitorReport)
    lines: list[str] = []
    for log in report.logs:
        span = f"steps {log.first_step}-{log.last_step}" if log.first_step is not None else "no steps"
        lines.append(f"{log.path}: {log.format}, {log.steps} logged steps ({span})")
        lines.append("  metrics: " + (", ".join(f"{m.name}<-{m.source_key}" for m in log.metrics) or "none recognised"))
        if log.unknown_keys:
            shown = ", ".join(log.unknown_keys[:8]) + (f", ... ({len(log.unknown_keys)} in all)"
                                                      if len(log.unknown_keys) > 8 else "")
            lines.append(f"  other keys kept: {shown}")
        skipped = [r for r in log.rules if not r.evaluated]
        lines.append(f"  rules run: {sum(r.evaluated for r in log.rules)}, not run: {len(skipped)}")
        by_need: dict[str, list[str]] = {}
        for r in skipped:
            by_need.setdefault(f"needs {'; '.join(r.needs)}" if r.needs else str(r.reason), []).append(r.rule)
        for need, rules in by_need.items():
            lines.append(f"    not run: {', '.join(rules)}: {need}")
        if any(r.needs for r in skipped):
            lines.append("    (a log that has such a metric under another key: --map CANONICAL=KEY, or "
                         "monitor.metrics in the contract)")
    if not report.logs:
        reasons = sorted({r.reason or "" for r in report.rules_not_run})
        lines.append(f"no training logs: {len(report.rules_not_run)} log rules not run ({'; '.join(reasons)})")
    if report.history_rules:
        ran = [r.rule for r in report.history_rules if r.evaluated]
        idle = [f"{r.rule}: {r.reason}" for r in report.history_rules if not r.evaluated]
        lines.append(f"history of training run '{report.training_run}': {report.history_checkpoints or 0} gated "
                     f"checkpoint(s); rules run: {', '.join(ran) or 'none'}"
                     + (f"; not run: {'; '.join(idle)}" if idle else ""))
    findings = report.all_findings()
    if not findings:
        lines.append("no failure signals" if not report.unchecked else
                     f"no failure signals found, but {len(report.unchecked)} log(s) could not be checked at all")
    for f in findings:
        window = f" steps {f.step_start}-{f.step_end}" if f.step_start is not None else ""
        action = f" -> {f.action}" + (f" to {f.rollback_to}" if f.rollback_to else "") if f.action else ""
        lines.append(f"{f.severity.upper():8} {f.rule} [{f.domain}]{window}{action}: {f.message}")
    if report.diagnosis:
        lines.append(f"diagnosis: {report.diagnosis.summary}")
        lines.append("root-cause candidates (best first):")
        for c in report.diagnosis.candidates:
            also = f", explains {', '.join(c.explains)}" if c.explains else ""
            lines.append(f"  {c.domain:14} score {c.score:2}  {c.rule} ({c.severity}{also})")
    return "\n".join(lines)
