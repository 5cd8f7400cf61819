"""A demo writes only into a folder it made: another demo's folder, or any non-empty folder, is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.demo.owner import MARKER, claim_folder, folder_owner


def test_a_new_or_empty_folder_is_claimed_and_can_be_claimed_again(tmp_path: Path) -> None:
    claim_folder(tmp_path / "new", "text")
    assert folder_owner(tmp_path / "new") == "text"
    (tmp_path / "new" / "report").mkdir()
    claim_folder(tmp_path / "new", "text")  # a re-run of the same demo
    (tmp_path / "empty").mkdir()
    assert folder_owner(claim_folder(tmp_path / "empty", "vlm")) == "vlm"


def test_another_demos_folder_is_refused_with_the_fix(tmp_path: Path) -> None:
    claim_folder(tmp_path / "d", "text")
    (tmp_path / "d" / "contract.yaml").write_text("kept", encoding="utf-8")
    with pytest.raises(InputError) as err:
        claim_folder(tmp_path / "d", "agent")
    assert "holds the outputs of `rlgate demo`" in err.value.message and err.value.field == "--out"
    assert "--out" in (err.value.fix or "") and "--force" in (err.value.fix or "")
    assert folder_owner(tmp_path / "d") == "text" and (tmp_path / "d" / "contract.yaml").read_text() == "kept"


def test_a_folder_no_demo_made_is_refused_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="was not created by a demo"):
        claim_folder(tmp_path / "mine", "real")
    claim_folder(tmp_path / "mine", "real", force=True)
    assert folder_owner(tmp_path / "mine") == "real" and (tmp_path / "mine" / "notes.txt").exists()


def test_a_damaged_marker_is_no_owner(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / MARKER).write_text("{not json", encoding="utf-8")
    assert folder_owner(tmp_path / "d") is None
    with pytest.raises(InputError):
        claim_folder(tmp_path / "d", "text")
