"""Streaming JSON Lines reading with one located error per bad line (file:line:column and a fix)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
                line = handle.readline()
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text ({exc.reason})", file=path, line=number + 1,
                                 fix="write the file as UTF-8 JSON Lines") from None
            if not line:
                return
            number += 1
            if not line.strip():
                continue
            try:
                text = line.rstrip("\r\n")
                yield number, text_only(json.loads(text), text)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=path, line=number, column=exc.colno,
                                 fix=fix) from None
            except (ValueError, RecursionError) as exc:  # an integer of > 4300 digits, or nesting too deep
                raise InputError(f"not readable JSON ({str(exc).split(';')[0]})", file=path, line=number,
                                 fix=fix) from None
