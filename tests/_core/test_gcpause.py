"""The collector pause restores the collector's state, nested or after an error."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from rlgate._core.gcpause import collector_paused


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


def test_command_policy_does_nothing_outside_the_executable() -> None:
    from rlgate._core.gcpause import command_policy

    frozen = gc.get_freeze_count()
    with command_policy():
        with collector_paused():
            built = [[i] for i in range(1000)]
        assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # library callers and CliRunner keep their generations
    assert len(built) == 1000


def test_the_executable_freezes_what_a_pause_built_and_everything_at_the_end() -> None:
    from rlgate._core.gcpause import command_policy, executable

    gc.unfreeze()
    try:
        with executable(), command_policy():
            with collector_paused():
                built = [[i] for i in range(1000)]
            after_pause = gc.get_freeze_count()
            assert after_pause >= 900  # frozen before the collector resumed
            assert gc.isenabled()
            late = [[i] for i in range(1000)]  # built with the collector running
            before_end = gc.get_freeze_count()
        assert gc.get_freeze_count() - before_end >= 900  # everything frozen when the command ends
        assert len(built) == len(late) == 1000
    finally:
        gc.unfreeze()


def test_the_policy_ends_with_its_command_on_an_error() -> None:
    from rlgate._core.gcpause import _Policy, command_policy, executable

    try:
        with pytest.raises(ValueError), executable(), command_policy():
            raise ValueError("boom")
        assert not _Policy.executable and not _Policy.freeze_paused
        frozen = gc.get_freeze_count()
        with collector_paused():
            kept = [{} for _ in range(1000)]
        # a pause that froze would add at least `kept`; frozen objects that other threads (left by earlier
        # tests) release meanwhile can only lower the count, so equality would be flaky in a full run
        assert gc.get_freeze_count() <= frozen and len(kept) == 1000
    finally:
        gc.unfreeze()
