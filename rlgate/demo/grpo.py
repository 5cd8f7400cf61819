"""A short GRPO run with TRL on a real instruct model: the training half of `rlgate demo --real`.

The prompts are the ones lm-eval renders for GSM8K-format training problems, wrapped as a user turn
so TRL applies the model's own chat template, as `rlgate check` does at evaluation time. The reward is
verifiable: 1 when the final answer (the `#### N` line, else the last number) equals the reference,
plus a smaller format reward for ending on GSM8K's `#### N` answer line. TRL writes its real
`trainer_state.json` (every logged step: reward, KL, entropy, clip ratio, lengths), which the
monitor reads during the check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ANSWER_LINE = re.compile(r"####\s*(-?[\d,]*\d)")
NUMBER = re.compile(r"-?\d[\d,]*")
FORMAT_REWARD = 0.25


@dataclass(frozen=True)
class GrpoSettings:
    """Sized for about fifteen minutes on two CPU cores with SmolLM2-135M-Instruct."""

    steps: int = 32
    prompts_per_step: int = 2
    generations: int = 4
    max_completion_tokens: int = 96
    learning_rate: float = 2e-5
    beta: float = 0.02
    temperature: float = 1.0
    save_steps: int = 8
    seed: int = 0


def _text(completion: Any) -> str:
    """A completion as TRL passes it: a string, or a list of chat messages for conversational prompts."""
    if isinstance(completion, str):
        return completion
    return "".join(str(message.get("content", "")) for message in completion)


def final_answer(text: str) -> str | None:
    """The answer a GSM8K scorer would take: the `#### N` line, else the last number."""
    strict = ANSWER_LINE.search(text)
    found = strict.group(1) if strict else (NUMBER.findall(text) or [None])[-1]
    return found.replace(",", "") if found else None


def correctness_reward(completions: Sequence[Any], target: Sequence[str], **_: Any) -> list[float | None]:
    """1 when the final answer equals the reference answer, else 0."""
    return [1.0 if final_answer(_text(c)) == t else 0.0 for c, t in zip(completions, target, strict=True)]


def format_reward(completions: Sequence[Any], **_: Any) -> list[float | None]:
    """A small bonus for GSM8K's `#### N` final-answer line."""
    return [FORMAT_REWARD if ANSWER_LINE.search(_text(c)) else 0.0 for c in completions]


def last_checkpoint(folder: Path) -> Path | None:
    """The newest `checkpoint-N` folder TRL left (a killed run resumes from it)."""
    found = [p for p in folder.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()
             and (p / "trainer_state.json").is_file()]
    return max(found, key=lambda p: int(p.name.split("-")[-1])) if found else None


def train(base: Path, prompts: list[tuple[str, str]], out: Path, final: Path, settings: GrpoSettings, *,
          log: Callable[[str], None]) -> dict[str, Any]:
    """GRPO from `base` on (prompt, reference answer) pairs; the final model and trainer state go to `final`."""
    import shutil

    resume = last_checkpoint(out)
    if resume is not None and int(resume.name.split("-")[-1]) >= settings.steps:
        # killed after the last save: the run is complete (transformers would train one step more on resume)
        log(f"resuming the GRPO run from {resume.name}: it had already finished")
        shutil.rmtree(final, ignore_errors=True)
        shutil.copytree(resume, final, ignore=shutil.ignore_patterns("optimizer.pt", "scheduler.pt", "rng_state*",
                                                                     "training_args.bin"))
        state = json.loads((final / "trainer_state.json").read_text(encoding="utf-8"))
        return {"train_seconds": 0.0, "steps": int(state.get("global_step", settings.steps))}
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class _Progress(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **_: Any) -> None:
            if logs and "reward" in logs:
                log(f"GRPO step {state.global_step}/{state.max_steps}: reward {logs['reward']:.3f}, "
                    f"kl {logs.get('kl', 0.0):.4f}, completion length {logs.get('completions/mean_length', 0):.0f}")

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": prompt}], "target": answer}
                                 for prompt, answer in prompts])
    config = GRPOConfig(
        output_dir=str(out), max_steps=settings.steps, per_device_train_batch_size=settings.prompts_per_step
        * settings.generations, num_generations=settings.generations,
        max_completion_length=settings.max_completion_tokens, learning_rate=settings.learning_rate,
        beta=settings.beta, temperature=settings.temperature, logging_steps=1, save_steps=settings.save_steps,
        save_total_limit=1, report_to=[], use_cpu=True, bf16=False, fp16=False, seed=settings.seed,
        data_seed=settings.seed, dataloader_num_workers=0, disable_tqdm=True, log_completions=False)
    trainer = GRPOTrainer(model=str(base), reward_funcs=[correctness_reward, format_reward], args=config,
                          train_dataset=dataset, callbacks=[_Progress()])
    trainer.remove_callback(PrinterCallback)  # the _Progress line replaces its raw dict per step
    if resume is not None:
        log(f"resuming the GRPO run from {resume.name}")
    output = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    final.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(final))
    trainer.state.save_to_json(str(final / "trainer_state.json"))
    return {"train_seconds": float(output.metrics.get("train_runtime", 0.0)), "steps": trainer.state.global_step}
