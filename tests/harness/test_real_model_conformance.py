"""`rlgate eval` against plain `lm_eval.simple_evaluate` on a real instruct model (SmolLM2-135M, Q4_1 GGUF).

Same tasks on the same local data (GSM8K, IFEval, MMLU-Pro math; the first documents of each),
same generation settings, the chat template the GGUF carries, batch size and seeds. Per-sample
prompts, responses, filtered answers and scores, and every task metric, must be identical; the
cached re-run must give the same folder without loading the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.real_model import require_real_gguf

pytest.importorskip("lm_eval")
pytest.importorskip("gguf")
pytestmark = pytest.mark.slow

LIMIT = 2
MAX_TOKENS = 24
BATCH = 4
SEED = 1234
TASKS = ("gsm8k", "ifeval", "mmlu_pro_math")
SAMPLE_KEYS = ("doc_id", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash", "prompt_hash",
               "target_hash")


def _data(shared_data: Path) -> dict[str, str]:
    return {"gsm8k": str(shared_data / "gsm8k" / "test.jsonl"),
            "ifeval": str(shared_data / "ifeval" / "input_data.jsonl"),
            "mmlu_pro_math": str(shared_data / "mmlu_pro" / "test.jsonl.gz")}


def write_contract(root: Path, data: dict[str, str]) -> Path:
    """The rlgate side: a suite over the local files and a greedy, chat-templated hf protocol."""
    root.mkdir(parents=True, exist_ok=True)
    suite = {"schema_version": 1, "name": "real_model", "tasks": [
        {"task": "gsm8k", "split": "test_public", "num_fewshot": 0, "data_files": data["gsm8k"]},
        {"task": "ifeval", "split": "test_public", "data_files": data["ifeval"]},
        {"task": "mmlu_pro_math", "split": "test_public", "num_fewshot": 0, "data_files": data["mmlu_pro_math"]}]}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    (root / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "real_model", "baseline": {"checkpoint": "x"},
        "protocol": {"backend": "hf", "chat_template": True,
                     "sampling": {"temperature": 0.0, "max_tokens": MAX_TOKENS, "seed": SEED},
                     "hf": {"device": "cpu", "dtype": "float32", "batch_size": BATCH}},
        "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    return root / "contract.yaml"


def plain_lm_eval(gguf: Path, data: dict[str, str], work: Path) -> tuple[dict[str, Any], Path]:
    """lm-eval alone: its own task YAMLs pointed at the same files by override YAMLs (lm-eval's --include_path),
    its results and samples written by its own EvaluationTracker, as `lm_eval --output_path --log_samples` does."""
    import lm_eval
    import lm_eval.tasks
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    base = Path(lm_eval.tasks.__file__).parent
    work.mkdir(parents=True, exist_ok=True)
    overrides = {
        "gsm8k": ("gsm8k/gsm8k.yaml", {"test": data["gsm8k"], "train": data["gsm8k"]}, 0),
        "ifeval": ("ifeval/ifeval.yaml", {"train": data["ifeval"]}, None),
        "mmlu_pro_math": ("mmlu_pro/mmlu_pro_math.yaml", {"test": data["mmlu_pro_math"],
                                                          "validation": data["mmlu_pro_math"]}, 0),
    }
    for task, (source, files, shots) in overrides.items():
        raw: dict[str, Any] = {"include": str(base / source), "task": task, "dataset_path": "json",
                               "dataset_name": None, "dataset_kwargs": {"data_files": files}}
        if shots is not None:
            raw["num_fewshot"] = shots
        (work / f"{task}.yaml").write_text(yaml.safe_dump(raw))
    out = lm_eval.simple_evaluate(
        model="hf", model_args={"pretrained": str(gguf.parent), "gguf_file": gguf.name, "dtype": "float32",
                                "device": "cpu", "batch_size": BATCH},
        tasks=list(TASKS), task_manager=TaskManager(include_path=str(work), include_defaults=False), limit=LIMIT,
        gen_kwargs={"max_gen_toks": MAX_TOKENS, "do_sample": False, "temperature": 0.0}, apply_chat_template=True,
        log_samples=True, random_seed=SEED, numpy_random_seed=SEED, torch_random_seed=SEED, fewshot_random_seed=SEED)
    assert out is not None
    tracker = EvaluationTracker(output_path=str(work / "out"))
    samples = out.pop("samples")
    tracker.save_results_aggregated(results=out, samples=samples)
    for name, task_samples in samples.items():
        tracker.save_results_samples(task_name=name, samples=task_samples)
    return json.loads(json.dumps(out, default=str)), work / "out"


def rlgate_samples(folder: Path, task: str) -> list[dict[str, Any]]:
    file = next(folder.rglob(f"samples_{task}_*.jsonl"))
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]


def _metrics(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if "_stderr" not in k and k != "alias"}


def _key(sample: dict[str, Any]) -> tuple[int, str]:
    return sample["doc_id"], sample["filter"]


def test_rlgate_eval_matches_plain_lm_eval_on_smollm2(tmp_path: Path, shared_data: Path) -> None:
    from typer.testing import CliRunner

    from rlgate.cli.app import app

    gguf = require_real_gguf()
    data = _data(shared_data)
    contract = write_contract(tmp_path / "contract", data)
    args = ["eval", str(contract), "--checkpoint", str(gguf), "--limit", str(LIMIT), "--cache", str(tmp_path / "cache")]
    first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "first")])
    assert first.exit_code == 0, first.output
    manifest = json.loads((tmp_path / "first" / "run_manifest.json").read_text())
    assert manifest["model_loaded"] and manifest["model_args"]["gguf_file"] == gguf.name
    assert any("GGUF checkpoint" in note for note in manifest["checkpoint_notes"])

    plain, plain_folder = plain_lm_eval(gguf, data, tmp_path / "plain")
    results = json.loads(next((tmp_path / "first").rglob("results_*.json")).read_text())
    for task in TASKS:
        ours = sorted(rlgate_samples(tmp_path / "first", task), key=_key)
        theirs = sorted(rlgate_samples(plain_folder, task), key=_key)
        assert len(ours) == len(theirs) >= LIMIT
        for a, b in zip(ours, theirs, strict=True):
            for key in SAMPLE_KEYS:
                assert a[key] == b[key], (task, a["doc_id"], key)
            for metric in a["metrics"]:
                assert a[metric] == b[metric], (task, a["doc_id"], metric)
        assert _metrics(results["results"][task]) == _metrics(plain["results"][task]), task
        # the chat template the GGUF carries was applied on both sides
        assert ours[0]["arguments"]["gen_args_0"]["arg_0"].startswith("<|im_start|>system")
        assert ours[0]["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == MAX_TOKENS
    assert any(s["resps"][0][0].strip() for s in rlgate_samples(tmp_path / "first", "gsm8k"))

    second = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "second")])
    assert second.exit_code == 0, second.output
    cached = json.loads((tmp_path / "second" / "run_manifest.json").read_text())
    assert cached["model_loaded"] is False and "model not loaded" in second.output
    assert all(t["cached"] == t["requests"] > 0 for t in cached["tasks"])
    for task in TASKS:
        strip = [{k: s[k] for k in SAMPLE_KEYS} for s in rlgate_samples(tmp_path / "first", task)]
        again = [{k: s[k] for k in SAMPLE_KEYS} for s in rlgate_samples(tmp_path / "second", task)]
        assert strip == again, task
