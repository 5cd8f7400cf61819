"""Limits every log reader keeps, so no input can drive a reader into a traceback by size or nesting.

A metrics record is a step and some numbers, maybe nested a level or two; nothing a trainer logs needs
a line of megabytes, a CSV cell over the csv module's field limit, or JSON nested hundreds deep. Input
beyond these limits is a problem naming its file and line (the rest of the log is still read), never a
RecursionError or a `_csv.Error` out of the parser.
"""

from __future__ import annotations

import csv
import re

#: Longest line a line-oriented reader parses; longer lines are skipped and named as a problem.
MAX_LINE_BYTES = 8 << 20
#: Deepest nesting a record may have before a reader stops descending (W&B's nested history values).
MAX_DEPTH = 32
#: The csv module's own cell limit (128 KiB unless a program raised it); a longer cell ends the CSV read.
CSV_FIELD_LIMIT = csv.field_size_limit()

_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[\[\]{}]')

TOO_DEEP = "JSON nested deeper than any metrics record"


def too_long() -> str:
    """The problem of a line over the limit (the limit read when it is met, so tests can lower it)."""
    return f"line longer than {MAX_LINE_BYTES:,} bytes (no metrics record is that long)"


def deep_offset(text: str, limit: int = 500) -> int | None:
    """Offset of the first bracket that opens nesting level `limit + 1` (outside strings), else None."""
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset `pos`."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1
