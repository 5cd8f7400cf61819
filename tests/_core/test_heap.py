"""A `rlgate gate` process gives large freed blocks back to the system (glibc), checked in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_FREED = """
import sys
from rlgate._core.heap import return_large_blocks

def rss_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 >> 20

took = return_large_blocks() if sys.argv[1] == "policy" else None
first = bytearray(8 << 20)
del first  # glibc raises its threshold past 8 MiB: the next 4 MiB blocks come from the heap
before = rss_mib()
pairs = [(bytearray(4 << 20), bytearray(64 << 10)) for _ in range(16)]  # 64 MiB written (zero-filled)
kept = [small for _, small in pairs]  # each freed large block lies under a small one still in use
del pairs
print(took, rss_mib() - before)
"""


def _kept_after_free(mode: str) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", _FREED, mode], capture_output=True, text=True, check=True)
    took, kept = done.stdout.split()
    return took, int(kept)


def _glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError, AttributeError):
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc(), reason="glibc's malloc policy")
def test_with_the_policy_freed_large_blocks_leave_the_process() -> None:
    took, kept = _kept_after_free("policy")
    assert took == "True"
    assert kept < 16, f"64 MiB of freed 4 MiB blocks should leave the process; {kept} MiB stayed"
    took, kept = _kept_after_free("default")  # the check can fail: without the policy they stay
    assert took == "None" and kept >= 48, f"glibc's default keeps freed heap blocks under one in use ({kept} MiB)"


def test_only_the_gate_process_sets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Library callers and CliRunner never enter `executable`: the policy leaves their heap as it is."""
    import rlgate._core.gcpause as gcpause

    called: list[bool] = []
    monkeypatch.setattr(gcpause, "return_large_blocks", lambda: called.append(True) or True)
    with gcpause.command_policy():
        pass
    assert called == []
    monkeypatch.setattr(gcpause, "gc", type("NoFreeze", (), {"freeze": staticmethod(lambda: None)}))
    with gcpause.executable(), gcpause.command_policy():
        pass
    assert called == [True]
