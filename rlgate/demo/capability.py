"""`rlgate demo --capability`: the math-RLVR and code-RL suites on vendored documents, two tiny checkpoints, and
the real `rlgate check` on them, offline on CPU.

The documents are a few real AIME 2024 / 2025, MATH-500, HumanEval+ and MBPP+ problems (capability_data,
NOTICE.md). Both checkpoints are trained on those same documents, rendered exactly as lm-eval renders them: the
baseline on wrong final answers and on programs that pass the prompt's examples but not the hidden tests, the
candidate on the right answers and solutions. So the candidate memorises the test set: the demo shows the shape of
these gates (avg@n per problem, maj@n, pass@n, code run in the sandbox, badcases naming public-pass-hidden-fail,
the too-small warnings of five-problem tasks), not a capability. Decisions come from lm-eval's scores of what the
checkpoints generate at temperature 0.6.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlgate.demo import build as demo_build
from rlgate.demo.build import DemoPaths
from rlgate.harness.base import ProgressSink
from rlgate.orchestrate import CheckResult

BUILD_VERSION = 1
DATA = Path(__file__).parent / "capability_data"
FILES = ("aime24.jsonl", "aime25.jsonl", "math500.jsonl", "humanevalplus.jsonl", "mbppplus.jsonl", "NOTICE.md")
#: programs that pass the examples each prompt shows and fail the hidden tests (what the baseline learns)
_OVERFIT_HE = {"HumanEval/0": "    return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))\n",
               "HumanEval/2": "    return 0.5\n", "HumanEval/3": "    return any(op < -3 for op in operations)\n"}
_OVERFIT_MBPP = {11: "def remove_Occ(s, ch):\n    return {'hello': 'heo', 'abcda': 'bcd', 'PHP': 'H'}[s]",
                 14: "def find_Volume(l, b, h):\n    return {10: 240, 3: 6, 1: 1}[l]",
                 17: "def square_perimeter(a):\n    return {10: 40, 5: 20, 4: 16}[a]"}


@dataclass(frozen=True)
class CapabilityDemoSettings:
    """Sizes and training steps; the defaults train and generate in a few minutes on two CPU cores."""

    seed: int = 0
    n: int = 4
    steps: int = 160
    batch_size: int = 8
    threads: int = 1


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line]


def _mbpp_prompt(row: dict[str, Any]) -> str:
    """mbpp_plus's doc_to_text (lm-eval 0.4.13), 0-shot."""
    tests = row["test_list"]
    return (f"You are an expert Python programmer, and here is your task: {row['prompt']} Your code should pass "
            f"these tests:\n\n{tests[0]}\n{tests[1]}\n{tests[2]}\n[BEGIN]\n")


def training_pairs(*, right: bool) -> list[tuple[str, str]]:
    """(prompt, response) as lm-eval renders each vendored document: right answers, or the baseline's wrong ones."""
    pairs: list[tuple[str, str]] = []
    for row in _rows("aime24.jsonl"):
        pairs.append((f"Question: {row['Problem']}\nAnswer:", f" $\\boxed{{{row['Answer'] if right else 7}}}$"))
    for row in _rows("aime25.jsonl"):
        pairs.append((f"Question: {row['problem']}\nAnswer:", f" $\\boxed{{{row['answer'] if right else 3}}}$"))
    for row in _rows("math500.jsonl"):
        answer = row["answer"] if right else "0"
        pairs.append((f"Problem:\n{row['problem']}\n\nSolution:",
                      f" Final Answer: The final answer is ${answer}$. I hope it is correct."))
    for row in _rows("humanevalplus.jsonl"):
        pairs.append((row["prompt"], row["canonical_solution"] if right else _OVERFIT_HE[row["task_id"]]))
    for row in _rows("mbppplus.jsonl"):
        code = row["code"] if right else _OVERFIT_MBPP[row["task_id"]]
        pairs.append((_mbpp_prompt(row), code + "\n[DONE]"))
    return pairs


def build(root: Path, settings: CapabilityDemoSettings | None = None,
          log: Callable[[str], None] = print) -> DemoPaths:
    """Data, contract and the two checkpoints under `root` (reused when the settings have not changed)."""
    from rlgate.demo import model as tiny

    settings = settings or CapabilityDemoSettings()
    data, ckpts = root / "data", root / "checkpoints"
    data.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(DATA / name, data / name)
    contract = demo_build.write_contract(root, data, ckpts, contract_template="capability_contract.yaml",
                                         suite_template="capability_suite.yaml", values={"n": str(settings.n)})
    paths = DemoPaths(root, contract, ckpts / "baseline", ckpts / "candidate", data)
    stamp = root / "build.json"
    wanted = {"version": BUILD_VERSION, "settings": settings.__dict__}
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == wanted and paths.candidate.is_dir():
        return paths
    wrong, right = training_pairs(right=False), training_pairs(right=True)
    tokenizer = tiny.train_tokenizer([p + r for p, r in wrong + right], root / "tokenizer-build", vocab_size=1024)
    for folder, pairs, what in ((paths.baseline, wrong, "wrong answers, programs fit to the shown examples"),
                                (paths.candidate, right, "the right answers and solutions")):
        log(f"training the {folder.name} on {what} ({settings.steps} steps)")
        model = tiny.new_model(tokenizer, tiny.TinyConfig(seed=settings.seed, vocab_size=1024, max_positions=1024))
        tiny.train(model, tokenizer, pairs, steps=settings.steps, batch_size=settings.batch_size, seed=settings.seed,
                   max_len=768)
        tiny.save(model, tokenizer, folder)
    shutil.rmtree(root / "tokenizer-build", ignore_errors=True)
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return paths


def run_capability_demo(out: Path, *, settings: CapabilityDemoSettings | None = None,
                        progress: ProgressSink | None = None,
                        log: Callable[[str], None] = print) -> tuple[DemoPaths, CheckResult]:
    """Build what is missing under `out`, then `rlgate check` the candidate into `out/report`."""
    from rlgate.demo.run import check_requirements, offline_environment
    from rlgate.orchestrate import check

    check_requirements()
    offline_environment()
    settings = settings or CapabilityDemoSettings()
    import torch

    torch.set_num_threads(settings.threads)
    paths = build(out, settings, log=log)
    result = check(paths.contract, str(paths.candidate), paths.root / "report", cache_dir=paths.root / "cache",
                   progress=progress)
    return paths, result
