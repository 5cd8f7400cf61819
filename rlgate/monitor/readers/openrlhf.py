"""OpenRLHF metrics exported as JSON lines: `train/*` keys stepped by `train/global_step`, `eval/*` keys.

OpenRLHF logs to wandb or TensorBoard with `train/` and `eval/` prefixes (its TensorBoard files go
through the TensorBoard reader; the prefixes are handled by the vocabulary either way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate.monitor.readers._probe import LogProbe, LogReader
from rlgate.monitor.readers.generic import read_jsonl
from rlgate.monitor.series import TrainingLog

FORMAT = "openrlhf"


def sniff(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    keys = [k for k in record if isinstance(k, str)]
    prefixed = [k for k in keys if k.startswith(("train/", "eval/"))]
    return bool(prefixed) and len(prefixed) >= len(keys) - 1


def read(path: Path) -> TrainingLog:
    return read_jsonl(path, FORMAT)


def sniff_log(probe: LogProbe) -> bool:
    """JSON lines whose first record's keys are OpenRLHF's train/ and eval/ ones."""
    return not probe.is_dir and sniff(probe.first_record)


LOG_FORMAT = LogReader(FORMAT, sniff_log, read)
