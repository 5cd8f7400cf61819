"""Logs where teams keep them: W&B offline runs, W&B CSV exports and MLflow file stores, written by the
libraries themselves and read back. The library tests skip only when the optional extra is absent
(`pip install 'rl-release-gate[wandb,mlflow]'`; CI installs both, so there they run)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest

from rlgate._core.errors import InputError
from rlgate.monitor.api import run_monitor
from rlgate.monitor.readers import detect_format, read_log

N = 60
REWARD = np.linspace(0.2, 0.6, N)


def _wandb_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int = N) -> Path:
    wandb = pytest.importorskip("wandb",
                                reason="the 'wandb' extra is not installed (pip install 'rl-release-gate[wandb]')")
    for key, value in {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true",
                       "WANDB_CONSOLE": "off", "WANDB_DISABLE_CODE": "true", "WANDB_ERROR_REPORTING": "false",
                       "WANDB_DIR": str(tmp_path), "WANDB_CACHE_DIR": str(tmp_path / "cache"),
                       "WANDB_CONFIG_DIR": str(tmp_path / "config"), "WANDB_DATA_DIR": str(tmp_path / "data")}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    run = wandb.init(mode="offline", project="rlgate-test", dir=str(tmp_path), config={"lr": 1e-6})
    for i in range(n):
        row = {"reward/mean": float(REWARD[i]), "policy/entropy": 0.5, "note": "text is ignored",
               "nested": {"kl": 0.01}}
        if i % 10 == 0:
            row["val/gsm8k"] = 0.3 + 0.002 * i
        run.log(row, step=i)
    run.finish()
    folders = sorted((tmp_path / "wandb").glob("offline-run-*"))
    assert len(folders) == 1
    _wait_until_written(next(folders[0].glob("run-*.wandb")))
    return folders[0]


def _wait_until_written(file: Path, timeout: float = 30.0) -> None:
    """wandb's service process may still be flushing the run file when finish() returns (seen on a busy
    machine): wait until its size has been stable for a moment, so tests read the whole file."""
    import time

    deadline, last, stable_since = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < deadline:
        size = file.stat().st_size
        if size != last:
            last, stable_since = size, time.monotonic()
        elif size > 0 and time.monotonic() - stable_since > 0.5:
            return
        time.sleep(0.05)


def test_wandb_offline_run_is_read_through_the_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _wandb_run(tmp_path, monkeypatch)
    assert detect_format(folder) == "wandb" and detect_format(tmp_path / "wandb") == "wandb"
    log = read_log(folder)
    assert log.format == "wandb" and log.problems == []
    assert log.n_steps() == N and log.step_range() == (0, N - 1)
    np.testing.assert_allclose(log.metrics["reward_mean"].values, REWARD)
    assert log.metrics["entropy"].source_key == "policy/entropy"
    assert log.val_scores()["gsm8k"].steps.tolist() == list(range(0, N, 10))
    assert "nested.kl" in log.extra and "note" in log.ignored_keys
    # the .wandb file itself works too
    assert read_log(next(folder.glob("run-*.wandb"))).n_steps() == N


def test_wandb_run_cut_short_keeps_what_was_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _wandb_run(tmp_path, monkeypatch)
    file = next(folder.glob("run-*.wandb"))
    data = file.read_bytes()
    file.write_bytes(data[: len(data) - 3])  # inside the last record, wherever the records fall
    log = read_log(folder)
    assert log.problems and "ends mid-record" in log.problems[0].message
    assert 0 < log.n_steps() <= N


def test_wandb_file_that_is_not_a_run_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    pytest.importorskip("wandb", reason="the 'wandb' extra is not installed (pip install 'rl-release-gate[wandb]')")
    junk = tmp_path / "run-x.wandb"
    junk.write_bytes(b"\x00not a transaction log" * 20)
    log = read_log(junk)
    assert log.n_steps() == 0 and "W&B could not read" in log.problems[0].message


def test_wandb_csv_api_export(tmp_path: Path) -> None:
    path = tmp_path / "history.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "_step", "_runtime", "_timestamp", "reward/mean", "val/gsm8k"])
        for i in range(N):
            writer.writerow([i, i, 1.5 * i, 1.7e9 + i, REWARD[i], 0.3 if i % 10 == 0 else ""])
    assert detect_format(path) == "wandb_csv"
    log = read_log(path)
    assert log.problems == [] and log.n_steps() == N
    assert set(log.metrics) == {"reward_mean", "val_score/gsm8k"} and log.unknown_keys == []


def test_wandb_csv_chart_export_drops_the_run_prefix_and_bands(tmp_path: Path) -> None:
    path = tmp_path / "chart.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Step", "grpo-7b - reward/mean", "grpo-7b - reward/mean__MIN", "grpo-7b - reward/mean__MAX"])
        for i in range(N):
            writer.writerow([i, REWARD[i], REWARD[i] - 0.1, REWARD[i] + 0.1])
    log = read_log(path)
    assert log.format == "wandb_csv" and list(log.metrics) == ["reward_mean"] and log.extra == {}
    two = tmp_path / "two.csv"
    two.write_text("Step,a - reward/mean,b - reward/mean\n0,1,2\n")
    with pytest.raises(InputError, match="holds 2 runs"):
        read_log(two)


def _mlflow_run(root: Path, n: int = N) -> Path:
    pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed (pip install 'rl-release-gate[mlflow]')")
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        client = MlflowClient(tracking_uri=(root / "mlruns").as_uri())
        experiment = client.create_experiment("grpo")
        run = client.create_run(experiment)
        metrics = [Metric("reward/mean", float(REWARD[i]), 1000 + i, i) for i in range(n)]
        metrics += [Metric("val/gsm8k", 0.3 + 0.001 * i, 1000 + i, i) for i in range(0, n, 10)]
        client.log_batch(run.info.run_id, metrics=metrics)
        client.set_terminated(run.info.run_id)
    finally:
        del os.environ["MLFLOW_ALLOW_FILE_STORE"]
    return root / "mlruns" / experiment / run.info.run_id


def test_mlflow_file_store_run_is_read_through_the_client(tmp_path: Path) -> None:
    run = _mlflow_run(tmp_path)
    assert (run / "metrics" / "reward" / "mean").is_file()
    for path in (run, run.parent, tmp_path / "mlruns"):
        assert detect_format(path) == "mlflow"
        log = read_log(path)
        assert log.format == "mlflow" and log.problems == [] and log.n_steps() == N
        np.testing.assert_allclose(log.metrics["reward_mean"].values, REWARD)
        assert len(log.val_scores()["gsm8k"]) == N // 10
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ


def test_mlflow_folder_with_two_runs_asks_for_one(tmp_path: Path) -> None:
    run = _mlflow_run(tmp_path)
    _mlflow_run(tmp_path / "other")
    second = next((tmp_path / "other" / "mlruns").glob("*/*/meta.yaml")).parent
    (run.parent / second.name).symlink_to(second, target_is_directory=True)
    with pytest.raises(InputError, match="2 MLflow runs here"):
        read_log(run.parent)


def test_monitor_with_mapping_on_an_mlflow_run(tmp_path: Path) -> None:
    run = _mlflow_run(tmp_path)
    report = run_monitor([run], metrics={"val_score/heldout": "val/gsm8k"}, plots=False)
    assert report.logs[0].format == "mlflow"
    assert {m.name: m.source_key for m in report.logs[0].metrics}["val_score/heldout"] == "val/gsm8k"
