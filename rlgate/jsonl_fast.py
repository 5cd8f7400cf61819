"""JSON Lines through msgspec (a maintained, compiled decoder), with the standard library as the exact fallback.

msgspec decodes a line straight into a typed struct, skipping the fields nobody asked for, several times
faster than `json.loads`. It is strict JSON, so a line it refuses (NaN / Infinity literals, which Python's
json writes for non-finite floats, or a broken line) is decoded again by `json.loads`: the odd line keeps
exactly the meaning, and the error message, it always had. Lines are split on b"\\n"; each comes with its
1-based number and the byte offset where it starts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from rlgate.errors import InputError


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None


def lines(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, line) for every non-blank line."""
    offset = 0
    for number, line in enumerate(data.split(b"\n"), 1):
        start, offset = offset, offset + len(line) + 1
        if line.strip():
            yield number, start, line


def loads_exact(line: bytes, path: Path, number: int, fix: str) -> Any:
    """The standard library's reading of one line, with its located errors (the fallback for odd lines)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", file=path, line=number,
                         fix="write the file as UTF-8 JSON Lines") from None
    try:
        return json.loads(text.rstrip("\r"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=path, line=number, column=exc.colno, fix=fix) from None


def decode(decoder: msgspec.json.Decoder[Any], line: bytes, path: Path, number: int, fix: str) -> Any:
    """The line decoded by `decoder`; a line msgspec refuses comes back from `json.loads` (maybe untyped)."""
    try:
        return decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return loads_exact(line, path, number, fix)

