"""The run-folder readers (W&B's `.wandb` through wandb-core, MLflow's file store through MLflow's client) fed
deep, long and wide input: a result with located problems, or one InputError naming the run; never a traceback.

The W&B runs are written by the wandb SDK itself (offline), one per shape, and reused across examples; the
MLflow runs are a real file-store run (written by MLflow's client) with the shape put where MLflow stores
free text: a metric file's line, meta.yaml, a metric key (a nested folder) and many metric files.
`test_every_monitor_reader_is_fed_deep_long_and_wide_input` keeps this and test_monitor_bounds.py covering
every reader `read_log` has.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlgate._core.errors import InputError
from rlgate.monitor import readers
from rlgate.monitor.readers import _bounds, read_log

SHORT_LINES = 4096
_WANDB_RUNS: dict[tuple[str, int], Path] = {}
HERE = Path(__file__).resolve().parent


def _nested(depth: int) -> Any:
    value: Any = 0.5
    for _ in range(depth):
        value = {"k": value}
    return value


def _wandb_run(root: Path, kind: str, size: int, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A W&B offline run whose second step logs the shape beside a reward (written once per shape)."""
    if (kind, size) in _WANDB_RUNS:
        return _WANDB_RUNS[(kind, size)]
    wandb = pytest.importorskip("wandb", reason="the 'wandb' extra is not installed")
    folder = root / f"wandb-{kind}-{size}"
    for key, value in {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true",
                       "WANDB_CONSOLE": "off", "WANDB_DISABLE_CODE": "true", "WANDB_ERROR_REPORTING": "false",
                       "WANDB_DIR": str(folder), "WANDB_CACHE_DIR": str(folder / "cache"),
                       "WANDB_CONFIG_DIR": str(folder / "config"), "WANDB_DATA_DIR": str(folder / "data")}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    shape: dict[str, Any] = {"deep": {"deep": _nested(size)}, "long": {"note": "x" * (SHORT_LINES + 10 * size)},
                             "wide": {f"w{i}": float(i) for i in range(5 * size)}}[kind]
    run = wandb.init(mode="offline", project="rlgate-bounds", dir=str(folder))
    run.log({"reward": 0.1}, step=0)
    run.log({"reward": 0.2, **shape}, step=1)
    run.log({"reward": 0.3}, step=2)
    run.finish()
    from tests.monitor.test_monitor_sources import _wait_until_written

    found = next((folder / "wandb").glob("offline-run-*"))
    _wait_until_written(next(found.glob("run-*.wandb")))
    _WANDB_RUNS[(kind, size)] = found
    return found


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["deep", "long", "wide"]), size=st.sampled_from([40, 600]))  # the SDK writes <~900 deep
def test_a_wandb_run_of_any_shape_is_read_or_located(kind: str, size: int, tmp_path_factory: pytest.TempPathFactory,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    run = _wandb_run(tmp_path_factory.getbasetemp(), kind, size, monkeypatch)
    monkeypatch.setattr(_bounds, "MAX_LINE_BYTES", SHORT_LINES)
    try:
        log = read_log(run)
    except InputError as error:
        assert error.file is not None
        return
    reward = log.get("reward_mean")
    assert reward is not None and reward.steps.tolist()[0] == 0 and reward.steps.tolist()[-1] == 2
    for problem in log.problems:
        assert problem.file and problem.record is not None
    if kind == "long":  # the record over the line limit is named, not parsed
        assert any("longer than 4,096 bytes" in p.message for p in log.problems)


@pytest.fixture(scope="module")
def mlflow_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real MLflow file-store run with a reward logged at steps 0-2."""
    pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed")
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("mlflow") / "mlruns"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        client = MlflowClient(tracking_uri=root.as_uri())
        run = client.create_run(client.create_experiment("bounds"))
        for step in range(3):
            client.log_metric(run.info.run_id, "reward", 0.1 * (step + 1), step=step)
    return next(root.glob(f"*/{run.info.run_id}"))


def _shape_mlflow(run: Path, kind: str, size: int, where: str) -> None:
    metrics = run / "metrics"
    if where == "meta":
        value = "[" * size + "]" * size if kind == "deep" else "x" * size if kind == "long" else ", ".join(
            f"k{i}: {i}" for i in range(size))
        (run / "meta.yaml").write_text((run / "meta.yaml").read_text() + f"extra: {value}\n"
                                       if kind != "wide" else (run / "meta.yaml").read_text() + f"extra: {{{value}}}\n")
    elif where == "metric_line":
        text = {"deep": "1 " + "[" * size + " 1\n", "long": "1 " + "x" * (SHORT_LINES + size) + " 1\n",
                "wide": "1 0.5 1 " + " ".join("7" for _ in range(size)) + "\n"}[kind]
        (metrics / "shaped").write_text(text)
    else:  # the metric key: nested folders (deep), a long name, or many metric files (wide)
        if kind == "deep":
            folder = metrics.joinpath(*["a"] * min(size, 300))  # deeper: pytest cannot remove it again
            try:
                folder.mkdir(parents=True)
                (folder / "v").write_text("1 0.5 1\n")
            except OSError:  # the file system refuses paths this long: a shape nobody can write
                return
        elif kind == "long":
            (metrics / ("k" * min(size, 250))).write_text("1 0.5 1\n")
        else:
            for i in range(min(size, 2000)):
                (metrics / f"w{i}").write_text("1 0.5 1\n")


@settings(max_examples=18, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["deep", "long", "wide"]), size=st.sampled_from([40, 1200, 100_000]),
       where=st.sampled_from(["meta", "metric_line", "metric_key"]))
def test_an_mlflow_run_of_any_shape_is_read_or_located(kind: str, size: int, where: str, mlflow_run: Path,
                                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    run = tmp_path_factory.mktemp("shaped") / "0" / mlflow_run.name
    shutil.copytree(mlflow_run, run)
    shutil.copyfile(mlflow_run.parent / "meta.yaml", run.parent / "meta.yaml")
    _shape_mlflow(run, kind, size, where)
    try:
        log = read_log(run)
    except InputError as error:  # refused as a whole: one located message naming the run
        assert error.file is not None and str(error.file).startswith(str(run)) and error.fix
        return
    reward = log.get("reward_mean")
    assert reward is not None and reward.steps.tolist() == [0, 1, 2]


def test_every_monitor_reader_is_fed_deep_long_and_wide_input() -> None:
    """A reader added to `read_log` without a bounds test here or in test_monitor_bounds.py fails this."""
    covered = set(re.findall(r'"(\w+)"', (HERE / "test_monitor_bounds.py").read_text().split(
        "fmt=st.sampled_from([", 1)[1].split("])", 1)[0])) | {"wandb", "mlflow"}
    missing = set(readers.FORMATS) - covered
    assert not missing, f"monitor readers without a deep/long/wide input test: {sorted(missing)}"
