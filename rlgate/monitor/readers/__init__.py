"""Log readers, one module per format, all producing a canonical `TrainingLog`.

`read_log(path, fmt="auto")` sniffs the format from the path and the first bytes of the file, so a
user can point `rlgate monitor` at whatever their trainer wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.monitor.readers import (
    _bounds,
    generic,
    mlflow_run,
    openrlhf,
    tensorboard,
    trl,
    verl_console,
    verl_jsonl,
    wandb_csv,
    wandb_run,
)
from rlgate.monitor.series import TrainingLog

FORMATS = ("trl", "verl_jsonl", "verl_console", "tensorboard", "openrlhf", "wandb", "wandb_csv", "mlflow", "csv",
           "jsonl")
SNIFF_BYTES = 4 << 20

_READERS: dict[str, Callable[[Path], TrainingLog]] = {
    "trl": trl.read,
    "verl_jsonl": verl_jsonl.read,
    "verl_console": verl_console.read,
    "tensorboard": tensorboard.read,
    "openrlhf": openrlhf.read,
    "wandb": wandb_run.read,
    "wandb_csv": wandb_csv.read,
    "mlflow": mlflow_run.read,
    "csv": generic.read_csv,
    "jsonl": generic.read_jsonl,
}


def _first_json_line(head: bytes) -> object | None:
    """The first JSON line's value; a line nested too deep to parse is skipped (the reader names it), and an
    object stands in for it when no other line parses, so such a file still reads as JSON lines."""
    deep = False
    for line in head.splitlines()[:50]:
        if line.strip():
            try:
                return json.loads(line)
            except RecursionError:
                deep = True
            except (json.JSONDecodeError, UnicodeDecodeError):
                return {} if deep else None
    return {} if deep else None


def detect_format(path: Path) -> str:
    """The log format of `path` (a file, a TensorBoard run folder or a TRL checkpoint folder)."""
    if not path.exists():
        raise InputError("log not found", file=path, fix="check the path")
    if path.is_dir():
        if (path / trl.STATE_FILE).is_file():
            return "trl"
        if tensorboard.event_files(path):
            return "tensorboard"
        if wandb_run.run_file(path) is not None:
            return "wandb"
        if mlflow_run.sniff(path):
            return "mlflow"
        raise InputError("folder holds no trainer_state.json, TensorBoard event files, W&B run or MLflow run",
                         file=path, fix="point at a log file, a TensorBoard or W&B run folder, an MLflow run "
                         "folder (mlruns/<experiment>/<run>) or a checkpoint folder")
    if path.suffix == wandb_run.SUFFIX:
        return "wandb"
    if tensorboard.FILE_MARK in path.name:
        return "tensorboard"
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head.strip():
        raise InputError("log file is empty", file=path, fix="point at a log the trainer has written to")
    if tensorboard.sniff_bytes(head):
        return "tensorboard"
    if path.name == trl.STATE_FILE or trl.sniff_text(head[:65536].decode("utf-8", errors="replace")):
        return "trl"
    if path.suffix.lower() in (".csv", ".tsv"):
        return "wandb_csv" if wandb_csv.sniff_file(path) else "csv"
    record = _first_json_line(head)
    if record is not None:
        if verl_jsonl.sniff(record):
            return "verl_jsonl"
        if openrlhf.sniff(record):
            return "openrlhf"
        if isinstance(record, dict):
            return "jsonl"
    if verl_console.sniff_bytes(head):
        return "verl_console"
    if b"," in head.split(b"\n", 1)[0] and b"step" in head.split(b"\n", 1)[0].lower():
        return "csv"
    raise InputError("cannot tell which trainer wrote this log", file=path,
                     fix=f"pass --format (one of {', '.join(FORMATS)})")


def read_log(path: str | Path, fmt: str = "auto") -> TrainingLog:
    """Read one log into canonical form. Damaged parts are listed in `log.problems`, never raised here."""
    path = Path(path)
    if fmt == "auto":
        fmt = detect_format(path)
    elif fmt not in _READERS:
        raise InputError(f"unknown log format '{fmt}'", field="format", fix=f"use auto or one of {', '.join(FORMATS)}")
    elif not path.exists():
        raise InputError("log not found", file=path, fix="check the path")
    try:
        return _READERS[fmt](path)
    except RecursionError:  # every reader bounds its nesting; this is the last guard, never a traceback
        raise InputError(f"{_bounds.TOO_DEEP}; is this a {fmt} log?", file=path,
                         fix="repair the log or check --format") from None
    except MemoryError:
        raise InputError(f"too large to read as a {fmt} log", file=path, fix="check --format") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start}); is this a {fmt} log?", file=path,
                         fix="check --format") from None
    except IsADirectoryError:
        raise InputError(f"is a folder; a {fmt} log is a file", file=path, fix="point at the log file") from None
    except OSError as exc:
        raise InputError(f"cannot read log: {exc.strerror}", file=path) from None
