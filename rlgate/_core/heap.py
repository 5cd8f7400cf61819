"""The C heap's policy for a process that builds and frees large arrays: free memory goes back to the system
between the gate's phases.

glibc serves a block of 128 KiB or more from its own mapping, unmapped when freed, but it raises that
threshold to the size of each such block freed (up to 32 MiB): after the engine frees its first column
of 10^6 values (8 MB), every later column, score matrix and report buffer comes from the heap instead,
and freed heap memory below a block still in use stays with the process. At 10^6 documents a gate kept
~100 MB it no longer used after deciding, on top of both runs' records, through the bad cases and the
reports (docs/performance.md). `malloc_trim(0)` hands every free page of the heap back, wherever it lies;
the gate calls it when a phase has freed its temporaries (`phase_done`), which costs milliseconds.
Fixing the threshold instead (mallopt) kept the peak ~40 MB lower but cost ~1 s of page faults at
10^6 documents, every large temporary mapped afresh.

Only the `rlgate gate` process trims (`gcpause.command_policy` enters `trimming`): a library caller's heap
is its own business, and a process that runs a model is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class _State:
    trim: Callable[[int], int] | None = None  # malloc_trim, inside `trimming` on glibc


@contextmanager
def trimming() -> Iterator[None]:
    """Within it, `phase_done` gives the heap's free pages back (glibc; elsewhere nothing changes)."""
    previous = _State.trim
    _State.trim = _malloc_trim()
    try:
        yield
    finally:
        _State.trim = previous


def phase_done() -> bool:
    """A phase of the gate freed its temporaries: give the heap's free pages back (inside `trimming`).

    True when pages were given back; False outside `trimming`, under another C library, or when none were free."""
    return bool(_State.trim(0)) if _State.trim is not None else False


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"; unknown or empty elsewhere
    except (ValueError, OSError, AttributeError):
        return None
    if not glibc:
        return None
    import ctypes  # here, not at import: the CLI imports this module on every start

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return trim
