"""Build the demo: generated data, the demo contract, and two trained tiny checkpoints.

The baseline learns all three task formats but sees few word problems; the candidate continues
from it on word problems (with some of the other data replayed). Whether the candidate gains on
GSM8K without losing MMLU-Pro or IFEval is then measured by `rlgate check`, not assumed: the
decision comes from lm-eval's scores on held-out generated documents.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rlgate.demo import data as demo_data
from rlgate.demo import model as tiny

TEMPLATES = Path(__file__).parent / "templates"
BUILD_VERSION = 1


@dataclass(frozen=True)
class DemoSettings:
    """Sizes and training steps; the defaults finish in a few minutes on two CPU cores."""

    seed: int = 0
    gsm8k_test: int = 350
    gsm8k_train: int = 3000
    mmlu_per_category: int = 15
    ifeval_test: int = 120
    base_steps: int = 420
    candidate_steps: int = 360
    batch_size: int = 16
    lr: float = 3e-3
    base_math_share: float = 0.08
    replay_share: float = 0.3
    #: torch threads for training and generation. One: a model this small gains little from a second
    #: thread, and OpenMP threads that compete with other work on a two-core machine slow it down many-fold.
    threads: int = 1


@dataclass(frozen=True)
class DemoPaths:
    root: Path
    contract: Path
    baseline: Path
    candidate: Path
    data: Path


def render_templates(data_dir: str, checkpoints: str, suite_ref: str, schema: str, *,
                     contract_template: str = "contract.yaml", suite_template: str = "suite.yaml",
                     values: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(contract, suite) YAML text of a demo with its data, checkpoint, suite and schema references (and any
    other `{name}` in `values`) filled in."""
    suite = (TEMPLATES / suite_template).read_text(encoding="utf-8").replace("{data}", data_dir)
    contract = ((TEMPLATES / contract_template).read_text(encoding="utf-8").replace("{checkpoints}", checkpoints)
                .replace("{suite}", suite_ref).replace("{schema}", schema))
    for name, value in (values or {}).items():
        contract = contract.replace("{" + name + "}", value)
    return contract, suite


def write_contract(root: Path, data_dir: Path, checkpoints: Path, *, contract_template: str = "contract.yaml",
                   suite_template: str = "suite.yaml", values: Mapping[str, str] | None = None) -> Path:
    """A demo's contract.yaml and suite.yaml in `root`, with absolute data and checkpoint paths, and the contract
    JSON Schema beside them (its `$schema` points at that copy, so an editor checks it offline)."""
    from rlgate.contract.schema import json_schema_text

    contract, suite = render_templates(data_dir.as_posix(), checkpoints.as_posix(), "suite.yaml",
                                       "contract.v1.json",
                                       contract_template=contract_template, suite_template=suite_template,
                                       values=values)
    root.mkdir(parents=True, exist_ok=True)
    (root / "contract.v1.json").write_text(json_schema_text("contract"), encoding="utf-8")
    (root / "suite.yaml").write_text(suite, encoding="utf-8")
    (root / "contract.yaml").write_text(contract, encoding="utf-8")
    return root / "contract.yaml"


def render_pairs(dataset: demo_data.DemoData, folder: Path) -> dict[str, list[tuple[str, str]]]:
    """(prompt, response) training pairs whose prompts lm-eval itself renders from the training documents."""
    from rlgate.contract.loader import ResolvedTask
    from rlgate.contract.models import Protocol, TaskEntry
    from rlgate.harness.lmeval.tasks import load_suite

    files = {
        "gsm8k": demo_data.write_jsonl(folder / "gsm8k.jsonl", (e.row for e in dataset.gsm8k_train)),
        "mmlu_pro": demo_data.write_jsonl(folder / "mmlu_pro.jsonl", (e.row for e in dataset.mmlu_train)),
        "ifeval": demo_data.write_jsonl(folder / "ifeval.jsonl", (e.row for e in dataset.ifeval_train)),
    }
    answers: dict[str, dict[Any, str]] = {
        "gsm8k": {e.row["question"]: e.response for e in dataset.gsm8k_train},
        "mmlu_pro": {e.row["question_id"]: e.response for e in dataset.mmlu_train},
        "ifeval": {e.row["key"]: e.response for e in dataset.ifeval_train},
    }
    id_field = {"gsm8k": "question", "mmlu_pro": "question_id", "ifeval": "key"}
    tasks = [ResolvedTask(TaskEntry(task=name, split="train", num_fewshot=0), "demo-train", "1", "train",
                          "iteration", str(path), None, False) for name, path in files.items()]
    suite = load_suite(tasks, Protocol())
    pairs: dict[str, list[tuple[str, str]]] = {name: [] for name in files}
    for leaf, task in suite.leaves.items():
        family = suite.suite_task[leaf]
        task.build_all_requests(limit=None)
        for inst in task.instances:
            pairs[family].append((inst.args[0], answers[family][inst.doc[id_field[family]]]))
    return pairs


Pairs = dict[str, list[tuple[str, str]]]


def _mix(rng: random.Random, pairs: Pairs, shares: dict[str, float]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for family, share in shares.items():
        items = list(pairs[family])
        rng.shuffle(items)
        out += items[: max(1, int(len(items) * share))]
    return out


def build_checkpoints(settings: DemoSettings, pairs: dict[str, list[tuple[str, str]]], baseline_dir: Path,
                      candidate_dir: Path, log: Callable[[str], None]) -> dict[str, float]:
    """Train the tokenizer, the baseline, then the candidate from the baseline; save both."""
    import torch

    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    corpus = [p + r for family in pairs.values() for p, r in family[:1500]]
    tokenizer = tiny.train_tokenizer(corpus, baseline_dir / "tokenizer-build")
    config = tiny.TinyConfig(seed=settings.seed)
    model = tiny.new_model(tokenizer, config)
    log(f"training the baseline ({settings.base_steps} steps on all three formats, few word problems)")
    base_mix = _mix(rng, pairs, {"gsm8k": settings.base_math_share, "mmlu_pro": 1.0, "ifeval": 1.0})
    base = tiny.train(model, tokenizer, base_mix, steps=settings.base_steps, batch_size=settings.batch_size,
                      lr=settings.lr, seed=settings.seed, log=log)
    tiny.save(model, tokenizer, baseline_dir)
    log(f"training the candidate ({settings.candidate_steps} more steps on word problems, other data replayed)")
    cand_mix = _mix(rng, pairs, {"gsm8k": 1.0, "mmlu_pro": settings.replay_share, "ifeval": settings.replay_share})
    cand = tiny.train(model, tokenizer, cand_mix, steps=settings.candidate_steps, batch_size=settings.batch_size,
                      lr=settings.lr, seed=settings.seed + 1, log=log)
    tiny.save(model, tokenizer, candidate_dir)
    return {"baseline_loss": base["loss"], "candidate_loss": cand["loss"],
            "train_seconds": base["seconds"] + cand["seconds"]}


def build(root: Path, settings: DemoSettings | None = None, log: Callable[[str], None] = print) -> DemoPaths:
    """Everything `rlgate demo` needs under `root`; checkpoints built with the same settings are reused."""
    import shutil

    settings = settings or DemoSettings()
    root = root.resolve()
    data_dir, ckpt_dir = root / "data", root / "checkpoints"
    dataset = demo_data.generate(settings.seed, gsm8k_test=settings.gsm8k_test,
                                 mmlu_per_category=settings.mmlu_per_category, ifeval_test=settings.ifeval_test,
                                 gsm8k_train=settings.gsm8k_train)
    dataset.write(data_dir)
    contract = write_contract(root, data_dir, ckpt_dir)
    paths = DemoPaths(root, contract, ckpt_dir / "baseline", ckpt_dir / "candidate", data_dir)
    stamp = ckpt_dir / "build.json"
    rows = [e.row for part in (dataset.gsm8k_train, dataset.mmlu_train, dataset.ifeval_train) for e in part]
    data_digest = hashlib.sha256(json.dumps([rows, [e.response for e in dataset.ifeval_train]],
                                            sort_keys=True).encode()).hexdigest()
    wanted = {"version": BUILD_VERSION, "settings": asdict(settings), "data": data_digest}
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")).get("build") == wanted \
            and (paths.baseline / "config.json").is_file() and (paths.candidate / "config.json").is_file():
        log(f"reusing the demo checkpoints in {ckpt_dir}")
        return paths
    shutil.rmtree(ckpt_dir, ignore_errors=True)
    log("rendering training prompts with lm-eval")
    pairs = render_pairs(dataset, root / "train-data")
    stats = build_checkpoints(settings, pairs, paths.baseline, paths.candidate, log)
    shutil.rmtree(paths.baseline / "tokenizer-build", ignore_errors=True)
    stamp.write_text(json.dumps({"build": wanted, "stats": stats}, indent=2), encoding="utf-8")
    return paths
