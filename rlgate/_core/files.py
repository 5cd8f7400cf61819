"""Atomic file writes: a reader (or a crash) never sees half a decision, report or export."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


#: characters encoded per write: a report of hundreds of MB is never held a second time as bytes
_CHUNK = 1 << 20


def write_text_atomic(path: str | Path, text: str | bytes | list[str]) -> Path:
    """Write `text` (UTF-8 bytes as they are; a list: its parts one after another) to `path` through a
    temporary file in the same folder, then rename it into place."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as raw:
                raw.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                for part in [text] if isinstance(text, str) else text:
                    for start in range(0, len(part), _CHUNK):
                        handle.write(part[start:start + _CHUNK])
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
