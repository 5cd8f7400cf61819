"""MLflow file-store runs (`mlruns/<experiment>/<run>/metrics/...`), read through MLflow's own client.

The tracking URI is the `file:` URI of the `mlruns` folder, so nothing goes over the network. Every
metric key of the run (`MlflowClient.get_run(...).data.metrics`) is read with `get_metric_history`,
step by step. MLflow 3 puts its file store in maintenance mode behind `MLFLOW_ALLOW_FILE_STORE`; the
reader sets it only while it reads (a team that logged to a file store has opted in already).
Accepts a run folder, an experiment folder with one run, or an `mlruns` folder with one run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import yaml

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

FORMAT = "mlflow"
META = "meta.yaml"


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and (path / META).is_file() and (path / "metrics").is_dir()


def _runs_below(path: Path, depth: int) -> list[Path]:
    pattern = "/".join(["*"] * depth)
    return sorted(p for p in path.glob(pattern) if is_run_folder(p) and p.parent.name != ".trash")


def sniff(path: Path) -> bool:
    """A run folder, or a folder one or two levels above run folders (an experiment, an mlruns root)."""
    return is_run_folder(path) or (path.is_dir() and bool(_runs_below(path, 1) or _runs_below(path, 2)))


def find_run(path: Path) -> Path:
    if is_run_folder(path):
        return path
    runs = _runs_below(path, 1) or _runs_below(path, 2)
    if len(runs) == 1:
        return runs[0]
    if not runs:
        raise InputError("no MLflow run here (a run folder holds meta.yaml and metrics/)", file=path,
                         fix="point at mlruns/<experiment id>/<run id>/")
    names = ", ".join(f"{r.parent.name}/{r.name}" for r in runs[:5]) + (", ..." if len(runs) > 5 else "")
    raise InputError(f"{len(runs)} MLflow runs here ({names})", file=path,
                     fix="point at one run: mlruns/<experiment id>/<run id>/")


@contextmanager
def _file_store_allowed() -> Iterator[None]:
    old = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)
        else:
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = old


def read(path: Path) -> TrainingLog:
    run = find_run(path)
    try:
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise MissingExtraError.for_extra("reading MLflow runs", "mlflow", "mlflow") from None
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    with _file_store_allowed():
        client = MlflowClient(tracking_uri=run.parent.parent.resolve().as_uri())
        try:
            keys = sorted(client.get_run(run.name).data.metrics)
        except MlflowException as exc:
            raise InputError(f"MLflow cannot read this run: {exc.message}", file=run,
                             fix="check that the folder is an MLflow file-store run") from None
        except (ValueError, RecursionError, OSError, yaml.YAMLError) as exc:
            # MLflow's file store lets these through: a metric value that is no number, a meta.yaml nested
            # past PyYAML's limit, a path too long for the file system
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise InputError(f"MLflow cannot read this run ({type(exc).__name__}: {first})", file=run,
                             fix="check that the folder is an MLflow file-store run, as MLflow wrote it") from None
        for key in keys:
            try:
                history = client.get_metric_history(run.name, key)
            except (MlflowException, ValueError, IndexError, OSError, RecursionError) as exc:
                problems.append(ReadProblem(str(run / "metrics" / key), f"metric history unreadable: {exc}",
                                            fix="the other metrics were read"))
                continue
            if history:
                steps = np.fromiter((m.step for m in history), dtype=np.int64, count=len(history))
                values = np.fromiter((m.value for m in history), dtype=np.float64, count=len(history))
                builder.add_columns(key, steps, values)
    return builder.build(run, FORMAT, problems)
