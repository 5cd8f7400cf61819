"""Streaming JSON Lines reading with one located error per bad line (file:line:column and a fix)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlgate.bounds import MAX_LINE_BYTES, check_depth
from rlgate.errors import InputError
from rlgate.jsonl_fast import text_only


def iter_jsonl(path: Path, *, fix: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; bad bytes or JSON raise InputError with `fix`."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115  (closed by the with below; open errors are InputError)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    with handle:
        number = 0
        while True:
            try:
                line = handle.readline(MAX_LINE_BYTES + 1)
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text ({exc.reason})", file=path, line=number + 1,
                                 fix="write the file as UTF-8 JSON Lines") from None
            if not line:
                return
            number += 1
            if len(line) > MAX_LINE_BYTES:
                raise InputError(f"line is longer than {MAX_LINE_BYTES >> 20} Mi characters (no tool writes one "
                                 "this long)", file=path, line=number, fix=fix)
            if not line.strip():
                continue
            try:
                text = line.rstrip("\r\n")
                value = text_only(json.loads(text), text)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=path, line=number, column=exc.colno,
                                 fix=fix) from None
            except (ValueError, RecursionError) as exc:  # an integer of > 4300 digits, or nesting too deep
                raise InputError(f"not readable JSON ({str(exc).split(';')[0]})", file=path, line=number,
                                 fix=fix) from None
            yield number, check_depth(value, file=path, line=number, fix=fix)
