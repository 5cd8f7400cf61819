"""The C heap's policy for a process that builds and frees large arrays: freed blocks go back to the system.

glibc serves a block of 128 KiB or more from its own mapping, unmapped when freed, but it raises that
threshold to the size of each such block freed (up to 32 MiB): after the engine frees its first column
of 10^6 values (8 MB), every later column, score matrix and report buffer comes from the heap instead,
and freed heap memory below a block still in use stays with the process. At 10^6 documents a gate kept
~100 MB it no longer used after deciding, on top of both runs' records, through the bad cases and the
reports (docs/performance.md). Fixing the threshold at glibc's initial value keeps every large block in
its own mapping. It costs a mapping per large block, which a gate's few hundred blocks do not feel; a
process that runs a model (torch allocates and frees large blocks at every step) is left as it is, so
only the `rlgate gate` process sets it (`gcpause.command_policy`).
"""

from __future__ import annotations

import ctypes
import os

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number, glibc's malloc.h
_INITIAL_THRESHOLD = 128 * 1024  # glibc's default, before any block freed raises it


def return_large_blocks() -> bool:
    """Keep blocks of 128 KiB or more in their own mappings for the rest of the process (glibc only).

    True when glibc took the setting; False under another C library (musl, macOS), which is left as it is."""
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"; unknown or empty elsewhere
    except (ValueError, OSError, AttributeError):
        return False
    if not glibc:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _INITIAL_THRESHOLD))
