"""`rlgate demo --vlm`: charts, two tiny LLaVA checkpoints, and the real `rlgate check` on them, offline.

The baseline learns the three answer formats (ChartQA's `Final Answer: X`, MMMU's option letter,
MathVista's `Final Answer: X`) on training charts. The candidate continues from it on MMMU-format
data with chart answers written as prose ("The value is X"), which lm-eval's chartqa scorer cannot
parse: its chart reading collapses the way an RL run that drifts from the answer format does.
Whether that shows is measured by `rlgate check` on held-out generated charts, not assumed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rlgate.app.check import CheckResult
from rlgate.demo import build as demo_build
from rlgate.demo import vlm_data
from rlgate.demo import vlm_model as tiny
from rlgate.demo.build import DemoPaths
from rlgate.harness.base import ProgressSink

BUILD_VERSION = 1


@dataclass(frozen=True)
class VlmDemoSettings:
    seed: int = 0
    test_charts: int = 20
    mathvista: int = 16
    train_charts: int = 24
    base_steps: int = 150
    candidate_steps: int = 40
    threads: int = 1


def write_contract(root: Path, data_dir: Path, checkpoints: Path) -> Path:
    """The VLM demo's contract.yaml and suite.yaml (templates vlm_contract.yaml, vlm_suite.yaml) in `root`."""
    return demo_build.write_contract(root, data_dir, checkpoints, contract_template="vlm_contract.yaml",
                                suite_template="vlm_suite.yaml")


def _chartqa_prompt(query: str) -> str:
    """The prompt lm-eval's chartqa task renders (its own doc_to_text template)."""
    from lm_eval.tasks._yaml_loader import load_yaml
    from lm_eval.utils import apply_template

    from rlgate.harness.lmeval.tasks import TASKS_DIR

    text = load_yaml(TASKS_DIR / "chartqa" / "chartqa.yaml", resolve_func=False)["doc_to_text"]
    return str(apply_template(text, {"query": query}))


def training_triples(folder: Path, seed: int, charts: int, *, prose_charts: bool) -> list[tiny.Triple]:
    """(image, prompt, response) for training charts; prose_charts writes chart answers without the marker."""
    from rlgate.harness.lmeval.task_files.mathvista import utils as mathvista

    rng = random.Random(seed + 1000)
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    out: list[tiny.Triple] = []
    for n in range(charts):
        chart = vlm_data.random_chart(rng)
        path = images / f"train_{n:04d}.png"
        vlm_data.draw(chart, path)
        for query, answer, _ in vlm_data.chart_questions(chart, rng):
            response = f"The value is {answer}" if prose_charts else vlm_data.reference_response(answer)
            out.append(tiny.Triple(path, _chartqa_prompt(query), response))
        row = vlm_data.mmmu_row(chart, "", "Math", n, rng)
        from lm_eval.tasks.mmmu import utils as mmmu  # lm-eval's own prompt

        out.append(tiny.Triple(path, mmmu.doc_to_text(row), row["answer"]))
        mv = vlm_data.mathvista_row(chart, "", n, rng)
        out.append(tiny.Triple(path, mathvista.doc_to_text(mv), vlm_data.reference_response(mv["answer"])))
    return out


def build(root: Path, settings: VlmDemoSettings | None = None, log: Callable[[str], None] = print) -> DemoPaths:
    """Data, contract and the two checkpoints under `root` (reused when the settings have not changed)."""
    settings = settings or VlmDemoSettings()
    data, ckpts = root / "data", root / "checkpoints"
    paths = DemoPaths(root, write_contract(root, data, ckpts), ckpts / "baseline", ckpts / "candidate", data)
    stamp = root / "build.json"
    wanted = {"version": BUILD_VERSION, "settings": settings.__dict__}
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == wanted and paths.candidate.is_dir():
        return paths
    log("drawing charts (ChartQA, MMMU and MathVista formats)")
    vlm_data.write_vlm_data(data, seed=settings.seed, chartqa_charts=settings.test_charts, mmmu_per_subject=1,
                            mathvista=settings.mathvista)
    base_triples = training_triples(root / "train", settings.seed, settings.train_charts, prose_charts=False)
    cand_triples = training_triples(root / "train", settings.seed, settings.train_charts, prose_charts=True)
    processor = tiny.build_processor([t.prompt + " " + t.response for t in base_triples + cand_triples],
                                     tiny.TinyVlmConfig(seed=settings.seed))
    model = tiny.new_model(processor, tiny.TinyVlmConfig(seed=settings.seed))
    log(f"training the baseline ({settings.base_steps} steps)")
    tiny.train(model, processor, base_triples, steps=settings.base_steps, seed=settings.seed)
    tiny.save(model, processor, paths.baseline)
    log(f"training the candidate ({settings.candidate_steps} more steps, chart answers drift to prose)")
    tiny.train(model, processor, cand_triples, steps=settings.candidate_steps, seed=settings.seed + 1)
    tiny.save(model, processor, paths.candidate)
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return paths


def run_vlm_demo(out: Path, *, settings: VlmDemoSettings | None = None, progress: ProgressSink | None = None,
                 log: Callable[[str], None] = print) -> tuple[DemoPaths, CheckResult]:
    """Build what is missing under `out`, then `rlgate check` the candidate into `out/report`."""
    from rlgate.app.check import check
    from rlgate.demo.run import check_requirements, offline_environment

    check_requirements()
    offline_environment()
    settings = settings or VlmDemoSettings()
    import torch

    torch.set_num_threads(settings.threads)
    paths = build(out, settings, log=log)
    result = check(paths.contract, str(paths.candidate), paths.root / "report", cache_dir=paths.root / "cache",
                   progress=progress)
    return paths, result
