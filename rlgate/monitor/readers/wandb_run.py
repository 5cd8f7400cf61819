"""Weights & Biases run folders (`wandb/offline-run-*/run-*.wandb`, or online runs' local copies).

The `.wandb` file is W&B's transaction log (leveldb-style framed protobuf records). It is read by the
W&B SDK's own reader, never by a parser of ours: since wandb 0.2x that reader lives in the SDK's
`wandb-core` binary, which `wandb leet inspect --json` drives; it is called here directly, with
telemetry off, so reading needs no network, no login and no API key. Each `history` record becomes a
step (`_step`, or the record's step number); numbers are kept, media and text are ignored keys. An
incomplete file (a run still writing, or killed) keeps every record before the cut and is listed as
a problem.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.monitor.readers import _bounds
from rlgate.monitor.readers._records import as_step
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

FORMAT = "wandb"
SUFFIX = ".wandb"
_BOOKKEEPING = {"_step", "_runtime", "_timestamp"}
TIMEOUT_S = 600


def run_file(path: Path) -> Path | None:
    """The `.wandb` file of a run folder, a `wandb/` folder holding one run, or the file itself."""
    if path.is_file():
        return path if path.suffix == SUFFIX else None
    direct = sorted(path.glob(f"run-*{SUFFIX}"))
    if len(direct) == 1:
        return direct[0]
    if direct:
        raise InputError(f"run folder holds {len(direct)} .wandb files", file=path, fix="point at one of them")
    runs = sorted({p.parent for p in path.glob(f"*run-*/run-*{SUFFIX}")})
    if len(runs) == 1:
        return run_file(runs[0])
    if len(runs) > 1:
        names = ", ".join(r.name for r in runs[:5]) + (", ..." if len(runs) > 5 else "")
        raise InputError(f"wandb folder holds {len(runs)} runs ({names})", file=path,
                         fix="point at one run folder, e.g. wandb/offline-run-.../")
    return None


def _core_command(file: Path) -> list[str]:
    try:
        from wandb.util import get_core_path
    except ImportError:
        raise MissingExtraError.for_extra("reading W&B run folders", "wandb", "wandb") from None
    try:
        core = get_core_path()
    except Exception as exc:  # wandb raises its own WandbCoreNotAvailableError
        raise InputError(f"the wandb SDK's reader (wandb-core) is not available: {exc}", file=file,
                         fix="reinstall wandb (pip install 'rl-release-gate[wandb]')") from None
    return [core, "leet", "inspect", "--no-observability", "--json", "--run-file", str(file), str(file.parent.parent)]


def _flatten(item: dict[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Nested history values (`wandb.log({"a": {"b": 1}})`) under W&B's own dotted names; below
    `_bounds.MAX_DEPTH` levels a value is kept as it is (not a number: an ignored key)."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and "_type" not in value and depth < _bounds.MAX_DEPTH:
            out.update(_flatten(value, name + ".", depth + 1))
        else:
            out[name] = value
    return out


def _bounded_lines(stream: IO[bytes]) -> Iterator[bytes | None]:
    """wandb-core's JSON lines, each read to at most `_bounds.MAX_LINE_BYTES` (None for a longer one, whose
    rest is skipped), so a logged value of gigabytes never sits in memory whole."""
    while True:
        line = stream.readline(_bounds.MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) <= _bounds.MAX_LINE_BYTES or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(_bounds.MAX_LINE_BYTES + 1)
        yield None


def read(path: Path) -> TrainingLog:
    file = run_file(path)
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    if file is None:
        problems.append(ReadProblem(str(path), "no W&B run file (run-*.wandb) here",
                                    fix="point at a wandb/offline-run-*/ folder or its .wandb file"))
        return builder.build(path, FORMAT, problems)
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false"}
    with subprocess.Popen(_core_command(file), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          stdin=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        records = 0
        for number, line in enumerate(_bounded_lines(proc.stdout), start=1):
            if line is None:
                problems.append(ReadProblem(str(file), f"wandb-core wrote a record {_bounds.too_long()[5:]}",
                                            record=number))
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                what = "not JSON" if isinstance(exc, json.JSONDecodeError) else _bounds.TOO_DEEP
                problems.append(ReadProblem(str(file), f"wandb-core wrote a record that is {what}", record=number))
                continue
            if not isinstance(record, dict):
                problems.append(ReadProblem(str(file), "wandb-core wrote a record that is not an object",
                                            record=number))
                continue
            records += 1
            if record.get("type") != "history":
                continue
            history = record.get("history")
            history = history if isinstance(history, dict) else {}
            raw_item = history.get("item")
            item = _flatten(raw_item if isinstance(raw_item, dict) else {})
            step = as_step(item.get("_step"))
            if step is None:
                numbered = history.get("step")
                step = as_step(numbered.get("num", 0) if isinstance(numbered, dict) else 0)
            if step is None:
                problems.append(ReadProblem(str(file), "history record without a step", record=records))
                continue
            builder.add_many(step, {k: v for k, v in item.items() if k not in _BOOKKEEPING})
        err = proc.stderr.read().decode("utf-8", errors="replace").strip()
        code = proc.wait(timeout=TIMEOUT_S)
    if code != 0:
        problems.append(ReadProblem(str(file), f"W&B could not read this run file: {err or f'exit {code}'}",
                                    record=records + 1, fix=f"the {records} records before it were read"))
    elif "incomplete" in err:
        problems.append(ReadProblem(str(file), "the .wandb file ends mid-record (run still writing, or killed)",
                                    record=records + 1,
                                    fix=f"the {records} records before it were read; run again once the run ends"))
    return builder.build(file.parent, FORMAT, problems)
