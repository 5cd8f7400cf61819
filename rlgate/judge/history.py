"""Judge calibration results in the project's checkpoint history (rlgate.store.history).

Each calibration is one record of the pseudo training run `judge-calibration/<contract>/<task>`, so
drift is read against the last run of the same task, whichever judge model ran it.
"""

from __future__ import annotations

from typing import Any

from rlgate.store.history import CheckpointHistory

PREFIX = "judge-calibration/"


class StoreJudgeHistory:
    """Implements rlgate.judge.calibration.JudgeHistory on top of the SQLite checkpoint history."""

    def __init__(self, store: CheckpointHistory, label: str | None = None) -> None:
        self.store = store
        self.label = label

    def last_judge_calibration(self, key: str) -> dict[str, Any] | None:
        records = self.store.history(PREFIX + key)
        if not records:
            return None
        last = records[-1]
        return {"accuracy": last.metrics.get("judge_agreement"), "kappa": last.metrics.get("judge_kappa"),
                "judge": last.extra.get("judge"), "checkpoint": last.checkpoint}

    def record_judge_calibration(self, key: str, record: dict[str, Any]) -> None:
        step = len(self.store.history(PREFIX + key))
        metrics = {"judge_agreement": float(record["accuracy"])}
        if record.get("kappa") is not None:
            metrics["judge_kappa"] = float(record["kappa"])
        self.store.record(PREFIX + key, step, self.label or f"calibration-{step}", metrics,
                          extra={k: v for k, v in record.items() if k not in ("accuracy", "kappa")})
