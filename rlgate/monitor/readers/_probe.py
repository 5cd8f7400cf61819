"""What every log format's `sniff` sees: one probe of a path (its kind, name and first bytes, read once).

A format is a `LogReader`: its name, `sniff(probe) -> bool` and `read(path) -> TrainingLog`. The built-in
formats and plugins (`rlgate.plugins` entry points `log_format.<name>`) are one registry
(rlgate.monitor.readers.LOG_FORMATS); detection asks each format's `sniff` in the registry's order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from rlgate.monitor.series import TrainingLog

#: bytes of a file a sniff may look at
SNIFF_BYTES = 4 << 20


@dataclass(frozen=True)
class LogReader:
    """One training-log format."""

    name: str
    sniff: Callable[[LogProbe], bool]
    read: Callable[[Path], TrainingLog]
    #: tried only after every specific format, plugins included (catch-alls: any JSON lines, any CSV)
    fallback: bool = False


class LogProbe:
    """A path as the sniffers see it; the file's head is read on first use and only once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.is_dir = path.is_dir()
        self.name = path.name
        self.suffix = path.suffix.lower()

    @cached_property
    def head(self) -> bytes:
        """The file's first SNIFF_BYTES bytes (nothing for a folder)."""
        if self.is_dir:
            return b""
        with self.path.open("rb") as handle:
            return handle.read(SNIFF_BYTES)

    @property
    def empty(self) -> bool:
        return not self.is_dir and not self.head.strip()

    @cached_property
    def text(self) -> str:
        """The head's first 64 KiB as text (undecodable bytes replaced)."""
        return self.head[:65536].decode("utf-8", errors="replace")

    @cached_property
    def first_record(self) -> object | None:
        """The first JSON line's value; a line nested too deep to parse is skipped (the reader names it), and an
        object stands in for it when no other line parses, so such a file still reads as JSON lines."""
        deep = False
        for line in self.head.splitlines()[:50]:
            if line.strip():
                try:
                    return json.loads(line)
                except RecursionError:
                    deep = True
                except (json.JSONDecodeError, UnicodeDecodeError):
                    return {} if deep else None
        return {} if deep else None
