"""Terminal progress for runs: one rich bar per task with its request counts (cached ones shown up front)."""

from __future__ import annotations

import os
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

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def task_started(self, task: str, total: int, cached: int) -> None:
        note = f"{cached} cached" if cached else ""
        self._ids[task] = self._progress.add_task(f"{self.prefix}{task}", total=total, completed=cached, note=note)
        self._totals[task] = total

    def advanced(self, task: str, count: int) -> None:
        if task in self._ids:
            self._progress.advance(self._ids[task], count)

    def task_finished(self, task: str) -> None:
        if task in self._ids:
            self._progress.update(self._ids[task], completed=self._totals[task])

    def message(self, text: str) -> None:
        self._progress.console.print(text, markup=False, highlight=False)
