"""What `rlgate validate` says inspect tasks need: BFCL data comes from GitHub on first use (a note, no refusal)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_evals")

from rlgate.harness.inspect import catalog
from rlgate.harness.vocabulary import load_contract

CONTRACT = Path(__file__).resolve().parents[2] / "contracts" / "agent_tools.yaml"


def _bfcl() -> object:
    return next(t for t in load_contract(CONTRACT).tasks if t.name == "bfcl_simple")


def test_bfcl_data_not_cached_is_a_note_and_no_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect_evals.constants as constants

    monkeypatch.setattr(constants, "INSPECT_EVALS_CACHE_PATH", tmp_path)
    task = _bfcl()
    assert any("GitHub" in need for need in catalog.needs(task))  # type: ignore[arg-type]
    assert not any("bfcl_eval" in problem for problem in catalog.missing(task))  # type: ignore[arg-type]
    [note] = catalog.notes(task)  # type: ignore[arg-type]
    assert str(tmp_path / "BFCL") in note and "network" in note
    catalog.check_requirements(task)  # type: ignore[arg-type]  # no refusal: with network the run fetches it

    (tmp_path / "BFCL").mkdir()
    (tmp_path / "BFCL" / "BFCL_v4_simple_python.json").write_text("{}\n")
    assert catalog.notes(task) == []  # type: ignore[arg-type]
