"""SWE-bench harness reports (summary JSON and per-instance report.json) imported as rlgate results.

The files are written here in the shape `swebench.harness.reporting.make_run_report` and
`swebench.harness.grading.get_eval_report` give them (SWE-bench main, schema_version 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.harness import harness_for, read_results

runner = CliRunner()
RUN_ID = "nightly"
MODEL = "org/agent-7b"


def summary(resolved: list[str], unresolved: list[str], error: list[str] = (), empty: list[str] = (),  # type: ignore[assignment]
            incomplete: list[str] = ()) -> dict[str, object]:  # type: ignore[assignment]
    """A run summary as make_run_report writes it (every dataset instance in exactly one status list)."""
    submitted = sorted([*resolved, *unresolved, *error, *empty])
    completed = sorted([*resolved, *unresolved])
    return {"total_instances": len(submitted) + len(incomplete), "submitted_instances": len(submitted),
            "completed_instances": len(completed), "resolved_instances": len(resolved),
            "unresolved_instances": len(unresolved), "infra_failure_instances": len(error),
            "ambiguous_failure_instances": 0, "empty_patch_instances": len(empty), "error_instances": len(error),
            "completed_ids": completed, "incomplete_ids": sorted(incomplete), "empty_patch_ids": sorted(empty),
            "submitted_ids": submitted, "resolved_ids": sorted(resolved), "unresolved_ids": sorted(unresolved),
            "infra_failure_ids": sorted(error), "ambiguous_failure_ids": [],
            "failure_reasons": {i: "docker: container exited before tests ran" for i in error},
            "error_ids": sorted(error), "schema_version": 2}


def write_run(root: Path, data: dict[str, object], dataset: str | None = "SWE-bench/SWE-bench_Verified") -> Path:
    """The summary in root/ and per-instance reports under root/logs/run_evaluation/RUN/MODEL/ID/."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{MODEL.replace('/', '__')}.{RUN_ID}.json"
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    run_dir = root / "logs" / "run_evaluation" / RUN_ID
    for instance in data["completed_ids"]:  # type: ignore[union-attr]
        folder = run_dir / MODEL.replace("/", "__") / str(instance)
        folder.mkdir(parents=True)
        resolved = instance in data["resolved_ids"]  # type: ignore[operator]
        report = {str(instance): {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
                                  "resolved": resolved, "infra_failure": False,
                                  "tests_status": {"FAIL_TO_PASS": {"success": ["t1"] if resolved else [],
                                                                    "failure": [] if resolved else ["t1"]},
                                                   "PASS_TO_PASS": {"success": ["t2", "t3"], "failure": []}}}}
        (folder / "report.json").write_text(json.dumps(report, indent=4), encoding="utf-8")
    if dataset:
        (run_dir / "run.json").write_text(json.dumps({"dataset": dataset, "split": "test", "task_repo": None}))
    return path


IDS = [f"django__django-{n}" for n in range(11001, 11011)]


@pytest.fixture
def candidate(tmp_path: Path) -> Path:
    return write_run(tmp_path / "cand", summary(IDS[:6], IDS[6:8], error=[IDS[8]], empty=[IDS[9]],
                                                incomplete=["astropy__astropy-12907"]))


def test_summary_gives_one_sample_per_instance_and_fails_errors(candidate: Path) -> None:
    run = read_results(candidate)
    assert list(run.tasks) == ["swe_bench_verified"]  # named after the dataset in the harness's run.json
    task = run.tasks["swe_bench_verified"]
    assert task.n_samples == 11 and len({s.doc_id for s in task.samples}) == 11
    success = {s.doc_id: s.scores["none"]["task_success"] for s in task.samples}
    assert [i for i, v in success.items() if v == 1.0] == IDS[:6]
    assert success[IDS[8]] == success[IDS[9]] == success["astropy__astropy-12907"] == 0.0
    assert task.metrics["none"]["task_success"] == pytest.approx(6 / 11)
    # a report has no trajectories: process metrics are absent (nodata), never an unobserved 0
    assert task.metrics["none"]["safety_violation_rate"] is None and task.metrics["none"]["steps"] is None
    error = next(s for s in task.samples if s.doc_id == IDS[8])
    assert "docker: container exited" in (error.trajectory.error or "")  # type: ignore[union-attr]
    # the folder (summary + logs/run_evaluation/...): the summary decides, instance reports add their details
    folder = read_results(candidate.parent).tasks["swe_bench_verified"]
    assert folder.n_samples == 11 and folder.metrics["none"]["task_success"] == pytest.approx(6 / 11)
    resolved = next(s for s in folder.samples if s.doc_id == IDS[0])
    assert resolved.extra["swebench_report"]["tests"] == {"FAIL_TO_PASS_success": 1, "FAIL_TO_PASS_failure": 0,
                                                          "PASS_TO_PASS_success": 2, "PASS_TO_PASS_failure": 0}


def test_instance_reports_alone_and_harness_detection(candidate: Path) -> None:
    run_dir = candidate.parent / "logs" / "run_evaluation" / RUN_ID
    assert harness_for(run_dir).name == "swebench" and harness_for(candidate).name == "swebench"
    task = read_results(run_dir).tasks["swe_bench_verified"]
    assert task.n_samples == 8 and task.metrics["none"]["task_success"] == pytest.approx(6 / 8)
    one = next(run_dir.rglob("report.json"))
    assert read_results(one).tasks["swe_bench_verified"].n_samples == 1  # run.json found up its folders


def _contract(tmp_path: Path) -> Path:
    contract = {
        "schema_version": 1, "name": "coding-agent", "baseline": {"checkpoint": "base"},
        "splits": {"test_public": {"visibility": "nightly"}},
        "suites": [{"schema_version": 1, "name": "coding", "tasks": [
            {"task": "inspect_evals/swe_bench", "name": "swe_bench_verified", "harness": "inspect",
             "split": "test_public", "requires": ["docker", "hub_data"]}]}],
        "gates": {"primary": {"metric": "swe_bench_verified/task_success", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    return path


def test_eval_responses_and_gate_through_the_cli(tmp_path: Path, candidate: Path) -> None:
    base = write_run(tmp_path / "base", summary(IDS[:4], IDS[4:10], incomplete=["astropy__astropy-12907"]),
                     dataset=None)
    assert list(read_results(base).tasks) == ["swe_bench"]  # no run.json: the default name
    contract = _contract(tmp_path)
    result = runner.invoke(app, ["eval", str(contract), "--responses", str(candidate), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "dropped: 1 errored" in result.output and "1 missing" in result.output
    assert "1 sandbox failed" in result.output  # the harness's infra failure names docker
    manifest = json.loads((tmp_path / "c" / "run_manifest.json").read_text())
    assert manifest["harness"] == "swebench" and manifest["tasks"][0]["drops"]["errored"] == 1
    assert manifest["tasks"][0]["drops"]["missing"] == 1
    result = runner.invoke(app, ["eval", str(contract), "--responses", str(base), "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert list(read_results(tmp_path / "b").tasks) == ["swe_bench_verified"]  # the contract's name, not swe_bench
    out = tmp_path / "gate"
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(tmp_path / "c"), "--baseline",
                                 str(tmp_path / "b"), "--out", str(out)])
    assert result.exit_code == 3, result.output
    decision = json.loads((out / "decision.json").read_text())
    drops = decision["extensions"]["drops"]
    listed = {(r["run"], r["doc_id"], r["kind"]) for r in drops["runs"]}
    assert ("candidate", IDS[8], "sandbox_failed") in listed and ("candidate", IDS[9], "errored") in listed
    assert ("candidate", "astropy__astropy-12907", "missing") in listed
    assert ("baseline", "astropy__astropy-12907", "missing") in listed


@pytest.mark.parametrize(("text", "needle"), [
    ("", "empty"),
    ('{"resolved_ids": ["a"', "not valid JSON"),
    ('{"resolved_ids": "a", "unresolved_ids": []}', "'resolved_ids' must be a list"),
    ('{"resolved_ids": ["a"], "error_ids": ["a"]}', "listed both"),
    ('{"resolved_ids": [], "unresolved_ids": []}', "lists no instance"),
    ('{"resolved_ids": ["a"], "total_instances": true}', "total_instances"),
    ('{"total_instances": 3, "resolved_instances": 1}', "neither a SWE-bench run summary"),
    ('{"resolved_ids": ["a"], "total_instances": 1' + "0" * 5000 + "}", "not readable JSON"),  # > 4300 digits
    ('{"resolved_ids": ["a"], "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "not readable JSON"),  # too deep
])
def test_malformed_summary_is_one_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    bad = tmp_path / "m.run.json"
    bad.write_text(text if text else "", encoding="utf-8")
    contract = _contract(tmp_path)
    result = runner.invoke(app, ["eval", str(contract), "--responses", str(bad), "--out", str(tmp_path / "o")],
                           )
    if text == "" or "resolved_ids" not in text:  # not recognisable as a report at all
        result = runner.invoke(app, ["gate", str(contract), "--candidate", str(bad), "--baseline", str(bad),
                                     "--harness", "swebench", "--out", str(tmp_path / "g")])
    assert result.exit_code == 2, result.output
    assert needle in result.output and str(bad) in result.output and "fix:" in result.output
    assert "Traceback" not in result.output


def test_malformed_instance_report_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "logs" / "x" / "report.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"django__django-1": {"patch_exists": true}}', encoding="utf-8")
    result = runner.invoke(app, ["gate", str(_contract(tmp_path)), "--candidate", str(tmp_path / "logs"),
                                 "--baseline", str(tmp_path / "logs"), "--out", str(tmp_path / "g")])
    assert result.exit_code == 2, result.output
    assert "no boolean 'resolved'" in result.output and "report.json" in result.output


def test_a_lone_surrogate_in_an_instance_id_or_reason_is_visible_not_a_crash(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON but no Unicode text; `rlgate eval` hashed the instance ids and died."""
    ids = [*IDS[:9], "django__django-\ud800"]
    data = summary(ids[:6], ids[6:8], error=[ids[9]], empty=[ids[8]])
    data["failure_reasons"] = {ids[9]: "docker: \udfff"}
    source = write_run(tmp_path / "cand", data)  # json.dumps writes the escapes
    result = runner.invoke(app, ["eval", str(_contract(tmp_path)), "--responses", str(source),
                                 "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    samples = {s.doc_id: s for s in read_results(tmp_path / "c").tasks["swe_bench_verified"].samples}
    assert "django__django-\\ud800" in samples
