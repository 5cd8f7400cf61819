"""Training monitor: read RL training logs, detect failure signals, diagnose the fault domain.

Readers (one per format) turn TRL, verl, TensorBoard, OpenRLHF and generic CSV/JSONL logs into one
canonical `TrainingLog`; rules (small pure functions, thresholds in `gates/monitor_default.yaml`)
produce findings; `monitor_gates` turns them into gate verdicts of kind `monitor`. Exports are lazy
so `import rlgate.monitor` does not import numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "read_log": "rlgate.monitor.readers",
    "detect_format": "rlgate.monitor.readers",
    "TrainingLog": "rlgate.monitor.series",
    "Series": "rlgate.monitor.series",
    "Finding": "rlgate.monitor.findings",
    "MonitorPolicy": "rlgate.monitor.policy",
    "MonitorReport": "rlgate.monitor.report",
    "evaluate": "rlgate.monitor.rules",
    "run_monitor": "rlgate.monitor.api",
    "monitor_contract": "rlgate.monitor.api",
    "resolve_policy": "rlgate.monitor.api",
    "record_gated_checkpoint": "rlgate.monitor.api",
    "monitor_gates": "rlgate.monitor.gate",
    "attach_monitor": "rlgate.monitor.gate",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlgate.monitor' has no attribute {name!r}")
    return getattr(import_module(module), name)
