"""Showing invisible or text-reordering characters as visible escapes, for every layer that writes text a person
reads (the engine's summary.md as well as the reports): escape, never strip."""

from __future__ import annotations

import re

#: Characters that are invisible or reorder text when shown raw: C0/C1 controls (except tab and
#: newline), line/paragraph separators, bidi overrides and isolates ("trojan source"), zero-width
#: joiners and the BOM. They are shown as `\uXXXX` so nothing hides in the output.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def visible_controls(text: str) -> str:
    """Show invisible/reordering characters as `\\uXXXX` escapes; keep tab and newline (and CR as \\r)."""
    text = text.replace("\r\n", "\n").replace("\r", "\\r")
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def visible_line(text: str) -> str:
    """`visible_controls` on one line: a newline shown as \\n too, where a name or message from a data file is
    printed (a line of its own could pass for rlgate's output, or be a GitHub Actions `::` command)."""
    return visible_controls(text).replace("\n", "\\n")
