"""The trainer side of `rlgate watch`: the TRL callback and the verl hook obey control.json and say why."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.ci.hooks import trl_control_callback, verl_control, wait_for_gate
from rlgate.watch.control import ControlSignal, control_path, read_control, write_control

PAUSE = ControlSignal(action="pause", step=4, checkpoint="/run/checkpoint-4", last_gated_step=4,
                      reasons=["safety_worse (pause_manual_review): hard metric got worse"])


def test_the_trl_callback_stops_training_on_pause_and_logs_why(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState

    callback = trl_control_callback(tmp_path)
    state, control = TrainerState(global_step=3), TrainerControl()
    callback.on_step_end(None, state, control)
    assert not control.should_training_stop  # no signal yet
    write_control(tmp_path, ControlSignal(action="continue", step=2, last_gated_step=2))
    callback.on_step_end(None, state, control)
    assert not control.should_training_stop
    write_control(tmp_path, PAUSE)
    state.global_step = 4
    with caplog.at_level(logging.WARNING, logger="rlgate.ci"):
        callback.on_save(None, state, control)
    assert control.should_training_stop and callback.stopped_by == PAUSE
    assert "says pause after gating step 4; stopping training at step 4: safety_worse" in caplog.text


def test_the_trl_callback_waits_at_a_save_for_the_gate_of_that_step(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState

    def gate_later() -> None:
        time.sleep(0.5)
        write_control(tmp_path, PAUSE)
    threading.Thread(target=gate_later).start()
    callback = trl_control_callback(tmp_path, wait_seconds=30, poll=0.05)
    control = TrainerControl()
    callback.on_save(None, TrainerState(global_step=4), control)
    assert control.should_training_stop


def test_waiting_gives_up_after_its_timeout_and_training_goes_on(tmp_path: Path) -> None:
    write_control(tmp_path, ControlSignal(action="continue", step=2, last_gated_step=2))
    signal = wait_for_gate(tmp_path, 4, timeout=0.2, poll=0.05)
    assert signal is not None and not signal.stops


def test_the_verl_hook_returns_the_signal_and_a_damaged_file_never_stops_the_run(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert verl_control(tmp_path, 1) is None
    write_control(tmp_path, ControlSignal(action="rollback", step=6, rollback_to_step=2, rollback_to="/r/step_2",
                                          reasons=["reward_up_private_down (rollback): ..."]))
    with caplog.at_level(logging.WARNING, logger="rlgate.ci"):
        signal = verl_control(tmp_path, 7)
    assert signal is not None and signal.stops and signal.rollback_to_step == 2
    assert "says rollback to step 2 (/r/step_2)" in caplog.text
    control_path(tmp_path).write_text('{"action": "stop"}')
    assert verl_control(tmp_path, 8) is None  # logged, not raised: a bad file must not kill training
    with pytest.raises(InputError, match="not a valid rlgate control signal") as err:
        read_control(tmp_path)
    assert err.value.field == "action"


def test_the_control_file_is_replaced_atomically_and_round_trips(tmp_path: Path) -> None:
    path = write_control(tmp_path, PAUSE)
    assert path == tmp_path / "rlgate" / "control.json"
    assert read_control(tmp_path) == PAUSE
    assert [p.name for p in path.parent.iterdir()] == ["control.json"]  # no temporary file left behind
