"""A `rlgate gate` process gives the heap's free pages back between phases (glibc), checked in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_FREED = """
import sys
from rlgate._core.heap import phase_done, trimming

def rss_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 >> 20

first = bytearray(8 << 20)
del first  # glibc raises its mmap threshold past 8 MiB: the next 4 MiB blocks come from the heap
before = rss_mib()
pairs = [(bytearray(4 << 20), bytearray(64 << 10)) for _ in range(16)]  # 64 MiB written (zero-filled)
kept = [small for _, small in pairs]  # each freed large block lies under a small one still in use
del pairs
freed = rss_mib() - before
if sys.argv[1] == "gate":
    with trimming():
        given = phase_done()
else:
    given = phase_done()
print(freed, given, rss_mib() - before)
"""


def _run(mode: str) -> tuple[int, str, int]:
    done = subprocess.run([sys.executable, "-c", _FREED, mode], capture_output=True, text=True, check=True)
    freed, given, after = done.stdout.split()
    return int(freed), given, int(after)


def _glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError, AttributeError):
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc(), reason="glibc's malloc")
def test_a_phase_done_gives_freed_heap_blocks_back() -> None:
    kept, given, after = _run("gate")
    assert kept >= 48, f"glibc keeps freed heap blocks under one in use (the case trimming is for): {kept} MiB"
    assert given == "True" and after < 16, f"{kept} MiB freed but kept; {after} MiB after the phase ended"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_outside_the_gate_process_nothing_is_trimmed() -> None:
    kept, given, after = _run("library")
    assert kept >= 48, f"glibc keeps freed heap blocks under one in use (the case trimming is for): {kept} MiB"
    assert given == "False" and after >= kept - 8


def test_only_the_gate_command_trims(monkeypatch: pytest.MonkeyPatch) -> None:
    """Library callers and CliRunner never enter `executable`: the policy leaves their heap as it is."""
    from rlgate._core import gcpause, heap

    monkeypatch.setattr(gcpause, "gc", type("NoFreeze", (), {"freeze": staticmethod(lambda: None)}))
    with gcpause.command_policy():
        assert heap._State.trim is None
    with gcpause.executable(), gcpause.command_policy():
        assert heap._State.trim is not None or not _glibc()
    assert heap._State.trim is None
