"""Log readers, one module per format, all producing a canonical `TrainingLog`.

`read_log(path, fmt="auto")` sniffs the format from the path and the first bytes of the file, so a
user can point `rlgate monitor` at whatever their trainer wrote. The formats are one registry
(`LOG_FORMATS`): a third-party package adds one through the `rlgate.plugins` entry point
`log_format.<name>` = a `LogReader` (name, `sniff(LogProbe) -> bool`, `read(path) -> TrainingLog`).
"""

from __future__ import annotations

from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.monitor.readers import _bounds
from rlgate.monitor.readers._probe import SNIFF_BYTES, LogProbe, LogReader
from rlgate.monitor.series import TrainingLog
from rlgate.registry import Registry

__all__ = ["FORMATS", "LOG_FORMATS", "SNIFF_BYTES", "LogProbe", "LogReader", "detect_format", "read_log"]

_READERS = "rlgate.monitor.readers"
#: every log format, in the order detection asks them (a plugin `log_format.<name>` joins before the
#: fallbacks: any JSON lines, verl's console lines anywhere in a file, any CSV)
LOG_FORMATS: Registry[LogReader] = Registry("log_format", {
    "trl": f"{_READERS}.trl:LOG_FORMAT",
    "tensorboard": f"{_READERS}.tensorboard:LOG_FORMAT",
    "wandb": f"{_READERS}.wandb_run:LOG_FORMAT",
    "mlflow": f"{_READERS}.mlflow_run:LOG_FORMAT",
    "wandb_csv": f"{_READERS}.wandb_csv:LOG_FORMAT",
    "verl_jsonl": f"{_READERS}.verl_jsonl:LOG_FORMAT",
    "openrlhf": f"{_READERS}.openrlhf:LOG_FORMAT",
    "jsonl": f"{_READERS}.generic:JSONL_FORMAT",
    "verl_console": f"{_READERS}.verl_console:LOG_FORMAT",
    "csv": f"{_READERS}.generic:CSV_FORMAT",
}, field="format")
#: the built-in formats' names
FORMATS = tuple(LOG_FORMATS.entries)


def _in_detection_order() -> list[LogReader]:
    formats = [LOG_FORMATS.get(name) for name in LOG_FORMATS.names()]
    return [f for f in formats if not f.fallback] + [f for f in formats if f.fallback]


def detect_format(path: Path) -> str:
    """The log format of `path` (a file, a TensorBoard run folder or a TRL checkpoint folder)."""
    if not path.exists():
        raise InputError("log not found", file=path, fix="check the path")
    probe = LogProbe(path)
    found = next((f.name for f in _in_detection_order() if f.sniff(probe)), None)
    if found is not None:
        return found
    if probe.is_dir:
        raise InputError("folder holds no trainer_state.json, TensorBoard event files, W&B run or MLflow run",
                         file=path, fix="point at a log file, a TensorBoard or W&B run folder, an MLflow run "
                         "folder (mlruns/<experiment>/<run>) or a checkpoint folder")
    if probe.empty:
        raise InputError("log file is empty", file=path, fix="point at a log the trainer has written to")
    raise InputError("cannot tell which trainer wrote this log", file=path,
                     fix=f"pass --format (one of {', '.join(LOG_FORMATS.names())})")


def read_log(path: str | Path, fmt: str = "auto") -> TrainingLog:
    """Read one log into canonical form. Damaged parts are listed in `log.problems`, never raised here."""
    path = Path(path)
    if fmt == "auto":
        fmt = detect_format(path)
    elif fmt not in LOG_FORMATS:
        raise InputError(f"unknown log format '{fmt}'", field="format",
                         fix=f"use auto or one of {', '.join(LOG_FORMATS.names())}")
    elif not path.exists():
        raise InputError("log not found", file=path, fix="check the path")
    try:
        return LOG_FORMATS.get(fmt).read(path)
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
