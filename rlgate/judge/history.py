"""Judge calibration results in the project's history store (rlgate.store.protocol.HistoryStore).

The store itself implements rlgate.judge.calibration.JudgeHistory: each calibration is one record of the
pseudo training run `judge-calibration/<contract>/<task>`, so drift is read against the last run of the
same task, whichever judge model ran it. This adapter only adds a label for the recorded calibration.
"""

from __future__ import annotations

from typing import Any

from rlgate.store.protocol import HistoryStore

PREFIX = "judge-calibration/"


class StoreJudgeHistory:
    """A JudgeHistory over a HistoryStore that names each recorded calibration `label`."""

    def __init__(self, store: HistoryStore, label: str | None = None) -> None:
        self.store = store
        self.label = label

    def last_judge_calibration(self, key: str) -> dict[str, Any] | None:
        return self.store.last_judge_calibration(key)

    def record_judge_calibration(self, key: str, record: dict[str, Any]) -> None:
        self.store.record_judge_calibration(key, record, label=self.label)
