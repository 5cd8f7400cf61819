"""Progress for runs: one rich bar per task with its request counts (cached ones shown up front) in a terminal;
in a log (stderr not a terminal, e.g. CI or `2> run.log`) plain lines instead: a task's start, every tenth of it
with its elapsed time, and its end, so a long step is never silent there."""

from __future__ import annotations

import os
import time
from typing import Any


def quiet_environment() -> None:
    """Silence the per-step bars and logs of tqdm, datasets and transformers before they are imported."""
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class RichProgress:
    """A ProgressSink drawn with rich; used as a context manager around a run."""

    def __init__(self, prefix: str = "") -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self.prefix = prefix
        self._progress = Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=self.console)
        self._ids: dict[str, Any] = {}
        self._totals: dict[str, int] = {}
        self.live = self.console.is_terminal
        self._done: dict[str, int] = {}  # log mode: requests done per task, the tenth last reported, its start
        self._reported: dict[str, int] = {}
        self._started: dict[str, float] = {}

    def __enter__(self) -> RichProgress:
        if self.live:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self._progress.stop()

    def task_started(self, task: str, total: int, cached: int) -> None:
        note = f"{cached} cached" if cached else ""
        self._totals[task] = total
        if not self.live:
            self._done[task], self._reported[task], self._started[task] = cached, cached * 10 // max(total, 1), \
                time.monotonic()
            self._line(f"{self.prefix}{task}: {total} request(s){f', {note}' if note else ''}")
            return
        self._ids[task] = self._progress.add_task(f"{self.prefix}{task}", total=total, completed=cached, note=note)

    def advanced(self, task: str, count: int) -> None:
        if task in self._ids:
            self._progress.advance(self._ids[task], count)
        elif task in self._done:
            self._done[task] += count
            tenth = self._done[task] * 10 // max(self._totals[task], 1)
            if tenth > self._reported[task] and self._done[task] < self._totals[task]:
                self._reported[task] = tenth
                self._line(f"{self.prefix}{task}: {self._done[task]}/{self._totals[task]} "
                           f"({time.monotonic() - self._started[task]:.0f} s)")

    def task_finished(self, task: str) -> None:
        if task in self._ids:
            self._progress.update(self._ids[task], completed=self._totals[task])
        elif task in self._done:
            self._line(f"{self.prefix}{task}: done, {self._totals[task]}/{self._totals[task]} "
                       f"({time.monotonic() - self._started.pop(task):.0f} s)")
            del self._done[task]

    def message(self, text: str) -> None:
        if self.live:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            self._line(text)

    def _line(self, text: str) -> None:
        """One plain line, flushed at once (a log read while the run goes on)."""
        import sys

        from rlgate._core.text import visible_controls

        stream = sys.stderr
        stream.write(visible_controls(text) + "\n")
        stream.flush()
