"""`rlgate monitor`'s use case: read training logs (a contract's, or those given), judge them, write monitor.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rlgate.harness.vocabulary import load_contract
from rlgate.monitor.api import monitor_contract, run_monitor, write_report
from rlgate.monitor.duplicates import DuplicatePolicy
from rlgate.monitor.report import MonitorReport


def monitor(logs: Sequence[Path], out: Path, *, contract: Path | None = None, fmt: str = "auto",
            metrics: Mapping[str, str] | None = None,
            duplicates: DuplicatePolicy | None = None) -> tuple[MonitorReport, Path]:
    """The monitor report of `logs` (default: the contract's monitor.logs) and where monitor.json was written.

    With a contract its monitor section sets the policy, the history and the defaults of `fmt` and
    `duplicates`; without one a repeated step is refused unless `duplicates` says otherwise."""
    if contract is not None:
        report = monitor_contract(load_contract(contract), list(logs), None if fmt == "auto" else fmt,
                                  metrics=dict(metrics or {}), duplicates=duplicates)
    else:
        report = run_monitor(list(logs), fmt=fmt, metrics=dict(metrics or {}), duplicates=duplicates or "refuse")
    return report, write_report(report, out)
