"""The fast path for JSON lines that share one layout, decoded by msgspec into typed structs.

Loggers write the same record every step: a step and some numbers, maybe nested one level (verl's
{"step": .., "data": {..}}). From the first lines the reader learns that layout and builds msgspec struct
types for it (every leaf a float, unknown keys refused), so a block of lines is decoded in one C call
with no dict per line; the columns are then pulled out with `attrgetter` into numpy. A line that does
not fit (other keys, a string, a NaN literal, broken JSON) fails the typed decode and goes back to the
caller's exact path (`json`), so this path only makes reading faster, never different.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

Path_ = tuple[str, ...]


def leaf_paths(record: Any) -> list[Path_] | None:
    """The key path of every number in the record (dicts nested at most once), or None when another value
    (string, bool, list, null, deeper nesting) is present."""
    if not isinstance(record, dict) or not record:
        return None
    out: list[Path_] = []
    for key, value in record.items():
        if isinstance(value, dict):
            if not value:
                return None
            for inner, leaf in value.items():
                if not _number(leaf):
                    return None
                out.append((key, inner))
        elif _number(value):
            out.append((key,))
        else:
            return None
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class TypedLayout:
    """msgspec types for one layout: a struct per level, a float per leaf, unknown fields refused."""

    def __init__(self, paths: Sequence[Path_]) -> None:
        self.paths = tuple(paths)
        top: dict[str, list[str] | None] = {}
        for path in self.paths:
            if len(path) == 1:
                top[path[0]] = None
            else:
                inner = top.setdefault(path[0], [])
                assert inner is not None
                inner.append(path[1])
        fields: list[tuple[str, Any]] = []
        getters: list[tuple[str, str | None]] = []  # (outer attribute, inner attribute or None)
        rename: dict[str, str] = {}
        for i, (key, inner) in enumerate(top.items()):
            name = f"f{i}"
            rename[name] = key
            if inner is None:
                fields.append((name, float))
                getters.append((name, None))
            else:
                sub = msgspec.defstruct(f"Level{i}", [(f"g{j}", float) for j in range(len(inner))],
                                        rename={f"g{j}": k for j, k in enumerate(inner)}, forbid_unknown_fields=True)
                fields.append((name, sub))
                getters.extend((name, f"g{j}") for j in range(len(inner)))
        self.type = msgspec.defstruct("Line", fields, rename=rename, forbid_unknown_fields=True)
        self.line = msgspec.json.Decoder(self.type)
        self.block = msgspec.json.Decoder(list[self.type])  # type: ignore[name-defined]
        self._getters = getters

    def table(self, rows: list[Any]) -> np.ndarray:
        """(rows, leaves) float matrix of decoded lines, in `paths` order."""
        n = len(rows)
        table = np.empty((n, len(self.paths)))
        outer = [name for name, inner in self._getters if inner is None]
        groups: dict[str, list[str]] = {}
        for name, inner in self._getters:
            if inner is not None:
                groups.setdefault(name, []).append(inner)
        position = {g: i for i, g in enumerate(self._getters)}
        for name in outer:
            table[:, position[(name, None)]] = np.fromiter(map(attrgetter(name), rows), dtype=float, count=n)
        for name, inners in groups.items():
            subs = list(map(attrgetter(name), rows))
            getter = attrgetter(*inners) if len(inners) > 1 else (lambda s, a=inners[0]: (getattr(s, a),))
            block = np.fromiter(itertools.chain.from_iterable(map(getter, subs)), dtype=float,
                                count=n * len(inners)).reshape(n, len(inners))
            cols = [position[(name, inner)] for inner in inners]
            table[:, cols] = block
        return table

    def decode(self, lines: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """(ok mask, table) for the lines; rows of lines that do not fit the layout are NaN and not ok."""
        try:
            rows = self.block.decode(b"[" + b",".join(lines) + b"]")
            return np.ones(len(lines), dtype=bool), self.table(rows)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass
        ok = np.zeros(len(lines), dtype=bool)
        good: list[Any] = []
        for i, line in enumerate(lines):
            try:
                good.append(self.line.decode(line))
                ok[i] = True
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                continue
        table = np.full((len(lines), len(self.paths)), np.nan)
        if good:
            table[ok] = self.table(good)
        return ok, table
