"""Steps logged more than once: a conflict the contract resolves, never a silent pick.

Resumed and restarted runs re-log steps (verl restarts re-log step 0 and the first steps, tinker-cookbook
appends each launch to one metrics.jsonl). Where the loggings of a step agree nothing is lost, and the
log carries a warning with the counts. Where they disagree, which one the monitor judges decides what it
sees: a collapse logged first and a healthy tail re-logged over it must not read as a healthy run. The
contract's `monitor.duplicate_steps` (or `rlgate monitor --duplicate-steps`) chooses `last` (the latest
logging wins: a resumed run), `first`, or `refuse` (the default): a located problem, so the monitor gate
is `error` and `rlgate monitor` exits 2.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from rlgate.monitor.readers import _bounds
from rlgate.monitor.series import ReadProblem, Repeat, Series, TrainingLog
from rlgate.monitor.vocabulary import classify

DuplicatePolicy = Literal["refuse", "last", "first"]
POLICIES: tuple[str, ...] = get_args(DuplicatePolicy)
FIX = ("set monitor.duplicate_steps in the contract (or --duplicate-steps): 'last' keeps the latest logging of "
       "each step (a resumed run re-logging its steps), 'first' the earliest; or repair the log")
_CONSOLE_STEP = re.compile(rb"(?:^|[\s)\]])step:(\d+) - ")


def resolve(log: TrainingLog, policy: DuplicatePolicy = "refuse") -> TrainingLog:
    """`log` with its repeated steps resolved by `policy`: a warning with the counts whenever a step was logged
    more than once, and under `refuse` one located problem when two loggings of a step disagree."""
    if not log.repeats:
        return log
    repeats = sorted(log.repeats.values(), key=lambda r: r.key)
    conflicts = [r for r in repeats if r.conflicting]
    steps = max(r.repeated for r in repeats)
    counts = (f"{steps} step(s) logged more than once, in {len(repeats)} key(s); "
              + (f"{len(conflicts)} key(s) hold different values at a repeated step "
                 f"({max(r.conflicting for r in conflicts)} step(s) at most)" if conflicts
                 else "every repeated logging holds the same values"))
    if not conflicts:
        return replace(log, warnings=[*log.warnings, counts])
    if policy == "refuse":
        return replace(log, warnings=[*log.warnings, counts + "; refused (monitor.duplicate_steps: refuse)"],
                       problems=[*log.problems, _problem(log, conflicts[0], counts)])
    if policy == "last":
        return replace(log, warnings=[*log.warnings, counts + "; kept the last logging of each step "
                                      "(monitor.duplicate_steps: last)"])
    by_key = {r.key: r for r in conflicts}
    extra = {n: _first(s, by_key) for n, s in log.extra.items()}
    metrics = {n: _first(s, by_key) for n, s in log.metrics.items()}
    for name, series in metrics.items():  # a metric derived from parts (vocabulary.DERIVED): from their firsts
        parts = series.source_key.split("+")
        if len(parts) > 1 and all(p in extra for p in parts):
            metrics[name] = Series(name, series.source_key, series.steps,
                                   np.sum([extra[p].values for p in parts], axis=0))
    return replace(log, metrics=metrics, extra=extra,
                   warnings=[*log.warnings, counts + "; kept the first logging of each step "
                             "(monitor.duplicate_steps: first)"])


def _first(series: Series, repeats: dict[str, Repeat]) -> Series:
    repeat = repeats.get(series.source_key)
    if repeat is None or repeat.first_values is None:
        return series
    match = classify(series.source_key)
    scale = match.scale if match is not None and series.name == match.canonical else 1.0
    return Series(series.name, series.source_key, series.steps, repeat.first_values * scale)


def _problem(log: TrainingLog, repeat: Repeat, counts: str) -> ReadProblem:
    first, last = repeat.conflict_values or (float("nan"), float("nan"))
    step = repeat.first_conflict
    file, line, record = log.path, None, None
    if step is not None and log.format == "tensorboard":
        file = _event_file(Path(log.path), step, repeat.key) or file
    elif step is not None and log.format == "trl":
        record = _trl_entry(Path(log.path), step, repeat.key)
    elif step is not None:
        line = _line_of(Path(log.path), log.format, step, repeat.key)
    where = "" if line is not None or record is not None or file != log.path else " (the log does not say where)"
    return ReadProblem(file, f"{log.format} log: step {step} of '{repeat.key}' is logged twice with different "
                       f"values ({first:.6g}, then {last:.6g}){where}: {counts}", line=line, record=record, fix=FIX)


def _event_file(folder: Path, step: int, key: str) -> str | None:
    """The second event file (oldest first) that logs `key` at `step`: where the re-logging starts."""
    from rlgate.monitor.readers import tensorboard
    from rlgate.monitor.series import SeriesBuilder

    holding = []
    for file in tensorboard.event_files(folder):
        builder = SeriesBuilder()
        tensorboard.read_file(file, builder, [])
        if builder.has_point(key, step):
            holding.append(file)
    return str(holding[1]) if len(holding) > 1 else None


def _trl_entry(path: Path, step: int, key: str) -> int | None:
    """The 1-based index of the second log_history entry with `key` at `step`."""
    state = path / "trainer_state.json" if path.is_dir() else path
    try:
        history = json.loads(state.read_text(encoding="utf-8")).get("log_history", [])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, AttributeError):
        return None
    hits = [i for i, e in enumerate(history, start=1) if isinstance(e, dict) and e.get("step") == step and key in e]
    return hits[1] if len(hits) > 1 else None


def _line_of(path: Path, fmt: str, step: int, key: str) -> int | None:
    """The line of the second logging of `step` holding `key`, in the line-oriented formats; None elsewhere."""
    try:
        if fmt in ("jsonl", "openrlhf", "verl_jsonl"):
            return _json_line(path, fmt, step, key)
        if fmt in ("csv", "wandb_csv"):
            return _csv_line(path, step)
        if fmt == "verl_console":
            return _console_line(path, step, key)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None


def _json_line(path: Path, fmt: str, step: int, key: str) -> int | None:
    from rlgate.monitor.readers.generic import STEP_KEYS

    seen = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > _bounds.MAX_LINE_BYTES or str(step).encode() not in raw:
                continue
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, RecursionError, UnicodeDecodeError):
                continue
            if not isinstance(record, dict):
                continue
            data = record.get("data") if fmt == "verl_jsonl" else record
            at = record.get("step") if fmt == "verl_jsonl" else next(
                (record[k] for k in STEP_KEYS if k in record), None)
            if isinstance(data, dict) and key in data and at == step:
                seen += 1
                if seen == 2:
                    return number
    return None


def _csv_line(path: Path, step: int) -> int | None:
    from rlgate.monitor.readers.generic import STEP_KEYS

    with path.open("r", encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, dialect="excel-tab" if path.suffix.lower() == ".tsv" else "excel")
        header = [h.strip() for h in next(reader, [])]
        col = next((header.index(k) for k in STEP_KEYS if k in header), None)
        if col is None:
            return None
        seen = 0
        for row in reader:
            try:
                hit = len(row) > col and float(row[col]) == step
            except ValueError:
                continue
            seen += hit
            if seen == 2:
                return reader.line_num
    return None


def _console_line(path: Path, step: int, key: str) -> int | None:
    seen = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            match = _CONSOLE_STEP.search(raw[:_bounds.MAX_LINE_BYTES])
            if match and int(match.group(1)) == step and f"{key}:".encode() in raw:
                seen += 1
                if seen == 2:
                    return number
    return None
