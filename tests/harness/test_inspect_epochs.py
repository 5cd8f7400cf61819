"""Epochs are not independent evidence (issue 33), from real inspect-ai logs written by scripted mockllm policies.

40 samples, `epochs=4`; each policy answers a sample the same way in every epoch, and the candidate is right
on 3 more samples than the baseline. Pairing (sample, epoch) saw 160 pairs with 12 one-way discordant ones
(p 0.0002, RELEASE); over samples it is 3 of 40 (exact one-sided p 0.125): research_only, primary not shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app

SAMPLES, EPOCHS = 40, 4
BASELINE_RIGHT = set(range(20))
CANDIDATE_RIGHT = set(range(23))


def _policy(right: set[int]) -> Any:
    """mockllm `custom_outputs`: the right answer for the samples in `right`, a wrong one otherwise."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def next_output(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
        sample = int(next(m for m in messages if m.role == "user").text.split()[-1])
        answer = f"key-{sample}" if sample in right else "no idea"
        output = ModelOutput.from_content(model="mockllm/model", content=answer)
        output.usage = ModelUsage(input_tokens=5, output_tokens=3, total_tokens=8)
        return output

    return next_output


def _log(folder: Path, right: set[int]) -> Path:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    task = Task(dataset=[Sample(id=i, input=f"read the value of key {i}", target=f"key-{i}") for i in range(SAMPLES)],
                solver=generate(), scorer=includes(), name="kvops", epochs=EPOCHS)
    model = get_model("mockllm/model", custom_outputs=_policy(right))
    [log] = inspect_eval(task, model=model, log_dir=str(folder), display="none")
    assert log.status == "success" and len(log.samples or []) == SAMPLES * EPOCHS
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("epochs")
    return {"baseline": _log(root / "base", BASELINE_RIGHT), "candidate": _log(root / "cand", CANDIDATE_RIGHT)}


def _gate(runs: dict[str, Path], tmp_path: Path, gates: dict[str, Any],
          *extra: str) -> tuple[int, str, dict[str, Any]]:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(
        {"schema_version": 1, "name": "s", "tasks": [{"task": "kvops", "split": "test_public", "harness": "inspect"}]}))
    contract = {"schema_version": 1, "name": "c", "baseline": {"checkpoint": "mockllm/model"},
                "protocol": {"sampling": {"n": EPOCHS}, "sequential": {"looks": 4, "min_samples": 10}},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"], "gates": gates}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(contract))
    result = CliRunner().invoke(app, ["gate", str(tmp_path / "c.yaml"), "--candidate", str(runs["candidate"]),
                                      "--baseline", str(runs["baseline"]), "--out", str(tmp_path / "out"), *extra])
    return result.exit_code, result.output, json.loads((tmp_path / "out" / "decision.json").read_text())


def test_three_more_samples_over_four_epochs_is_not_a_release(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out, decision = _gate(runs, tmp_path, {"primary": {"metric": "kvops/task_success", "min_delta": 0.0}})
    [gate] = decision["gates"]
    assert (gate["baseline"], gate["candidate"]) == (pytest.approx(0.5), pytest.approx(0.575))
    assert gate["n"] == SAMPLES and gate["p_value"] == pytest.approx(0.125)  # exact McNemar over 40 samples
    assert gate["details"]["candidate_only_right"] == 3 and gate["details"]["baseline_only_right"] == 0
    units = gate["details"]["units"]
    assert units["records"] == SAMPLES * EPOCHS and units["epochs_per_sample"] == str(EPOCHS)
    assert units["agreement_baseline"] == units["agreement_candidate"] == 1.0  # the epochs add nothing
    assert gate["verdict"] == "fail" and decision["decision"] == "research_only" and code != 0
    assert "40×4" in out and "p=0.125" in out
    html = (tmp_path / "out" / "report.html").read_text()
    assert "40 samples × 4 epochs" in html and "epochs agree: baseline 100%, candidate 100%" in html
    assert "n = 40 samples × 4 epochs" in (tmp_path / "out" / "report.md").read_text()
    assert "- kvops: 40 samples paired × 4 epochs (160 records)" in (tmp_path / "out" / "summary.md").read_text()


def test_hard_gate_counts_samples_not_epochs(runs: dict[str, Path], tmp_path: Path) -> None:
    _, _, decision = _gate(runs, tmp_path, {"hard": [{"metric": "kvops/task_success", "min": 0.5}]})
    [gate] = decision["gates"]
    assert gate["verdict"] == "pass" and gate["n"] == SAMPLES and gate["details"]["units"]["records"] == 160


def test_sequential_replay_orders_and_counts_samples_not_epochs(runs: dict[str, Path], tmp_path: Path) -> None:
    code, out, decision = _gate(runs, tmp_path, {"primary": {"metric": "kvops/task_success", "min_delta": 0.0}},
                                "--sequential")
    replayed = decision["sequential"]
    assert decision["decision"] == replayed["decision_at_stop"] == "research_only" and code != 0
    assert replayed["documents_total"] == SAMPLES and replayed["epochs_per_sample"] == str(EPOCHS)
    assert [look["documents"] for look in replayed["looks"]] == [10, 20, 30, 40][:len(replayed["looks"])]
    assert f"/{SAMPLES} samples (x{EPOCHS} epochs, averaged per sample)" in out
    assert f"paired samples × {EPOCHS} epochs" in (tmp_path / "out" / "report.md").read_text()
