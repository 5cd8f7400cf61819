"""Limits every importer applies to what it reads, so no input can end in a traceback by size or nesting.

JSON nested deeper than any real tool writes would overflow the stack of the code that walks it later
(RecursionError: exit 1, read as "block"), and one line or cell of gigabytes would exhaust memory. A
reader checks each parsed value with `check_depth` and reads lines and cells through these limits; past
them the input is one InputError naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate.errors import InputError

#: deeper than any tool's output (lm-eval samples ~6, inspect logs ~12, BFCL results ~8)
MAX_DEPTH = 64
#: one JSON line or spreadsheet cell (a real samples line with a long generation is well under 1 MiB)
MAX_LINE_BYTES = 64 << 20


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a parsed JSON value, counted without recursion; stops once past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_depth(value: Any, *, file: Path | str | None, line: int | None = None, fix: str | None = None) -> Any:
    """`value`, or an InputError when it is nested deeper than MAX_DEPTH."""
    if depth_of(value) > MAX_DEPTH:
        raise InputError(f"JSON nested deeper than {MAX_DEPTH} levels (no tool writes this; a corrupt or hostile "
                         "file?)", file=file, line=line, fix=fix or "give the file as the tool wrote it, unedited")
    return value
