"""verl's `file` logger: one JSON object per line, `{"step": N, "data": {"critic/score/mean": ..., ...}}`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate.monitor.readers._probe import LogProbe, LogReader
from rlgate.monitor.readers._records import FastPath, as_step, read_json_lines
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

FORMAT = "verl_jsonl"


def sniff(record: Any) -> bool:
    return isinstance(record, dict) and "step" in record and isinstance(record.get("data"), dict)


def _extract(record: Any) -> tuple[int, dict[str, Any]] | str:
    if not sniff(record):
        return 'not a verl file-logger record (expected {"step": N, "data": {...}})'
    step = as_step(record["step"])
    if step is None:
        return f"step is not an integer: {record['step']!r}"
    data: dict[str, Any] = record["data"]
    return step, data


def _columns(paths: tuple[tuple[str, ...], ...]) -> tuple[int, list[tuple[int, str]]] | None:
    """Where the step and each metric sit among a layout's numbers (None: not a verl record)."""
    if paths[0] != ("step",) or any(len(p) != 2 or p[0] != "data" for p in paths[1:]):
        return None
    return 0, [(i, p[1]) for i, p in enumerate(paths) if i]


def read(path: Path) -> TrainingLog:
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    read_json_lines(path, _extract, builder, problems, FastPath(_columns))
    return builder.build(path, FORMAT, problems)


def sniff_log(probe: LogProbe) -> bool:
    """JSON lines whose first record is verl's file logger's `{"step": N, "data": {...}}`."""
    return not probe.is_dir and sniff(probe.first_record)


LOG_FORMAT = LogReader(FORMAT, sniff_log, read)
