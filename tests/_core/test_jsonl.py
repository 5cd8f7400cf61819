"""JSON Lines reading names the file, line and column of the first bad line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate._core.jsonio import iter_jsonl


def test_rows_with_line_numbers_skipping_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n[2]\n', encoding="utf-8")
    assert list(iter_jsonl(path, fix="x")) == [(1, {"a": 1}), (3, [2])]


def test_bad_json_is_located(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        list(iter_jsonl(path, fix="re-run it"))
    assert str(info.value).startswith(f"{path}:2:7: not valid JSON")
    assert "fix: re-run it" in str(info.value)


def test_bad_bytes_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "\xff\xfe"}\n')
    with pytest.raises(InputError, match="not UTF-8 text"):
        list(iter_jsonl(path, fix="x"))
    with pytest.raises(InputError, match="cannot read"):
        list(iter_jsonl(tmp_path / "missing.jsonl", fix="x"))


def test_json_the_standard_library_cannot_hold_is_located(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    for line in ('{"a": 1' + "0" * 5000 + "}", "[" * 100_000 + "]" * 100_000):  # > 4300 digits; too deep
        path.write_text('{"a": 1}\n' + line + "\n", encoding="utf-8")
        with pytest.raises(InputError, match="not readable JSON") as info:
            list(iter_jsonl(path, fix="x"))
        assert info.value.line == 2


def test_a_lone_surrogate_escape_reads_as_visible_text(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON but decodes to a string no UTF-8 file takes: every reader of imported responses,
    BFCL results and lmms-eval samples got it, and the first write of it died with UnicodeEncodeError."""
    path = tmp_path / "r.jsonl"
    path.write_text('{"response": "a\\ud800b", "k\\udfff": "\\ud83d\\ude00"}\n', encoding="utf-8")
    assert list(iter_jsonl(path, fix="x")) == [(1, {"response": "a\\ud800b", "k\\udfff": "\U0001f600"})]
