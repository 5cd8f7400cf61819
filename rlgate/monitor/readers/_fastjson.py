"""A vectorised fast path for JSON lines that share one layout (same keys in the same order, numbers only).

Loggers write the same `json.dumps` layout every step, so only the numbers change from line to line.
For a block of lines, numpy finds every `": <number>` value start and the delimiter that ends it; a
line is accepted only when it has exactly the layout's number of values, every key and every piece
of fixed text between values matches the layout (compared by length, byte sum and position-weighted
byte sum, from two prefix sums: no per-key loop over the text), and its numbers parse strictly
(`numpy.fromstring` refuses anything else). Lines that fail any check are handed back to be parsed
one by one with `json`, so this path only makes reading faster, never different. The cost is a few
passes over the bytes whatever the number of keys.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

_SENTINEL = 7_390_153_311_959_913  # a number no logger writes; marks where each leaf value goes
_NUMBER_START = np.zeros(256, dtype=bool)
_NUMBER_START[[ord(c) for c in "-0123456789NI"]] = True


@dataclass(frozen=True)
class Layout:
    """One line layout: the path of each number, the key before it and the fixed text around it."""

    paths: tuple[tuple[str, ...], ...]
    keys: tuple[bytes, ...]  # JSON-encoded key (with quotes) before each number
    delimiters: tuple[int, ...]  # the byte that ends each number (',' or '}')
    gaps: tuple[bytes, ...]  # fixed text before each key: line start / previous delimiter -> opening quote
    tail: bytes  # from the delimiter after the last number to the end of the line, newline included

    @property
    def width(self) -> int:
        return len(self.paths)


def _leaves(obj: Any, prefix: tuple[str, ...], out: list[tuple[str, ...]]) -> Any:
    """A copy of obj with every number replaced by the sentinel; None when a leaf is not a number."""
    if isinstance(obj, dict):
        copy = {}
        for key, value in obj.items():
            replaced = _leaves(value, (*prefix, key), out)
            if replaced is None:
                return None
            copy[key] = replaced
        return copy
    if isinstance(obj, int | float) and not isinstance(obj, bool):
        out.append(prefix)
        return _SENTINEL
    return None


def layout_of(record: Any) -> Layout | None:
    """The layout `json.dumps` gives this record, or None when it holds anything but numbers."""
    if not isinstance(record, dict):
        return None
    paths: list[tuple[str, ...]] = []
    skeleton = _leaves(record, (), paths)
    if skeleton is None or not paths:
        return None
    parts = (json.dumps(skeleton) + "\n").encode("ascii").split(str(_SENTINEL).encode("ascii"))
    if len(parts) != len(paths) + 1:
        return None
    keys, gaps = [], []
    for i, path in enumerate(paths):
        key = json.dumps(path[-1]).encode("ascii")
        before = parts[i][1:] if i else parts[i]  # after a number, its delimiter is part of the next separator
        if not before.endswith(key + b": "):
            return None
        keys.append(key)
        gaps.append(before[: -len(key) - 2])
    delimiters = tuple(part[0] for part in parts[1:])
    if any(d not in (44, 125) for d in delimiters):
        return None
    return Layout(tuple(paths), tuple(keys), delimiters, tuple(gaps), parts[-1])


_SHIFT = 16  # fingerprint = byte sum in the low 16 bits + position-weighted byte sum above them


_WEIGHTS = np.empty(0, dtype=np.int64)


def _weights(n: int) -> np.ndarray:
    """1 + position x 2^16 for positions 0..n-1 (grown once, then sliced: blocks reuse it)."""
    global _WEIGHTS
    if _WEIGHTS.size < n:
        _WEIGHTS = 1 + (np.arange(n + n // 8, dtype=np.int64) << _SHIFT)
    return _WEIGHTS[:n]


@lru_cache(maxsize=4096)
def _fingerprint(text: bytes) -> int:
    """Byte sum + 2^16 x position-weighted byte sum, as the prefix sums in parse_block compute it."""
    arr = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
    return int((arr * (1 + (np.arange(arr.size, dtype=np.int64) << _SHIFT))).sum())


def parse_block(blob: bytes, layout: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ok, table, newlines): which lines of `blob` have the layout, their numbers (ok lines x width), and
    the position of every line's newline.

    `blob` holds whole lines, each ending in a newline.
    """
    data = np.frombuffer(blob, dtype=np.uint8)
    newlines = np.flatnonzero(data == 10)
    n, width = newlines.size, layout.width
    ok = np.zeros(n, dtype=bool)
    empty = np.empty((0, width))
    if n == 0 or data.size > (1 << 40):
        return ok, empty, newlines
    colons = np.flatnonzero(data == 58)
    colons = colons[(colons >= 1) & (colons + 2 < data.size)]
    # A value start: `": ` then a number character (keys and nested objects start with a quote or brace).
    mask = (data[colons - 1] == 34) & (data[colons + 1] == 32) & _NUMBER_START[data[np.minimum(colons + 2,
                                                                                               data.size - 1)]]
    starts = colons[mask] + 2
    line_of = np.searchsorted(newlines, starts)
    per_line = np.bincount(line_of, minlength=n)
    candidate = per_line == width
    if not candidate.any():
        return ok, empty, newlines
    starts = starts[candidate[line_of]].reshape(-1, width)
    lines = np.flatnonzero(candidate)
    delimiters = np.flatnonzero((data == 44) | (data == 125))
    if delimiters.size == 0:
        return ok, empty, newlines
    ends = delimiters[np.minimum(np.searchsorted(delimiters, starts), delimiters.size - 1)]
    valid = np.all((ends > starts) & (ends - starts <= 40), axis=1)
    # One prefix sum gives, for any segment, its byte sum (low 16 bits; a key of up to 257 bytes fits) and
    # its position-weighted byte sum (the rest). int64 wraps, but differences of segments stay exact.
    with np.errstate(over="ignore"):
        prefix = np.empty(data.size + 1, dtype=np.int64)
        prefix[0] = 0
        np.cumsum(data * _weights(data.size), out=prefix[1:])

    def matches(first: np.ndarray, text: bytes) -> np.ndarray:
        """Whether data[first : first + len(text)] is `text`, for each row (length-anchored fingerprint)."""
        last = first + len(text)
        inside = last <= data.size
        first_c, last_c = np.minimum(first, data.size), np.minimum(last, data.size)
        with np.errstate(over="ignore"):
            segment = prefix[last_c] - prefix[first_c]
            low = segment & ((1 << _SHIFT) - 1)
            # Re-base the weights to the segment's first byte: subtract first x byte sum.
            rebased = segment - ((first_c * low) << _SHIFT)
        return inside & (rebased == _fingerprint(text)) & (len(text) <= 257)

    line_start = np.concatenate([[0], newlines[:-1] + 1])[lines]
    for i in range(width):
        key, gap = layout.keys[i], layout.gaps[i]
        opening = starts[:, i] - 2 - len(key)
        gap_start = line_start if i == 0 else ends[:, i - 1] + 1
        valid &= (opening - gap_start == len(gap)) & matches(opening, key)
        if i:
            valid &= data[ends[:, i - 1]] == layout.delimiters[i - 1]
        if gap:
            valid &= matches(gap_start, gap)
    valid &= (newlines[lines] - ends[:, -1] + 1 == len(layout.tail)) & matches(ends[:, -1], layout.tail)
    if not valid.any():
        return ok, empty, newlines
    starts, ends = starts[valid], ends[valid]
    # Gather each number with the delimiter after it, then make every delimiter a comma.
    flat_starts, lengths = starts.ravel(), (ends - starts + 1).ravel()
    offsets = np.repeat(flat_starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    offsets += (_weights(offsets.size) - 1) >> _SHIFT  # + 0, 1, 2, ...: the position of each kept byte
    text = data[offsets]
    text[text == 125] = 44
    try:
        values = np.fromstring(text[:-1].tobytes().decode("ascii"), dtype=np.float64, sep=",")
    except (ValueError, UnicodeDecodeError):
        return ok, empty, newlines
    if values.size != starts.size:
        return ok, empty, newlines
    ok[lines[valid]] = True
    return ok, values.reshape(-1, width), newlines
