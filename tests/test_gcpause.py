"""The collector pause restores the collector's state, nested or after an error."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from rlgate.gcpause import collector_paused


def test_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause restores the outer's state, not "enabled"
    assert gc.isenabled()


def test_restored_after_an_error() -> None:
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_reading_leaves_the_collector_as_found(tmp_path: Path) -> None:
    from fixtures.lmeval_builders import build_synthetic_folder

    from rlgate.harness import read_results

    folder = build_synthetic_folder(tmp_path / "run", "org/model", {"gsm8k": [True, False, True]})
    run = read_results(folder)
    assert len(run.tasks["gsm8k"].samples) == 3
    assert gc.isenabled()
