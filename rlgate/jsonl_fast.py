"""JSON Lines through msgspec (a maintained, compiled decoder), with the standard library as the exact fallback.

msgspec decodes a line straight into a typed struct, skipping the fields nobody asked for, several times
faster than `json.loads`. It is strict JSON, so a line it refuses (NaN / Infinity literals, which Python's
json writes for non-finite floats, or a broken line) is decoded again by `json.loads`: the odd line keeps
exactly the meaning, and the error message, it always had. Lines are split on b"\\n" and numbered from 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

from rlgate.bounds import check_depth
from rlgate.errors import InputError


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


def load_document(path: Path, fix: str) -> Any:
    """A whole-file JSON document as `loads_exact` reads a line: bad bytes, broken or unreadable JSON are one
    located InputError; lone surrogates come back visible."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        data = path.read_bytes()
        raise InputError(f"not UTF-8 text ({exc.reason})", file=path, line=data.count(b"\n", 0, exc.start) + 1,
                         fix=fix) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    try:
        value = text_only(json.loads(text), text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=path, line=exc.lineno, column=exc.colno, fix=fix) from None
    except (ValueError, RecursionError) as exc:  # an integer of > 4300 digits, or nesting too deep to read
        raise InputError(f"not readable JSON ({str(exc).split(';')[0]})", file=path, fix=fix) from None
    return check_depth(value, file=path, fix=fix or None)


def text_only(value: Any, text: str) -> Any:
    """`value`, parsed from JSON `text`, with unpaired surrogates made visible (see `visible_surrogates`)."""
    return visible_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


#: A `\uD800`-`\uDFFF` escape: JSON allows one unpaired, but the string it makes is no Unicode text.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def visible_surrogates(value: Any) -> Any:
    """`value` with each unpaired surrogate written as the `\\udXXX` text the file had.

    Such a string cannot be encoded as UTF-8, so every report and JSON file written from it failed;
    msgspec refuses these lines and `json.loads` reads them, so this runs on those lines only. Escaped,
    never dropped: a reviewer sees what the model wrote."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, list):
        return [visible_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {visible_surrogates(k): visible_surrogates(v) for k, v in value.items()}
    return value


def decode(decoder: msgspec.json.Decoder[Any], line: bytes, path: Path, number: int, fix: str) -> Any:
    """The line decoded by `decoder`; a line msgspec refuses comes back from `json.loads` (maybe untyped)."""
    try:
        return decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return loads_exact(line, path, number, fix)

