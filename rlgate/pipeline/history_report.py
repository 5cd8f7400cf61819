"""`rlgate history --html`: the history's trend report, where the monitor's view of the runs meets the report.

The monitor's overview decides which checkpoints belong to the contract, which is best and which
cross-checkpoint rules fire; the report layer turns the stored records and those findings into its
trend model and renders it. Nothing here reads anything but the store.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from rlgate.store.protocol import HistoryStore

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract
    from rlgate.report.trend import TrendReport


def history_trend(store: HistoryStore, resolved: ResolvedContract | None = None,
                  training_run: str | None = None) -> TrendReport:
    """The trend model of every run in the store (or one), restricted to the contract's checkpoints if given."""
    import rlgate
    from rlgate.monitor.overview import build_overview, contract_records
    from rlgate.report.trend import TrendConsultation, TrendMarker, TrendReport, trend_run

    overview = build_overview(store, resolved, training_run)
    runs = []
    for run in overview.runs:
        if not run.checkpoints:  # consultations alone (no training run recorded): the text and JSON list them
            continue
        markers = [TrendMarker.model_validate(f.model_dump(include=set(TrendMarker.model_fields)))
                   for f in run.rules_fired]
        primary = next((c.primary_metric for c in run.checkpoints if c.primary_metric), None)
        records = contract_records(store, run.run, resolved, run.contract)
        runs.append(trend_run(run.run, records, contract=run.contract, markers=markers, best=run.best,
                              primary=primary, rules_note=run.rules_note,
                              consultations=[TrendConsultation.model_validate(c.model_dump())
                                             for c in run.consultations]))
    return TrendReport(history=overview.history, contract=overview.contract, runs=runs, generated_at=time.time(),
                       rlgate_version=rlgate.__version__)


def write_history_html(store: HistoryStore, out: Path, resolved: ResolvedContract | None = None,
                       training_run: str | None = None) -> Path:
    """Write the trend page to `out` atomically and return its path."""
    from rlgate._core.errors import InputError
    from rlgate._core.files import write_text_atomic
    from rlgate.report.trend_html import render_trend_html

    if out.is_dir():
        raise InputError("is a folder, not a file", file=out, field="--html", fix="name the page, e.g. history.html")
    page = render_trend_html(history_trend(store, resolved, training_run))
    try:
        return write_text_atomic(out, page)
    except OSError as exc:
        raise InputError(f"cannot write the trend report: {exc.strerror or exc}", file=out, field="--html",
                         fix="choose a writable path") from None
