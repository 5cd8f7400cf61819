"""JSON and JSON Lines reading for every importer: located errors, bounded input, lone surrogates made visible.

Every reader of a results file, samples file, manifest or stored document goes through here, so a bad file
is one InputError naming the file, the line (and column) and the fix, never a decoder's traceback:

- Lines through msgspec (a maintained, compiled decoder), with the standard library as the exact fallback:
  msgspec decodes a line straight into a typed struct, skipping the fields nobody asked for, several times
  faster than `json.loads`. It is strict JSON, so a line it refuses (NaN / Infinity literals, which Python's
  json writes for non-finite floats, or a broken line) is decoded again by `json.loads`: the odd line keeps
  exactly the meaning, and the error message, it always had. Lines are split on b"\\n" and numbered from 1.
- Bounds: JSON nested deeper than any real tool writes would overflow the stack of the code that walks it
  later (RecursionError: exit 1, read as "block"), and one line or cell of gigabytes would exhaust memory. A
  reader checks each parsed value with `check_depth` and reads lines through `MAX_LINE_BYTES`; past them the
  input is one InputError naming the file and line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from rlgate._core.errors import InputError
from rlgate._core.text import visible_surrogates

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


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None


_UTF8_FIX = "write the file as UTF-8 JSON Lines"
_CHUNK = 1 << 23  # bytes checked per decode: a whole file's text is never built at once


def require_utf8(data: bytes, path: Path) -> None:
    """Refuse a file that is not UTF-8 with the error a line-by-line `loads_exact` gives (first bad line).

    A reader that keeps parts of a line as raw JSON slices (decoded later, or read back on a repeat)
    checks the file once here, so broken text is a located InputError rather than a decoder's traceback.
    ASCII (most files) costs one C scan; otherwise the file is decoded in chunks cut at newlines."""
    if data.isascii():
        return
    view = memoryview(data)
    start = 0
    while start < len(data):
        end = data.find(b"\n", start + _CHUNK)
        end = len(data) if end < 0 else end + 1
        try:
            str(view[start:end], "utf-8")
        except UnicodeDecodeError as exc:
            bad = start + exc.start
            first, last = data.rfind(b"\n", 0, bad) + 1, data.find(b"\n", bad)
            reason = exc.reason
            try:  # the reason the line alone gives, as when each line was decoded by itself
                data[first:len(data) if last < 0 else last].decode("utf-8")
            except UnicodeDecodeError as own:
                reason = own.reason
            raise InputError(f"not UTF-8 text ({reason})", file=path, line=data.count(b"\n", 0, bad) + 1,
                             fix=_UTF8_FIX) from None
        start = end


def loads_exact(line: bytes, path: Path, number: int, fix: str) -> Any:
    """The standard library's reading of one line, with its located errors (the fallback for odd lines)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", file=path, line=number, fix=_UTF8_FIX) from None
    try:
        value = json.loads(text.rstrip("\r"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=path, line=number, column=exc.colno, fix=fix) from None
    except (ValueError, RecursionError) as exc:  # an integer of > 4300 digits, or nesting too deep to read
        raise InputError(f"not readable JSON ({str(exc).split(';')[0]})", file=path, line=number, fix=fix) from None
    return text_only(value, text)


def load_document(path: Path, fix: str, *, empty: str | None = None) -> Any:
    """A whole-file JSON document as `loads_exact` reads a line: bad bytes, broken or unreadable JSON are one
    located InputError with `fix`; lone surrogates come back visible; nesting is bounded. With `empty`, a file
    of nothing but white space is that InputError (a killed run's file) rather than "not valid JSON"."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        data = path.read_bytes()
        raise InputError(f"not UTF-8 text ({exc.reason})", file=path, line=data.count(b"\n", 0, exc.start) + 1,
                         fix=fix) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=path) from None
    if empty is not None and not text.strip():
        raise InputError(empty, file=path, fix=fix)
    try:
        value = text_only(json.loads(text), text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=path, line=exc.lineno, column=exc.colno, fix=fix) from None
    except (ValueError, RecursionError) as exc:  # an integer of > 4300 digits, or nesting too deep to read
        raise InputError(f"not readable JSON ({str(exc).split(';')[0]})", file=path, fix=fix) from None
    return check_depth(value, file=path, fix=fix or None)


def text_only(value: Any, text: str) -> Any:
    """`value`, parsed from JSON `text`, with unpaired surrogates made visible (`text.visible_surrogates`)."""
    return visible_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


#: A `\\uD800`-`\\uDFFF` escape: JSON allows one unpaired, but the string it makes is no Unicode text.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def decode_line(decoder: msgspec.json.Decoder[Any], line: bytes, path: Path, number: int, fix: str) -> Any:
    """The line decoded by `decoder`; a line msgspec refuses comes back from `json.loads` (maybe untyped)."""
    try:
        return decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return loads_exact(line, path, number, fix)


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
                                 fix=_UTF8_FIX) from None
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
