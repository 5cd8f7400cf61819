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


def test_long_text_is_written_in_chunks_whole_and_bytes_as_they_are(tmp_path: Path) -> None:
    import rlgate._core.files as files

    text = "é" * (3 * files._CHUNK + 7) + "€ end"  # chunk borders inside runs of multi-byte characters
    write_text_atomic(tmp_path / "long.txt", text)
    assert (tmp_path / "long.txt").read_text(encoding="utf-8") == text
    write_text_atomic(tmp_path / "raw.json", b'{"a": "\\u00e9"}\n')
    assert (tmp_path / "raw.json").read_bytes() == b'{"a": "\\u00e9"}\n'
    write_text_atomic(tmp_path / "empty.txt", "")
    assert (tmp_path / "empty.txt").read_bytes() == b""
    parts = ["<head>", text, "", "€ tail"]  # a list: its parts one after another, each in chunks
    write_text_atomic(tmp_path / "parts.txt", parts)
    assert (tmp_path / "parts.txt").read_text(encoding="utf-8") == "".join(parts)
