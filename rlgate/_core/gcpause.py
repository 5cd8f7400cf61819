"""Python's cyclic garbage collector paused while rlgate builds many small objects that form no cycles.

Reading a run allocates a few objects per sample line; each 700 allocations the collector walks the young
objects, and ever more often the old ones, so on a 12,000-document pair it took about as long as the
reading itself. Nothing read or decided forms reference cycles that must be freed early, so the collector
is paused while a run is read (`harness.read_results`) and while the engine, badcases and reports work
(`pipeline`), and its previous state restored after (nesting is fine); reference counting still frees
everything as usual. The gate's sources (monitor logs, contamination index, an LLM judge that may run for
minutes) run with the collector as the caller left it.

The `rlgate` executable goes one step further (`executable` in cli.app.main, `command_policy` around a
command), because there the process ends when the command does:

- A pause only postpones the walk: the first collection after it walks every object built meanwhile
  (about 12 ms after reading each 12,000-document run). In `rlgate gate`, whose paused work all lives until
  the process exits (the imported modules, both runs, the decision and its reports), every object the
  collector tracks is frozen (`gc.freeze`: moved where the collector never looks) when a pause ends,
  before the collector resumes.
- At the end of the command everything is frozen, so the interpreter's final collection at exit does not
  walk every sample object once more (about 45 ms on that pair).

The process then ends as any Python process does (an `os._exit` after the command, skipping the teardown,
saved ~1 % of a gate on that pair and was removed; docs/performance.md).

Frozen objects are still freed by reference counting; only garbage cycles among them are never collected
(and their finalizers never run), which is why only `gate`, which runs no model, uses the policy:
`rlgate check` runs lm-eval, vLLM or transformers in its process, whose cleanup may rely on the collector.
Library callers and in-process CLI tests (typer's CliRunner) never enter `executable`, so for them the
policy does nothing and the collector's generations stay as they were.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from rlgate._core.heap import trimming


class _Policy:
    """What the current process allows (module state: the collector is process-wide too)."""

    executable = False  # inside cli.app.main: the process ends when the command does
    freeze_paused = False  # a pause ends by freezing every tracked object, before the collector resumes


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _Policy.freeze_paused:
                gc.freeze()
            gc.enable()


@contextmanager
def executable() -> Iterator[None]:
    """The `rlgate` process itself runs the command: `command_policy` may freeze (only cli.app.main enters this)."""
    previous = _Policy.executable
    _Policy.executable = True
    try:
        yield
    finally:
        _Policy.executable = previous


@contextmanager
def command_policy() -> Iterator[None]:
    """The collector policy of a command that runs no model, in the `rlgate` executable only (not library use,
    not CliRunner): everything a pause builds lives until the process exits (reading stored results and
    deciding), so it is frozen when the pause ends, and everything is frozen when the command ends, before
    the interpreter's final collection. Free heap pages go back to the system between the gate's phases (`heap`)."""
    if not _Policy.executable:
        yield
        return
    previous = _Policy.freeze_paused
    _Policy.freeze_paused = True
    try:
        with trimming():  # the C heap's policy of such a process (`heap`)
            yield
    finally:
        _Policy.freeze_paused = previous
        gc.freeze()
