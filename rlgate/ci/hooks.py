"""Trainer-side hooks: send `checkpoint-ready` once a checkpoint is fully on disk.

- TRL (and any transformers `Trainer`): `trl_callback(...)` returns a `TrainerCallback` whose
  `on_save` runs after the Trainer has written `OUTPUT_DIR/checkpoint-STEP`.
- verl: call `verl_hf_checkpoint(...)` after `RayPPOTrainer._save_checkpoint()` to get the Hugging
  Face folder of that step (verl writes it when `hf_model` is in the actor's checkpoint save_contents).

A failed notification is logged and never stops training.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from rlgate.ci.dispatch import DispatchError, send_checkpoint_ready

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
