"""Generic logs: JSON lines or CSV with a step column and one column per metric.

The step column is the first of `STEP_KEYS` present (wandb exports use `_step`, OpenRLHF
`train/global_step`). Empty CSV cells are missing values; a cell that is not a number is a problem
naming its line and column, and the rest of the file is still read.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from rlgate.monitor.readers import _bounds
from rlgate.monitor.readers._probe import LogProbe, LogReader
from rlgate.monitor.readers._records import FastPath, as_step, read_json_lines
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

STEP_KEYS = ("step", "global_step", "train/global_step", "eval/global_step", "_step", "Step", "iteration",
             "eval/epoch", "progress/batch")


#: Header cells -> metric names, one per cell (None: not a metric, skip the column).
Rename = Callable[[list[str]], list["str | None"]]


def step_key(record: dict[str, Any]) -> str | None:
    return next((k for k in STEP_KEYS if k in record), None)


def _extract(record: Any) -> tuple[int, dict[str, Any]] | str:
    if not isinstance(record, dict):
        return "expected a JSON object per line"
    key = step_key(record)
    if key is None:
        return f"record has no step field (one of {', '.join(STEP_KEYS)})"
    step = as_step(record[key])
    if step is None:
        return f"{key} is not an integer: {record[key]!r}"
    return step, {k: v for k, v in record.items() if k not in STEP_KEYS}


def _columns(paths: tuple[tuple[str, ...], ...]) -> tuple[int, list[tuple[int, str]]] | None:
    """Where the step and each metric sit among a flat layout's numbers (None: not flat or no step)."""
    if any(len(p) != 1 for p in paths):
        return None
    names = [p[0] for p in paths]
    step = next((names.index(k) for k in STEP_KEYS if k in names), None)
    if step is None:
        return None
    return step, [(i, name) for i, name in enumerate(names) if i != step and name not in STEP_KEYS]


def read_jsonl(path: Path, fmt: str = "jsonl") -> TrainingLog:
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    read_json_lines(path, _extract, builder, problems, FastPath(_columns))
    return builder.build(path, fmt, problems)


def read_csv(path: Path, fmt: str = "csv", rename: Rename | None = None) -> TrainingLog:
    """A CSV with a step column; `rename` maps header cells to metric names (None drops the column)."""
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    with path.open("r", encoding="utf-8", newline="") as handle:
        dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
        reader = csv.reader(handle, dialect=dialect)
        header = next(_rows(reader, path, problems), None)
        if not header:
            problems.append(ReadProblem(str(path), "CSV file has no header row", line=1,
                                        fix="write a header with a 'step' column and one column per metric"))
            return builder.build(path, fmt, problems)
        header = [h.strip() for h in header]
        names: list[str | None] = list(rename(header)) if rename is not None else list(header)
        step_col = next((header.index(k) for k in STEP_KEYS if k in header), None)
        if step_col is None:
            problems.append(ReadProblem(str(path), f"CSV header has no step column (one of {', '.join(STEP_KEYS)})",
                                        line=1, fix="add a 'step' column"))
            return builder.build(path, fmt, problems)
        columns: list[list[float]] = [[] for _ in header]
        steps: list[list[int]] = [[] for _ in header]
        for row in _rows(reader, path, problems):
            line = reader.line_num
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                problems.append(ReadProblem(str(path), f"row has {len(row)} cells, the header has {len(header)}",
                                            line=line))
                continue
            step = as_step(_num(row[step_col]))
            if step is None:
                problems.append(ReadProblem(str(path), f"step is not an integer: {row[step_col]!r}", line=line,
                                            column=step_col + 1))
                continue
            for j, cell in enumerate(row):
                if j == step_col or names[j] is None or not cell.strip():
                    continue
                value = _num(cell)
                if value is None:
                    problems.append(ReadProblem(str(path), f"'{header[j]}' is not a number: {cell!r}", line=line,
                                                column=j + 1))
                    continue
                steps[j].append(step)
                columns[j].append(value)
    for j, name in enumerate(names):
        if j != step_col and name is not None and steps[j]:
            builder.add_columns(name, np.asarray(steps[j], dtype=np.int64), np.asarray(columns[j]))
    return builder.build(path, fmt, problems)


def _rows(reader: Any, path: Path, problems: list[ReadProblem]) -> Iterator[list[str]]:
    """The reader's rows until the csv module refuses one (a cell over its field limit, a NUL byte): that
    is a problem naming the line, and the rows before it are kept."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            size = "a cell longer than the csv module's limit of " \
                f"{_bounds.CSV_FIELD_LIMIT >> 10} KiB" if "field larger" in str(exc) else str(exc)
            problems.append(ReadProblem(str(path), f"unreadable CSV row: {size}", line=reader.line_num,
                                        fix="the rows before it were read; no metric cell is that long: repair the "
                                        "file, or export the metrics again"))
            return
        yield row


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _jsonl_sniff(probe: LogProbe) -> bool:
    return not probe.is_dir and isinstance(probe.first_record, dict)


def _csv_sniff(probe: LogProbe) -> bool:
    if probe.is_dir or probe.empty:
        return False
    first = probe.head.split(b"\n", 1)[0]
    return probe.suffix in (".csv", ".tsv") or (b"," in first and b"step" in first.lower())


#: any JSON lines of flat records, any CSV with a step column: tried after every specific format
JSONL_FORMAT = LogReader("jsonl", _jsonl_sniff, read_jsonl, fallback=True)
CSV_FORMAT = LogReader("csv", _csv_sniff, read_csv, fallback=True)
