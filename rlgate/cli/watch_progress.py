"""What `rlgate watch` shows while it runs: a rich live panel in a terminal (the step being gated, its task's
progress, the last decisions), or in a log one plain line per step (and per change of what it waits for)."""

from __future__ import annotations

import sys
import time
from typing import Any

from rlgate._core.text import visible_controls
from rlgate.watch.control import ControlSignal
from rlgate.watch.state import StepRecord

RECENT = 6


class WatchStatus:
    """A WatchObserver for the terminal; a context manager around the watch."""

    def __init__(self, run: str, live: bool | None = None) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.live = self.console.is_terminal if live is None else live
        self.run = run
        self._live: Any = None
        self._current = ""
        self._task = ""
        self._done = self._total = 0
        self._waiting = ""
        self._recent: list[str] = []
        self._started = time.monotonic()

    def __enter__(self) -> WatchStatus:
        if self.live:
            from rich.live import Live

            self._live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.stop()

    # WatchObserver -------------------------------------------------------------------------------------
    def step_started(self, step: int, checkpoint: str, splits: list[str]) -> None:
        self._current, self._task, self._done, self._total = f"step {step} ({', '.join(splits)})", "", 0, 0
        self._started = time.monotonic()
        self._waiting = ""
        if not self.live:
            self._line(f"gating step {step}: {checkpoint} on {', '.join(splits)}")
        self._refresh()

    def step_finished(self, record: StepRecord, signal: ControlSignal | None) -> None:
        took = time.monotonic() - self._started
        if record.status == "gated":
            text = (f"step {record.step}: {record.decision}, asks {record.action}; run signal "
                    f"{signal.action if signal else '?'} ({took:.0f} s)")
        else:
            text = f"step {record.step}: {record.status}: {record.note}"
        self._recent = [*self._recent[-(RECENT - 1):], text]
        self._current = ""
        if not self.live:
            self._line(text)
            if signal is not None and signal.stops and signal.step == record.step:
                for reason in signal.reasons:
                    self._line(f"  why: {reason}")
        self._refresh()

    def waiting(self, text: str) -> None:
        if text != self._waiting and not self.live:
            self._line(text)
        self._waiting = text
        self._refresh()

    # ProgressSink --------------------------------------------------------------------------------------
    def task_started(self, task: str, total: int, cached: int) -> None:
        self._task, self._total, self._done = task, total, cached
        self._refresh()

    def advanced(self, task: str, count: int) -> None:
        if task == self._task:
            self._done += count
            self._refresh()

    def task_finished(self, task: str) -> None:
        if task == self._task:
            self._done = self._total
            self._refresh()

    def message(self, text: str) -> None:
        if text.startswith("warning"):
            if self._live is not None:
                self._live.console.print(text, markup=False, highlight=False)
            else:
                self._line(text)

    # drawing -------------------------------------------------------------------------------------------
    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        lines = [Text(f"rlgate watch: training run {self.run}", style="bold")]
        if self._current:
            task = f" - {self._task} {self._done}/{self._total}" if self._task else ""
            lines.append(Text(f"gating {self._current}{task}"))
        elif self._waiting:
            lines.append(Text(self._waiting, style="dim"))
        lines += [Text(f"  {line}") for line in self._recent]
        return Group(*lines)

    @staticmethod
    def _line(text: str) -> None:
        sys.stderr.write(visible_controls(text) + "\n")
        sys.stderr.flush()
