"""TRL / transformers `trainer_state.json`: the `log_history` list, one flat dict per logging step.

A checkpoint folder (holding `trainer_state.json`) may be given instead of the file. When the file is
truncated (a run killed while saving), the entries of `log_history` before the damage are recovered
one by one with `raw_decode`, and the damage is reported with its line and column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlgate.monitor.readers import _bounds
from rlgate.monitor.readers._probe import LogProbe, LogReader
from rlgate.monitor.readers._records import as_step
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

FORMAT = "trl"
STATE_FILE = "trainer_state.json"
_SKIP = {"step", "epoch"}


def sniff_text(head: str) -> bool:
    return '"log_history"' in head


_line_col = _bounds.line_col


def _salvage(text: str, path: Path, problems: list[ReadProblem]) -> list[Any]:
    """Entries of log_history readable before the point where the JSON breaks."""
    start = text.find('"log_history"')
    bracket = text.find("[", start) if start >= 0 else -1
    if bracket < 0:
        return []
    decoder = json.JSONDecoder()
    entries: list[Any] = []
    pos = bracket + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return entries
        try:
            entry, pos = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError) as exc:
            deep = isinstance(exc, RecursionError)
            at = (_bounds.deep_offset(text[pos:]) or 0) + pos if deep else pos
            line, col = _line_col(text, at)
            what = _bounds.TOO_DEEP if deep else "truncated or corrupt JSON"
            problems.append(ReadProblem(str(path), f"log_history entry {len(entries) + 1}: {what}",
                                        line=line, column=col,
                                        fix=f"the {len(entries)} entries before it were read"))
            return entries
        entries.append(entry)


def read(path: Path) -> TrainingLog:
    if path.is_dir():
        path = path / STATE_FILE
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    text = path.read_text(encoding="utf-8")
    try:
        state = json.loads(text)
        history = state.get("log_history") if isinstance(state, dict) else None
        if not isinstance(history, list):
            problems.append(ReadProblem(str(path), "no 'log_history' list in this trainer_state.json",
                                        fix="point at a transformers/TRL trainer_state.json"))
            history = []
    except (json.JSONDecodeError, RecursionError) as exc:
        before = len(problems)
        history = _salvage(text, path, problems)
        if len(problems) == before:  # log_history itself was intact; the damage is elsewhere
            if isinstance(exc, json.JSONDecodeError):
                message, line, col = f"invalid JSON: {exc.msg}", exc.lineno, exc.colno
            else:
                line, col = _line_col(text, _bounds.deep_offset(text) or 0)
                message = _bounds.TOO_DEEP
            problems.append(ReadProblem(str(path), message, line=line, column=col,
                                        fix=f"the {len(history)} log_history entries were read"))
    for index, entry in enumerate(history, start=1):
        if not isinstance(entry, dict) or as_step(entry.get("step")) is None:
            problems.append(ReadProblem(str(path), "log_history entry has no integer 'step'", record=index))
            continue
        step = as_step(entry["step"])
        assert step is not None
        builder.add_many(step, {k: v for k, v in entry.items() if k not in _SKIP})
    return builder.build(path, FORMAT, problems)


def sniff_log(probe: LogProbe) -> bool:
    """A checkpoint folder with trainer_state.json, that file, or any JSON holding TRL's log_history."""
    if probe.is_dir:
        return (probe.path / STATE_FILE).is_file()
    return not probe.empty and (probe.name == STATE_FILE or sniff_text(probe.text))


LOG_FORMAT = LogReader(FORMAT, sniff_log, read)
