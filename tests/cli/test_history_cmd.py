"""`rlgate history` over a run of gated checkpoints built from real lm-eval folders through `rlgate gate`;
export/import between SQLite and PostgreSQL; two parallel `rlgate gate` jobs sharing one PostgreSQL history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_synthetic_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
runner = CliRunner()
N_DOCS = 80
ACCURACY = {100: 0.50, 200: 0.60, 300: 0.70, 400: 0.50, 500: 0.45}

CONTRACT = """schema_version: 1
name: grpo_gsm8k
baseline: {checkpoint: base}
splits: {test_private: {visibility: release_gate_only, consult_budget: 3}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: gsm8k, split: test_private}]}
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.0}
  hard: [{metric: gsm8k/answer_parse_failure_rate, max: 0.05}]
monitor: {training_run: grpo-1, logs: [train.csv]}
"""


def _correct(rate: float) -> list[bool]:
    return [i < round(rate * N_DOCS) for i in range(N_DOCS)]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "contract.yaml").write_text(CONTRACT)
    (root / "train.csv").write_text("step,reward_mean\n" + "".join(f"{s},{s / 1000}\n" for s in range(1, 501, 10)))
    build_synthetic_folder(root / "base", "base", {"gsm8k": _correct(0.5)})
    for step, rate in ACCURACY.items():
        build_synthetic_folder(root / f"checkpoint-{step}", f"ckpt-{step}", {"gsm8k": _correct(rate)})
    return root


def _gate(project: Path, step: int, out: Path) -> int:
    result = runner.invoke(app, ["gate", str(project / "contract.yaml"), "--candidate",
                                 str(project / f"checkpoint-{step}"), "--baseline", str(project / "base"),
                                 "--out", str(out)])
    assert result.exit_code in (0, 1, 3), result.output
    return result.exit_code


def test_history_lists_a_run_of_five_gated_checkpoints(project: Path, tmp_path: Path) -> None:
    for step in ACCURACY:
        _gate(project, step, tmp_path / f"out{step}")
    result = runner.invoke(app, ["history", "--contract", str(project / "contract.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    [run] = data["runs"]
    assert run["run"] == "grpo-1" and [c["step"] for c in run["checkpoints"]] == list(ACCURACY)
    assert [c["primary_value"] for c in run["checkpoints"]] == pytest.approx(list(ACCURACY.values()))
    assert all(c["primary_interval"] is not None and c["decision"] for c in run["checkpoints"])
    assert run["checkpoints"][0]["decision"] != "release" or run["checkpoints"][0]["deciding_gates"] == []
    assert run["best"].endswith("checkpoint-300")
    assert run["consultations"] == [{"task": "gsm8k", "used": 5, "budget": 3, "over_budget": True}]
    assert any(f["rule"] for f in run["rules_fired"])  # the primary fell well below its best
    text = runner.invoke(app, ["history", "--contract", str(project / "contract.yaml")]).output
    assert "training run grpo-1: 5 gated checkpoint(s)" in text and "*best*" in text
    assert "private split gsm8k: consulted 5 of budget 3 OVER BUDGET" in text


def test_export_import_between_sqlite_and_postgres(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "h.sqlite"
    from rlgate.store.open import open_history

    db = open_history(source)
    for step in range(6):
        db.record("r", step, f"c{step}", {"m": step / 10}, "release", extra={"gates": {}}, contract="k")
    db.record_consultations("r", ["priv"])
    exported = tmp_path / "h.json"
    assert runner.invoke(app, ["history", "--history", str(source), "--export", str(exported)]).exit_code == 0
    result = runner.invoke(app, ["history", "--history", pg_url, "--import", str(exported)])
    assert result.exit_code == 0 and "6 checkpoint(s)" in result.output
    password = pg_url.split(":")[2].split("@")[0]
    assert password not in result.output and "***" in result.output
    assert open_history(pg_url).dump() == db.dump()
    bad = runner.invoke(app, ["history", "--history", pg_url, "--import", str(tmp_path / "nope.json")])
    assert bad.exit_code == 2 and "nope.json" in bad.output


def test_unreachable_postgres_is_exit_2_with_host_port(tmp_path: Path) -> None:
    result = runner.invoke(app, ["history", "--history", "postgresql://u:Hidden1@127.0.0.1:9/db"])
    assert result.exit_code == 2 and "127.0.0.1:9" in result.output and "fix:" in result.output
    assert "Hidden1" not in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_two_parallel_gate_jobs_both_land_in_one_postgres_history(project: Path, tmp_path: Path,
                                                                  pg_url: str) -> None:
    env = {**os.environ, "RLGATE_HISTORY": pg_url, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    jobs = [subprocess.Popen([sys.executable, "-m", "rlgate.cli.app", "gate", str(project / "contract.yaml"),
                              "--candidate", str(project / f"checkpoint-{step}"), "--baseline",
                              str(project / "base"), "--out", str(tmp_path / f"job{step}")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for step in (100, 200)]
    outputs = [job.communicate(timeout=600)[0] for job in jobs]
    assert all(job.returncode in (0, 1, 3) for job in jobs), outputs
    password = pg_url.split(":")[2].split("@")[0]
    assert all(password not in out for out in outputs)
    from rlgate.store.open import open_history

    db = open_history(pg_url)
    assert sorted(r.step for r in db.history("grpo-1")) == [100, 200], (db.dump(), outputs)
    assert db.consultations("grpo-1") == {"gsm8k": 2}


@pytest.mark.parametrize(("location", "problem"), [("bogus://x", "unknown scheme 'bogus://'"),
                                                   ("sqlite://x", "has no file path")])
def test_a_bad_history_flag_names_the_flag(location: str, problem: str) -> None:
    result = runner.invoke(app, ["history", "--history", location])
    assert result.exit_code == 2, result.output
    assert "--history: the" in result.output and problem in result.output and "Traceback" not in result.output


def test_export_to_a_folder_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["history", "--history", str(tmp_path / "h.sqlite"), "--export", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path}: --export: cannot write" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("content", [None, b"\xff\xfe{}"])
def test_import_of_a_folder_or_binary_file_exits_2(tmp_path: Path, content: bytes | None) -> None:
    source = tmp_path / "export.json"
    if content is None:
        source.mkdir()
    else:
        source.write_bytes(content)
    result = runner.invoke(app, ["history", "--history", str(tmp_path / "h.sqlite"), "--import", str(source)])
    assert result.exit_code == 2, result.output
    assert f"{source}: " in result.output and "fix: pass a file written by rlgate history --export" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("where", ["folder", "file/history.sqlite"])
def test_a_history_path_that_cannot_be_a_database_exits_2_with_a_fix(tmp_path: Path, where: str) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["history", "--history", str(tmp_path / where)])
    assert result.exit_code == 2, result.output
    assert "fix: point --history" in result.output and "Traceback" not in result.output


def test_consultations_without_a_training_run_are_listed_against_their_budget(project: Path, tmp_path: Path) -> None:
    """Without monitor.training_run no checkpoint is recorded, but each gate still counts a consultation of the
    private split (in run 'default'): `rlgate history` must show them over budget, not 'no gated checkpoints'."""
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT.replace("monitor: {training_run: grpo-1, logs: [train.csv]}",
                                         "monitor: {history: h.sqlite}"))
    for i in range(4):
        result = runner.invoke(app, ["gate", str(contract), "--candidate", str(project / "checkpoint-200"),
                                     "--baseline", str(project / "base"), "--out", str(tmp_path / f"out{i}")])
        assert result.exit_code in (0, 1, 3), result.output
    listed = runner.invoke(app, ["history", "--contract", str(contract)])
    assert listed.exit_code == 0, listed.output
    assert "private split gsm8k: consulted 4 of budget 3 OVER BUDGET" in listed.output
    page = runner.invoke(app, ["history", "--contract", str(contract), "--html", str(tmp_path / "h.html")])
    assert page.exit_code == 0, page.output


def test_the_best_checkpoint_is_one_of_the_contracts_own(tmp_path: Path) -> None:
    """With --contract only its checkpoints are listed; the best must be one of them, not a checkpoint that another
    contract gated in the same training run."""
    from rlgate.store.open import open_history

    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT.replace("monitor: {training_run: grpo-1, logs: [train.csv]}",
                                         "monitor: {training_run: grpo-1, history: h.sqlite}"))
    store = open_history(tmp_path / "h.sqlite")
    metric = "gsm8k/exact_match/flexible-extract"
    store.record("grpo-1", 100, "ckpt-100", {metric: 0.9}, "release", contract="another_contract")
    store.record("grpo-1", 200, "ckpt-200", {metric: 0.6}, "release", contract="grpo_gsm8k")
    store.record("grpo-1", 300, "ckpt-300", {metric: 0.5}, "release", contract="grpo_gsm8k")
    store.close()
    result = runner.invoke(app, ["history", "--contract", str(contract), "--json"])
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.output)["runs"]
    assert [c["checkpoint"] for c in run["checkpoints"]] == ["ckpt-200", "ckpt-300"]
    assert run["best"] == "ckpt-200"
