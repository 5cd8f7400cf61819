"""Trainer-side hooks: send `checkpoint-ready` once a checkpoint is fully on disk.

- TRL (and any transformers `Trainer`): `trl_callback(...)` returns a `TrainerCallback` whose
  `on_save` runs after the Trainer has written `OUTPUT_DIR/checkpoint-STEP`.
- verl: call `verl_hf_checkpoint(...)` after `RayPPOTrainer._save_checkpoint()` to get the Hugging
  Face folder of that step (verl writes it when `hf_model` is in the actor's checkpoint save_contents).

A failed notification is logged and never stops training.

The other direction, for runs gated by `rlgate watch` (no GitHub runner needed): `trl_control_callback(...)`
reads `OUTPUT_DIR/rlgate/control.json` at every step end and save and stops the Trainer on `pause` or
`rollback`; a verl loop calls `verl_control(default_local_dir, step)` after each step and stops when it
returns a signal that stops.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.ci.dispatch import DispatchError, send_checkpoint_ready
from rlgate.watch.control import ControlSignal, read_control

log = logging.getLogger("rlgate.ci")


def notify(repo: str, checkpoint: Path, training_run: str | None, **dispatch: Any) -> bool:
    """Send `checkpoint-ready`; log (never raise) a failure. Returns whether the event was sent."""
    try:
        send_checkpoint_ready(repo, checkpoint, training_run, **dispatch)
    except DispatchError as error:
        log.warning("rlgate: could not announce %s: %s", checkpoint, error)
        return False
    log.info("rlgate: announced %s to %s", checkpoint, repo)
    return True


def trl_callback(repo: str, training_run: str | None = None, **dispatch: Any) -> Any:
    """A transformers/TRL `TrainerCallback` that announces every saved checkpoint from the main process.

    `dispatch` goes to `send_checkpoint_ready` (token, api_url, baseline, pull_request, ...).
    """
    from transformers import TrainerCallback
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    class CheckpointReadyCallback(TrainerCallback):
        """Runs after Trainer._save_checkpoint has written weights, tokenizer and trainer state."""

        def __init__(self) -> None:
            self.sent: list[Path] = []

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            folder = (Path(args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}").resolve()
            if notify(repo, folder, training_run, **dispatch):
                self.sent.append(folder)

    return CheckpointReadyCallback()


def verl_hf_checkpoint(default_local_dir: str | Path, global_step: int) -> Path:
    """`<default_local_dir>/global_step_<N>/actor/huggingface`, checked to hold a loadable model.

    verl's own shards (FSDP/Megatron) are not loadable by vLLM or transformers; the Hugging Face
    copy is, and rlgate needs config, tokenizer and weights there.
    """
    folder = (Path(default_local_dir) / f"global_step_{global_step}" / "actor" / "huggingface").resolve()
    weights = [*folder.glob("*.safetensors"), *folder.glob("*.bin")] if folder.is_dir() else []
    if not (folder / "config.json").is_file() or not weights:
        raise DispatchError(
            f"{folder} holds no full Hugging Face model: add hf_model to "
            "actor_rollout_ref.actor.checkpoint.save_contents, or merge the shards with verl's model_merger first")
    return folder


def _signal(run_dir: Path) -> ControlSignal | None:
    """The watcher's signal; a damaged control file is logged and read as no signal (it never kills the run)."""
    try:
        return read_control(run_dir)
    except (InputError, OSError) as error:
        log.warning("rlgate: cannot read the control signal of %s: %s", run_dir, error)
        return None


def _why(signal: ControlSignal, step: int) -> str:
    back = f" to step {signal.rollback_to_step} ({signal.rollback_to})" if signal.action == "rollback" else ""
    return (f"rlgate watch says {signal.action}{back} after gating step {signal.step}; stopping training at step "
            f"{step}: {'; '.join(signal.reasons) or 'no reason given'}")


def wait_for_gate(run_dir: str | Path, step: int, timeout: float, poll: float = 1.0) -> ControlSignal | None:
    """Block until the watcher has gated `step` (or a later one), or `timeout` seconds pass; the signal then."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        signal = _signal(Path(run_dir))
        if signal is not None and (signal.stops or (signal.last_gated_step or -1) >= step):
            return signal
        if time.monotonic() >= deadline:
            log.warning("rlgate: step %d not gated within %.0f s; training goes on", step, timeout)
            return signal
        time.sleep(poll)


def verl_control(default_local_dir: str | Path, global_step: int, wait_seconds: float = 0.0) -> ControlSignal | None:
    """For a verl trainer loop: the watcher's signal for the run saved under `default_local_dir`.

    Call it after each step (`if (s := verl_control(dir, step)) and s.stops: break`); with `wait_seconds`,
    after a save it first waits that long for the watcher to gate the step. Logs why when the signal stops.
    """
    run_dir = Path(default_local_dir)
    signal = wait_for_gate(run_dir, global_step, wait_seconds) if wait_seconds > 0 else _signal(run_dir)
    if signal is not None and signal.stops:
        log.warning("%s", _why(signal, global_step))
    return signal


def trl_control_callback(output_dir: str | Path, wait_seconds: float = 0.0, poll: float = 1.0) -> Any:
    """A transformers/TRL `TrainerCallback` that obeys `rlgate watch`: pause or rollback stops training.

    It reads `output_dir/rlgate/control.json` at `on_step_end` and `on_save` and sets
    `control.should_training_stop`, logging why. `wait_seconds` > 0: at each save, wait up to that long for the
    watcher to gate the new checkpoint first (small dev runs where the gate must keep up with training).
    """
    from transformers import TrainerCallback

    run_dir = Path(output_dir)

    class ControlCallback(TrainerCallback):
        """Stops the Trainer on the watcher's signal; `stopped_by` is the signal that stopped it."""

        def __init__(self) -> None:
            self.stopped_by: ControlSignal | None = None

        def _obey(self, signal: ControlSignal | None, state: Any, control: Any) -> Any:
            if signal is not None and signal.stops and self.stopped_by is None:
                self.stopped_by = signal
                log.warning("%s", _why(signal, state.global_step))
            if self.stopped_by is not None:
                control.should_training_stop = True
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            return self._obey(_signal(run_dir), state, control)

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            signal = wait_for_gate(run_dir, state.global_step, wait_seconds, poll) if wait_seconds > 0 \
                else _signal(run_dir)
            return self._obey(signal, state, control)

    return ControlCallback()
