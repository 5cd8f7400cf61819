"""History exported from Weights & Biases as CSV.

Two shapes exist. `run.history().to_csv()` (the public API) writes `_step`, `_runtime`, `_timestamp`
and one column per key, often after an unnamed index column. A chart's "Export CSV" in the web app
writes `Step` and, per run, `<run name> - <key>` plus `<key>__MIN` / `<key>__MAX` band columns. Both
become plain metric columns here: the run-name prefix is dropped (one run per file), band and
bookkeeping columns are skipped, and the generic CSV reader does the rest (problems name line and column).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.monitor.readers import generic
from rlgate.monitor.series import TrainingLog

FORMAT = "wandb_csv"
_PANEL = re.compile(r"^(?P<run>.+?) - (?P<key>.+)$")
_BAND = ("__MIN", "__MAX")
_SKIP = {"", "_runtime", "_timestamp", "Unnamed: 0", "index", "Relative Time (Process)", "Wall Time"}


def sniff_header(header: list[str]) -> bool:
    """A W&B export: `_step` with `_runtime`/`_timestamp`, or a `Step` column beside `<run> - <key>` columns."""
    cells = {h.strip() for h in header}
    if "_step" in cells and cells & {"_runtime", "_timestamp"}:
        return True
    return "Step" in cells and any(_PANEL.match(c) for c in cells if c != "Step")


def sniff_file(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            header = next(csv.reader(handle), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return header is not None and bool(header) and sniff_header(header)


def _rename(path: Path) -> generic.Rename:
    def rename(header: list[str]) -> list[str | None]:
        runs = {m.group("run") for c in header if (m := _PANEL.match(c)) and c != "Step"}
        if len(runs) > 1:
            raise InputError(f"this W&B export holds {len(runs)} runs ({', '.join(sorted(runs)[:4])})", file=path,
                             line=1, fix="export one run per CSV (hide the other runs in the chart, then export)")
        names: list[str | None] = []
        for cell in header:
            if cell in _SKIP or cell.endswith(_BAND):
                names.append(None)
                continue
            m = _PANEL.match(cell)
            names.append(m.group("key") if m and runs else cell)
        return names

    return rename


def read(path: Path) -> TrainingLog:
    return generic.read_csv(path, FORMAT, rename=_rename(path))
