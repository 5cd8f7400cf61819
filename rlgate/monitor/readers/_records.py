"""Shared machinery for line-oriented JSON logs: chunked parsing and columnar accumulation.

A million-line log is parsed in chunks of lines joined into one JSON array (one C-level parse per
chunk instead of one per line); rows with the same keys are stacked into numpy columns at once. Only
when a chunk fails to parse is it re-read line by line, to name the bad line and keep the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from rlgate.monitor.series import ReadProblem, SeriesBuilder

CHUNK_LINES = 20_000

#: (step, {key: value}) from one parsed record, or a message saying why the record is unusable.
Extract = Callable[[Any], "tuple[int, dict[str, Any]] | str"]


def line_chunks(handle: IO[bytes], size: int = CHUNK_LINES) -> Iterator[tuple[int, list[bytes]]]:
    """(line number of the first line, lines) in chunks; line numbers are 1-based."""
    chunk: list[bytes] = []
    first = 1
    number = 0
    for number, line in enumerate(handle, start=1):
        chunk.append(line)
        if len(chunk) >= size:
            yield first, chunk
            chunk = []
            first = number + 1
    if chunk:
        yield first, chunk


def _parse_chunk(path: Path, first: int, lines: list[bytes], problems: list[ReadProblem]) -> list[tuple[int, Any]]:
    """Parsed (line number, value) for every non-blank line; bad lines become problems."""
    numbered = [(first + i, line) for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        return []
    try:
        values = json.loads(b"[" + b",".join(line for _, line in numbered) + b"]")
        if len(values) == len(numbered):
            return [(n, v) for (n, _), v in zip(numbered, values, strict=True)]
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    out: list[tuple[int, Any]] = []
    last = first + len(lines) - 1
    for number, line in numbered:
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            tail = number == last and not line.endswith(b"\n")
            what = "truncated JSON line (the file ends mid-record)" if tail else f"corrupt JSON line: {exc.msg}"
            problems.append(ReadProblem(str(path), what, line=number, column=exc.colno,
                                        fix="the lines before and after it were read; repair or remove this line"))
        except UnicodeDecodeError as exc:
            problems.append(ReadProblem(str(path), f"line is not UTF-8 text (byte {exc.start})", line=number))
    return out


def _stack(builder: SeriesBuilder, keys: tuple[str, ...], steps: list[int], rows: list[list[Any]]) -> None:
    """Add rows sharing one key set as whole columns; fall back per column for non-numeric values."""
    step_arr = np.asarray(steps, dtype=np.int64)
    try:
        table = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        table = None
    if table is not None and table.ndim == 2:
        for j, key in enumerate(keys):
            builder.add_columns(key, step_arr, table[:, j])
        return
    for j, key in enumerate(keys):
        column = [row[j] for row in rows]
        try:
            values = np.asarray(column, dtype=np.float64)
        except (TypeError, ValueError):
            values = None
        if values is None or values.ndim != 1:
            for step, value in zip(steps, column, strict=True):
                builder.add_many(step, {key: value})
        else:
            builder.add_columns(key, step_arr, values)


def read_json_lines(path: Path, extract: Extract, builder: SeriesBuilder, problems: list[ReadProblem]) -> int:
    """Stream a JSON-lines file into `builder`; returns the number of records used."""
    used = 0
    with path.open("rb") as handle:
        for first, lines in line_chunks(handle):
            groups: dict[tuple[str, ...], tuple[list[int], list[list[Any]]]] = {}
            for number, record in _parse_chunk(path, first, lines, problems):
                got = extract(record)
                if isinstance(got, str):
                    problems.append(ReadProblem(str(path), got, line=number))
                    continue
                step, data = got
                keys = tuple(data)
                group = groups.get(keys)
                if group is None:
                    group = groups[keys] = ([], [])
                group[0].append(step)
                group[1].append(list(data.values()))
                used += 1
            for keys, (steps, rows) in groups.items():
                if keys:
                    _stack(builder, keys, steps, rows)
    return used


def as_step(value: Any) -> int | None:
    """A step number from an int or an integral float; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
