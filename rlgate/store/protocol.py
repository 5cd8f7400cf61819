"""The one history interface every layer uses; backends (SQLite, PostgreSQL) implement it.

Callers never learn where the history lives: `open_history(url)` returns a `HistoryStore`, opened once per
decision and passed down to the monitor, the private-split discipline and the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from rlgate.store.records import CheckpointRecord, CounterRecord


@runtime_checkable
class HistoryStore(Protocol):
    """Gated checkpoints, counters, private-split consultations and judge calibrations of one project.

    Every write is one transaction: concurrent gate jobs sharing a store lose nothing.
    """

    #: where the store lives, safe to print (a DSN's password redacted to ***)
    location: str

    # checkpoints ---------------------------------------------------------------------------------
    def record(self, run: str, step: int, checkpoint: str, metrics: Mapping[str, float],
               decision: str | None = None, extra: Mapping[str, Any] | None = None,
               contract: str | None = None) -> CheckpointRecord: ...

    def history(self, run: str) -> list[CheckpointRecord]: ...

    def runs(self) -> list[str]: ...

    def best(self, run: str, metric: str, higher_is_better: bool = True,
             contract: str | None = None) -> CheckpointRecord | None: ...

    # counters and consultations ------------------------------------------------------------------
    def bump_counter(self, run: str, key: str, by: int = 1) -> int: ...

    def counter(self, run: str, key: str) -> int: ...

    def counters(self, run: str) -> dict[str, int]: ...

    def record_consultations(self, run: str, tasks: Sequence[str]) -> dict[str, int]: ...

    def consultations(self, run: str) -> dict[str, int]: ...

    # judge calibration ---------------------------------------------------------------------------
    def last_judge_calibration(self, key: str) -> dict[str, Any] | None: ...

    def record_judge_calibration(self, key: str, record: dict[str, Any], label: str | None = None) -> None: ...

    # whole-store copy (export / import) ----------------------------------------------------------
    def dump(self) -> tuple[list[CheckpointRecord], list[CounterRecord]]: ...

    def load(self, checkpoints: Sequence[CheckpointRecord], counters: Sequence[CounterRecord]) -> None: ...

    def close(self) -> None: ...
