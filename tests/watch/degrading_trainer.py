"""A real TRL GRPO run built to degrade, for the `rlgate watch` end-to-end test (run as its own process).

The reward pays for answers without digits: the training reward rises as the model learns to leave the
number out, while the held dev metric (GSM8K-format answers lm-eval can parse) falls. The run carries
rlgate's TRL control callback, which stops it when `rlgate watch` writes pause or rollback. Usage:
`python degrading_trainer.py MODEL OUT --steps N --save-steps K [--wait S]`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any


def digit_free_reward(completions: list[Any], **_: Any) -> list[float | None]:
    """1 for an answer without a digit, less for each digit it has (group variance for GRPO at every step)."""
    return [1.0 / (1.0 + sum(ch.isdigit() for ch in str(c))) for c in completions]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--save-steps", type=int, default=2)
    parser.add_argument("--wait", type=float, default=0.0, help="seconds to wait at each save for the gate")
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stdout)
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rlgate.ci.hooks import trl_control_callback
    from rlgate.demo import data

    torch.set_num_threads(1)
    generated = data.generate(0, gsm8k_test=4, mmlu_per_category=1, ifeval_test=1, gsm8k_train=32)
    dataset = Dataset.from_list([{"prompt": f"Question: {e.row['question']}\nAnswer:"} for e in generated.gsm8k_train])
    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.steps, per_device_train_batch_size=8, num_generations=4,
        max_completion_length=24, learning_rate=args.lr, beta=0.0, temperature=1.0, logging_steps=1,
        save_steps=args.save_steps, save_total_limit=2, report_to=[], use_cpu=True, bf16=False, fp16=False,
        seed=0, data_seed=0, dataloader_num_workers=0, disable_tqdm=True, log_completions=False)
    trainer = GRPOTrainer(model=str(args.model), reward_funcs=[digit_free_reward], args=config,
                          train_dataset=dataset, callbacks=[trl_control_callback(args.out, wait_seconds=args.wait)])
    trainer.train()
    print(f"trainer: finished at step {trainer.state.global_step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
