"""Atomic writes keep normal permissions and leave no temporary file behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rlgate._core.files import write_text_atomic


def test_atomic_write_replaces_content_with_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "decision.json"
    write_text_atomic(target, "one")
    write_text_atomic(target, "two")
    assert target.read_text(encoding="utf-8") == "two"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["decision.json"]
