"""Python's cyclic garbage collector paused while rlgate builds many small objects that form no cycles.

Reading a run allocates a few objects per sample line; each 700 allocations the collector walks the young
objects, and ever more often the old ones, so on a 12,000-document pair it took about as long as the
reading itself. Nothing read or decided forms reference cycles that must be freed early, so the collector
is paused while a run is read (`harness.read_results`) and while the engine, badcases and reports work
(`pipeline`), and its previous state restored after (nesting is fine); reference counting still frees
everything as usual. The gate's sources (monitor logs, contamination index, an LLM judge that may run for
minutes) run with the collector as the caller left it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
