"""Shared machinery for line-oriented JSON logs: block reading, fast columnar parsing, exact fallback.

The file is read in blocks of whole lines (a few MB). Lines sharing the logger's layout go through the
typed fast path (`_typed`: msgspec structs, no dict per line). Every other line is decoded by msgspec
(a chunk joined into one JSON array, so one C-level parse per chunk), and only when that fails is it
parsed line by line with `json`, which keeps the exact reading (NaN literals) and names a bad line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import msgspec
import numpy as np

from rlgate.monitor.readers import _bounds
from rlgate.monitor.readers._typed import TypedLayout, leaf_paths
from rlgate.monitor.series import ReadProblem, SeriesBuilder

BLOCK_BYTES = 2 << 20

#: (step, {key: value}) from one parsed record, or a message saying why the record is unusable.
Extract = Callable[[Any], "tuple[int, dict[str, Any]] | str"]
#: From a layout's number paths to (step column, [(column, metric key)]), or None when it does not apply.
Columns = Callable[[tuple[tuple[str, ...], ...]], "tuple[int, list[tuple[int, str]]] | None"]


def blocks(handle: IO[bytes], size: int | None = None,
           on_long: Callable[[int], None] | None = None) -> Iterator[tuple[int, bytes]]:
    """(1-based number of the block's first line, block of whole lines); only the last may lack a newline.

    A line longer than `_bounds.MAX_LINE_BYTES` is never held whole: it is skipped up to its newline and
    `on_long(its line number)` is called, so one runaway line cannot exhaust memory.
    """
    limit, size = _bounds.MAX_LINE_BYTES, size or BLOCK_BYTES
    first, rest, skipping = 1, b"", False
    while True:
        chunk = handle.read(size)
        if not chunk:
            if rest and not skipping:
                yield first, rest
            return
        if skipping:
            end = chunk.find(b"\n")
            if end < 0:
                continue
            chunk, first, skipping = chunk[end + 1:], first + 1, False
        buffer = rest + chunk
        cut = buffer.rfind(b"\n") + 1
        if cut == 0:  # one line longer than the block: keep reading, up to the limit
            rest = buffer
            if len(buffer) > limit:
                if on_long is not None:
                    on_long(first)
                rest, skipping = b"", True
            continue
        block, rest = buffer[:cut], buffer[cut:]
        yield first, block
        first += block.count(b"\n")


def _split(block: bytes) -> list[bytes]:
    """Lines with their newline, split on "\\n" only (so numbering agrees with counting newlines)."""
    parts = block.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _parse_lines(path: Path, numbered: list[tuple[int, bytes]], problems: list[ReadProblem]) -> list[tuple[int, Any]]:
    """Parsed (line number, value) for every non-blank line; bad lines become problems."""
    numbered = [(n, line) for n, line in numbered if line.strip()]
    if not numbered:
        return []
    try:  # one msgspec call for the chunk; a chunk it refuses (NaN literals, a bad line) goes line by line
        values = msgspec.json.decode(b"[" + b",".join(line for _, line in numbered) + b"]")
        if len(values) == len(numbered):
            return [(n, v) for (n, _), v in zip(numbered, values, strict=True)]
    except (msgspec.DecodeError, RecursionError):
        pass
    out: list[tuple[int, Any]] = []
    for number, line in numbered:
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            # Only the file's last line can lack its newline: the writer stopped mid-record.
            what = ("truncated JSON line (the file ends mid-record)" if not line.endswith(b"\n")
                    else f"corrupt JSON line: {exc.msg}")
            problems.append(ReadProblem(str(path), what, line=number, column=exc.colno,
                                        fix="the lines before and after it were read; repair or remove this line"))
        except UnicodeDecodeError as exc:
            problems.append(ReadProblem(str(path), f"line is not UTF-8 text (byte {exc.start})", line=number))
        except RecursionError:
            text = line.decode("utf-8", errors="replace")
            offset = _bounds.deep_offset(text)
            problems.append(ReadProblem(str(path), _bounds.TOO_DEEP, line=number,
                                        column=None if offset is None else offset + 1,
                                        fix="the lines before and after it were read; repair or remove this line"))
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


class FastPath:
    """Columns straight from the lines of a block that share the learned layout (msgspec typed decoding, `_typed`)."""

    def __init__(self, columns: Columns):
        self._columns = columns
        self._layout: TypedLayout | None = None
        self._plan: tuple[int, list[tuple[int, str]]] | None = None

    def take(self, block: bytes, builder: SeriesBuilder) -> list[tuple[int, bytes]]:
        """Parse the lines of `block` (whole lines) that have the layout; return (index, line) of the others."""
        lines = block.split(b"\n")  # `block` ends with a newline: the last part is empty
        lines.pop()
        if self._layout is None and not self._learn(lines):
            return list(enumerate(_split(block)))
        assert self._layout is not None and self._plan is not None
        ok, table = self._layout.decode(lines)
        step_col, key_cols = self._plan
        raw_steps = table[ok, step_col]
        steps = raw_steps.astype(np.int64)
        if not ok.any() or not np.array_equal(steps, raw_steps):
            self._layout = None  # the layout changed; learn it again on the next block
            return list(enumerate(_split(block)))
        for col, key in key_cols:
            builder.add_columns(key, steps, table[ok, col])
        return [(i, lines[i] + b"\n") for i in np.flatnonzero(~ok).tolist()]

    def _learn(self, lines: list[bytes]) -> bool:
        for line in lines[:10]:
            try:
                paths = leaf_paths(msgspec.json.decode(line))
            except (msgspec.DecodeError, RecursionError):
                continue
            plan = self._columns(tuple(paths)) if paths else None
            if paths and plan is not None:
                try:
                    self._layout = TypedLayout(paths)
                except ValueError:  # a key msgspec cannot name a field (a quote, a backslash): exact path
                    return False
                self._plan = plan
                return True
        return False


def read_json_lines(path: Path, extract: Extract, builder: SeriesBuilder, problems: list[ReadProblem],
                    fast: FastPath | None = None) -> None:
    """Stream a JSON-lines file into `builder`; unusable lines become problems naming their line."""
    def too_long(number: int) -> None:
        problems.append(ReadProblem(str(path), _bounds.too_long(), line=number,
                                    fix="the lines before and after it were read; repair or remove this line"))

    with path.open("rb") as handle:
        for first, block in blocks(handle, on_long=too_long):
            whole = block.rfind(b"\n") + 1
            head, tail = block[:whole], block[whole:]
            rest = fast.take(head, builder) if fast is not None and head else list(enumerate(_split(head)))
            numbered = [(first + i, line) for i, line in rest]
            if tail:
                numbered.append((first + head.count(b"\n"), tail))
            groups: dict[tuple[str, ...], tuple[list[int], list[list[Any]]]] = {}
            for number, record in _parse_lines(path, numbered, problems):
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
            for keys, (steps, rows) in groups.items():
                if keys:
                    _stack(builder, keys, steps, rows)


def as_step(value: Any) -> int | None:
    """A step number from an int or an integral float; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
