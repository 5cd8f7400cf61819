"""Tiny local checkpoints for the demo and the tests: a BPE tokenizer trained with `tokenizers`, a small
Llama-architecture model from `transformers`, and a short CPU training loop.

The model is trained on (prompt, response) pairs whose prompts are rendered exactly as lm-eval
renders the demo tasks' documents, with the loss on response tokens only. Saved with
`save_pretrained`, so lm-eval's `hf` backend loads it like any Hub model.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EOS = "<|endoftext|>"
PAD = "<|pad|>"


@dataclass(frozen=True)
class TinyConfig:
    """Model size and training settings; the defaults train in about a minute on two CPU cores."""

    vocab_size: int = 640
    hidden_size: int = 128
    layers: int = 2
    heads: int = 4
    intermediate_size: int = 384
    max_positions: int = 512
    seed: int = 0


def train_tokenizer(texts: Sequence[str], folder: Path, vocab_size: int = 640) -> Any:
    """Byte-level BPE with single-digit tokens (so arithmetic is learnable), saved as a fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS, PAD],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=EOS, bos_token=EOS, pad_token=PAD,
                                   unk_token=None, model_max_length=512)
    folder.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(folder))
    return fast


def new_model(tokenizer: Any, config: TinyConfig) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(config.seed)
    model_config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=config.hidden_size, intermediate_size=config.intermediate_size,
        num_hidden_layers=config.layers, num_attention_heads=config.heads, num_key_value_heads=config.heads,
        max_position_embeddings=config.max_positions, tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaForCausalLM(model_config)


def _encode(tokenizer: Any, prompt: str, response: str, max_len: int) -> tuple[list[int], list[int]]:
    """Token ids and labels (-100 on the prompt) for prompt+response+EOS, truncated from the left."""
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    r_ids = tokenizer(response, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    ids = (p_ids + r_ids)[-max_len:]
    labels = ([-100] * len(p_ids) + r_ids)[-max_len:]
    return ids, labels


def train(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]], *, steps: int, batch_size: int = 16,
          lr: float = 3e-3, seed: int = 0, max_len: int = 384,
          log: Callable[[str], None] | None = None) -> dict[str, float]:
    """Train on (prompt, response) pairs with AdamW and cosine decay; returns the final mean loss."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    encoded = [_encode(tokenizer, p, r, max_len) for p, r in pairs]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    model.train()
    started, recent = time.monotonic(), list[float]()
    pad = tokenizer.pad_token_id
    for step in range(steps):
        batch = [encoded[rng.randrange(len(encoded))] for _ in range(batch_size)]
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((batch_size, width), pad, dtype=torch.long)
        labels = torch.full((batch_size, width), -100, dtype=torch.long)
        mask = torch.zeros((batch_size, width), dtype=torch.long)
        for row, (ids, lab) in enumerate(batch):  # right padding: positions start at 0 for every row
            input_ids[row, : len(ids)] = torch.tensor(ids)
            labels[row, : len(lab)] = torch.tensor(lab)
            mask[row, : len(ids)] = 1
        for group in optimizer.param_groups:
            group["lr"] = lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / max(steps, 1))))
        loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        recent = [*recent[-49:], float(loss.detach())]
        if log and (step + 1) % max(steps // 5, 1) == 0:
            log(f"step {step + 1}/{steps}  loss {sum(recent) / len(recent):.3f}")
    model.eval()
    return {"loss": sum(recent) / max(len(recent), 1), "seconds": time.monotonic() - started}


def save(model: Any, tokenizer: Any, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(str(folder))
    return folder


def build_tiny_checkpoint(folder: Path, *, steps: int = 40, seed: int = 0, max_positions: int = 1024) -> Path:
    """A small checkpoint trained briefly on generated GSM8K-format problems (for tests and benchmarks).

    It answers in the `... #### N` format and stops; what it answers is not meant to be right.
    """
    from rlgate.demo import data

    generated = data.generate(seed, gsm8k_test=20, mmlu_per_category=2, ifeval_test=20, train_scale=10)
    pairs = [(f"Question: {e.row['question']}\nAnswer:", e.response) for e in generated.gsm8k_train]
    pairs += [(e.row["prompt"], e.response) for e in generated.ifeval_train]
    tokenizer = train_tokenizer([p + r for p, r in pairs], folder / "tokenizer-build")
    model = new_model(tokenizer, TinyConfig(seed=seed, max_positions=max_positions))
    train(model, tokenizer, pairs, steps=steps, seed=seed)
    save(model, tokenizer, folder)
    import shutil

    shutil.rmtree(folder / "tokenizer-build", ignore_errors=True)
    return folder


def load(folder: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(str(folder)), AutoTokenizer.from_pretrained(str(folder))
