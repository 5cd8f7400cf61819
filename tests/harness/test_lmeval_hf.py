"""The hf backend end to end on a tiny local checkpoint over real GSM8K, MMLU-Pro and IFEval slices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate.app.runs import check_checkpoint, evaluate, select_tasks
from rlgate.harness.vocabulary import load_contract

pytest.importorskip("lm_eval")


class CountingProgress:
    def __init__(self) -> None:
        self.started: dict[str, tuple[int, int]] = {}
        self.advanced_by: dict[str, int] = {}
        self.messages: list[str] = []

    def task_started(self, task: str, total: int, cached: int) -> None:
        self.started[task] = (total, cached)

    def advanced(self, task: str, count: int) -> None:
        self.advanced_by[task] = self.advanced_by.get(task, 0) + count

    def task_finished(self, task: str) -> None:
        return None

    def message(self, text: str) -> None:
        self.messages.append(text)


@pytest.fixture(scope="module")
def real_slices(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A contract over the real data (2 documents per task: 2 GSM8K, 28 MMLU-Pro over 14 subjects, 2 IFEval)."""
    root = tmp_path_factory.mktemp("hf-run")
    suite = {"schema_version": 1, "name": "real_slices", "tasks": [
        {"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
         "data_files": str(shared_data / "gsm8k/test.jsonl")},
        {"task": "mmlu_pro", "split": "test_public", "num_fewshot": 0,
         "data_files": str(shared_data / "mmlu_pro/test.jsonl.gz")},
        {"task": "ifeval", "split": "test_public", "data_files": str(shared_data / "ifeval/input_data.jsonl")},
    ]}
    import yaml

    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    (root / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "real", "baseline": {"checkpoint": "x"},
        "protocol": {"backend": "hf", "limit": 2, "sampling": {"max_tokens": 12},
                     "hf": {"device": "cpu", "dtype": "float32", "batch_size": 8}},
        "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    return {"root": root, "contract": root / "contract.yaml"}


def test_hf_backend_runs_real_tasks_then_resumes_entirely_from_cache(real_slices: dict, tiny_checkpoint: Path,  # type: ignore[type-arg]
                                                                    tmp_path: Path) -> None:
    from rlgate.harness.lmeval.folder import read_lmeval_folder

    resolved = load_contract(real_slices["contract"])
    tasks = select_tasks(resolved, None, release_gate=False)
    cache = tmp_path / "cache"
    info = check_checkpoint(resolved, str(tiny_checkpoint), cache_dir=cache)
    progress = CountingProgress()
    first = evaluate(resolved, tasks, tmp_path / "run1", cache_dir=cache, checkpoint=info, progress=progress)
    assert first.model_loaded
    manifest = first.manifest
    by_task = {t.task: t for t in manifest.tasks}
    assert set(by_task) == {"gsm8k", "ifeval", *(f"mmlu_pro_{s}" for s in (
        "biology", "business", "chemistry", "computer_science", "economics", "engineering", "health", "history",
        "law", "math", "other", "philosophy", "physics", "psychology"))}
    assert all(t.documents == 2 and t.requests == 2 and t.generated == 2 and t.cached == 0 for t in by_task.values())
    assert by_task["gsm8k"].tokens_in and by_task["gsm8k"].tokens_out and by_task["gsm8k"].wall_time_s > 0
    assert manifest.checkpoint_fingerprint == info.fingerprint and manifest.library_versions["lm_eval"] == "0.4.13"
    assert progress.started["gsm8k"] == (2, 0) and progress.advanced_by["gsm8k"] == 2

    run = read_lmeval_folder(tmp_path / "run1")  # the lm-eval folder reads like any lm-eval run
    assert run.tasks["gsm8k"].value("exact_match", "flexible-extract") is not None
    assert len(run.tasks["ifeval"].samples) == 2 and run.groups["mmlu_pro"]
    results = json.loads(first.results_file.read_text())
    assert results["config"]["model"] == "hf" and results["n-samples"]["gsm8k"]["effective"] == 2

    second = evaluate(resolved, tasks, tmp_path / "run2", cache_dir=cache, checkpoint=info, progress=CountingProgress())
    assert not second.model_loaded
    assert all(t.cached == 2 and t.generated == 0 for t in second.manifest.tasks)
    again = json.loads(second.results_file.read_text())
    assert again["results"] == results["results"]
    first_samples = sorted(first.results_file.parent.glob("samples_gsm8k_*.jsonl"))[0].read_text()
    second_samples = sorted(second.results_file.parent.glob("samples_gsm8k_*.jsonl"))[0].read_text()
    assert [json.loads(x)["resps"] for x in first_samples.splitlines()] == \
        [json.loads(x)["resps"] for x in second_samples.splitlines()]


def test_a_rerun_into_the_same_folder_replaces_the_previous_files(real_slices: dict, tiny_checkpoint: Path,  # type: ignore[type-arg]
                                                                 tmp_path: Path) -> None:
    resolved = load_contract(real_slices["contract"])
    tasks = [t for t in select_tasks(resolved, None, release_gate=False) if t.name == "gsm8k"]
    cache = tmp_path / "cache"
    info = check_checkpoint(resolved, str(tiny_checkpoint), cache_dir=cache)
    for _ in range(2):
        out = evaluate(resolved, tasks, tmp_path / "run", cache_dir=cache, checkpoint=info)
    assert len(list((tmp_path / "run").rglob("results_*.json"))) == 1
    assert len(list((tmp_path / "run").rglob("samples_gsm8k_*.jsonl"))) == 1
    assert out.results_file.exists()


def test_chat_template_on_a_tokenizer_without_one_exits_2_naming_the_field(tiny_checkpoint: Path, tmp_path: Path,
                                                                           shared_data: Path) -> None:
    """protocol.chat_template: true with a template-less tokenizer: one located error, no traceback."""
    import yaml
    from typer.testing import CliRunner

    from rlgate.cli.app import app

    assert "chat_template" not in json.loads((tiny_checkpoint / "tokenizer_config.json").read_text())
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "s", "tasks": [
        {"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
         "data_files": str(shared_data / "gsm8k/test.jsonl")}]}))
    (tmp_path / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "chat", "baseline": {"checkpoint": "x"},
        "protocol": {"backend": "hf", "limit": 1, "chat_template": True, "sampling": {"max_tokens": 4},
                     "hf": {"device": "cpu", "dtype": "float32"}},
        "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    result = CliRunner().invoke(app, ["eval", str(tmp_path / "contract.yaml"), "--checkpoint", str(tiny_checkpoint),
                                      "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 2, result.output
    assert "protocol.chat_template" in result.output and "Traceback" not in result.output
