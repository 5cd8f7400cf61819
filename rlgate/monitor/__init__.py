"""Training monitor: read RL training logs, detect failure signals, diagnose the fault domain.

Readers (one per format) turn TRL, verl, TensorBoard, OpenRLHF and generic CSV/JSONL logs into one
canonical `TrainingLog`; rules (small pure functions, thresholds in `gates/monitor_default.yaml`)
produce findings; `monitor_gates` turns them into gate verdicts of kind `monitor`. Exports are lazy
so `import rlgate.monitor` does not import numpy.
"""

from __future__ import annotations

from rlgate._core.lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _EXPORTS)
