"""OpenCompass's own per-sample verdicts (results/<model>/<abbr>.json `details`) read as rlgate results.

Built from the real OpenCompass 0.5.4 run folder in tests/fixtures/opencompass_tiny_gsm8k: its `details`
as OpenCompass wrote it, and the other forms OpenCompass's source writes (older evaluators' scalar
`correct`, `format_details`' `{"type": "GEN", "<i>": ...}`, `n` replicas), each rewritten from the same
20 real entries; every form the reader cannot turn into a verdict per example is one located error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.harness import harness_for, read_results

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "opencompass_tiny_gsm8k"
runner = CliRunner()


def _copy(tmp_path: Path, name: str = "run") -> Path:
    target = tmp_path / name
    shutil.copytree(RUN, target)
    return target


def _results(run: Path) -> Path:
    return run / "results" / "tiny-hf" / "gsm8k.json"


def _rewrite(run: Path, change: Any) -> Path:
    path = _results(run)
    data = json.loads(path.read_text())
    path.write_text(json.dumps(change(data)))
    return path


def _right(data: dict[str, Any], ids: set[int]) -> dict[str, Any]:
    for i, entry in enumerate(data["details"]):
        entry["correct"] = [i in ids]
    data["accuracy"] = 100 * len(ids) / len(data["details"])
    return data


def test_the_real_run_is_read_to_opencompass_s_own_numbers() -> None:
    assert harness_for(RUN).name == "opencompass"
    run = read_results(RUN)
    task = run.tasks["gsm8k"]
    assert run.provenance.harness == "opencompass" and run.provenance.model == "tiny-hf"
    assert task.metrics == {"none": {"accuracy": 0.0}}  # the file's own "accuracy": 0.0 (percent)
    assert task.protocol.version == "gsm8k@e520fb"  # the summarizer's config hash
    assert [s.doc_id for s in task.samples] == list(range(20)) and task.samples[0].target == "18"
    assert task.samples[0].responses == ["11111111111111111111111"]
    for path in (RUN / "results", RUN / "results" / "tiny-hf", _results(RUN)):
        assert read_results(path).tasks["gsm8k"].n_samples == 20


def test_verdicts_are_opencompass_s_and_the_mean_must_match_its_accuracy(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    _rewrite(run, lambda d: _right(d, {1, 4, 9}))
    task = read_results(run).tasks["gsm8k"]
    assert [s.doc_id for s in task.samples if s.scores["none"]["accuracy"] == 1.0] == [1, 4, 9]
    assert task.metrics["none"]["accuracy"] == pytest.approx(0.15)
    _rewrite(run, lambda d: {**d, "accuracy": 20.0})
    with pytest.raises(InputError) as caught:
        read_results(run)
    assert "average 15.0000 %" in str(caught.value) and caught.value.field == "accuracy"


def test_older_and_formatted_details_forms(tmp_path: Path) -> None:
    run = _copy(tmp_path)

    def scalar(data: dict[str, Any]) -> dict[str, Any]:  # evaluators before 0.4: {"<i>": {pred, answer, correct}}
        data = _right(data, {2})
        data["details"] = {str(i): {"pred": e["pred"][0], "answer": e["answer"][0], "correct": e["correct"][0]}
                           for i, e in enumerate(data["details"])}
        return data

    _rewrite(run, scalar)
    assert [s.doc_id for s in read_results(run).tasks["gsm8k"].samples if s.scores["none"]["accuracy"]] == [2]

    def formatted(data: dict[str, Any]) -> dict[str, Any]:  # OpenICLEvalTask.format_details
        rows = {str(i): {"prompt": "q", "origin_prediction": e["pred"], "predictions": e["pred"],
                         "references": e["answer"], "correct": i == 3} for i, e in enumerate(data["details"])}
        return {"accuracy": 5.0, "details": {"type": "GEN", **rows}}

    run = _copy(tmp_path, "formatted")
    _rewrite(run, formatted)
    task = read_results(run).tasks["gsm8k"]
    assert task.n_samples == 20 and [s.doc_id for s in task.samples if s.scores["none"]["accuracy"]] == [3]


def test_replicas_are_one_sample_each(tmp_path: Path) -> None:
    run = _copy(tmp_path)

    def replicas(data: dict[str, Any]) -> dict[str, Any]:  # dataset n=2: one entry per example, a verdict per replica
        for i, entry in enumerate(data["details"]):
            entry["correct"] = [i == 0, i in (0, 5)]
            entry["pred"] = entry["pred"] * 2
        data.pop("accuracy")
        data["accuracy (2 runs average)"] = 100 * 3 / 40
        return data

    _rewrite(run, replicas)
    task = read_results(run).tasks["gsm8k"]
    assert task.n_samples == 20
    assert {s.doc_id: s.scores["none"]["accuracy"] for s in task.samples if s.scores["none"]["accuracy"]} == {
        0: 1.0, 5: 0.5}
    assert task.samples[0].extra == {"opencompass_replicas": 2}


@pytest.mark.parametrize(("change", "needle", "field"), [
    (lambda d: {"accuracy": 0.0}, "no per-sample 'details'", "details"),
    (lambda d: {**d, "details": [{**e, "correct": None} for e in d["details"]]}, "not true/false",
     "details.0.correct"),
    (lambda d: {**d, "details": [{k: v for k, v in e.items() if k != "correct"} for e in d["details"]]},
     "records no per-sample verdict", "details.0"),
    (lambda d: {**d, "details": "all right"}, "not a list or mapping", "details"),
    (lambda d: {**d, "details": []}, "no examples", "details"),
    (lambda d: {**d, "details": d["details"] + d["details"][:1]}, "appears twice", "details"),
])
def test_a_results_file_without_a_verdict_per_example_is_one_located_error(
        tmp_path: Path, change: Any, needle: str, field: str) -> None:
    run = _copy(tmp_path)
    path = _rewrite(run, change)
    with pytest.raises(InputError) as caught:
        read_results(run)
    assert needle in str(caught.value) and caught.value.file == path and caught.value.field == field
    assert caught.value.fix


def test_a_run_of_two_models_names_them(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    shutil.copytree(run / "results" / "tiny-hf", run / "results" / "other-hf")
    with pytest.raises(InputError) as caught:
        read_results(run)
    assert "2 models' results (other-hf, tiny-hf)" in str(caught.value) and "results/<model>" in caught.value.fix


def _contract(tmp_path: Path) -> Path:
    contract = {
        "schema_version": 1, "name": "oc-own", "baseline": {"checkpoint": "base"},
        "splits": {"test_public": {"visibility": "nightly"}},
        "suites": [{"schema_version": 1, "name": "oc", "tasks": [
            {"task": "gsm8k", "harness": "opencompass", "split": "test_public"}]}],
        "gates": {"primary": {"metric": "gsm8k/accuracy", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    return path


def test_gated_on_opencompass_s_own_verdicts(tmp_path: Path) -> None:
    base, cand = _copy(tmp_path, "base"), _copy(tmp_path, "cand")
    _rewrite(base, lambda d: _right(d, set(range(10))))
    _rewrite(cand, lambda d: _right(d, set(range(2))))
    out = tmp_path / "gate"
    result = runner.invoke(app, ["gate", str(_contract(tmp_path)), "--baseline", str(base), "--candidate", str(cand),
                                 "--out", str(out)])
    decision = json.loads((out / "decision.json").read_text())
    gate = next(g for g in decision["gates"] if g["name"] == "gsm8k/accuracy")
    assert (gate["baseline"], gate["candidate"], gate["n"]) == (0.5, 0.1, 20), result.output
    assert gate["details"]["baseline_only_right"] == 8 and gate["verdict"] == "fail"
    assert decision["decision"] == "block" and result.exit_code != 0
