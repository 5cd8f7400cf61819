"""verl's `file` logger: one JSON object per line, `{"step": N, "data": {"critic/score/mean": ..., ...}}`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate.monitor.readers._records import as_step, read_json_lines
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


def read(path: Path) -> TrainingLog:
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    read_json_lines(path, _extract, builder, problems)
    return builder.build(path, FORMAT, problems)
