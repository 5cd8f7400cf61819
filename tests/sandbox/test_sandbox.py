"""The sandbox contains model code: files outside its folder, the network, endless loops, secrets, forks."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from rlgate.sandbox import Limits, SandboxUnavailable, available, run_program
from rlgate.sandbox import process as sandbox_process

try:
    available()
    _WHY = ""
except SandboxUnavailable as exc:  # pragma: no cover - machines without namespaces
    _WHY = str(exc)
pytestmark = pytest.mark.skipif(bool(_WHY), reason=f"no sandbox on this machine: {_WHY}")


def test_a_correct_program_passes_and_a_wrong_answer_is_wrong_output() -> None:
    assert run_program("def f(x):\n    return x + 1\nassert f(1) == 2\n").passed
    wrong = run_program("def f(x):\n    return x\nassert f(1) == 2\n")
    assert (wrong.status, wrong.wrong_output) == ("failed", True)
    assert run_program("def f(:\n").status == "syntax_error"


def test_a_file_outside_the_temp_dir_cannot_be_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the key")
    leaked = run_program(f"print(open({str(secret)!r}).read())\n")
    assert leaked.status == "failed" and "FileNotFoundError" in leaked.detail
    # what the host has outside the system folders is simply not there; the system folders are read-only
    probe = ("import os\nassert not os.path.exists('/etc/passwd')\nassert not os.path.exists('/root/.ssh')\n"
             f"assert not os.path.exists({str(Path.cwd())!r})\nassert os.getcwd() == '/work'\n"
             "try:\n    open('/usr/rlgate-was-here', 'w')\nexcept OSError:\n    pass\nelse:\n    raise SystemExit(1)\n"
             "open('/work/scratch.txt', 'w').write('ok')\n")
    assert run_program(probe).passed


def test_a_socket_cannot_reach_anything() -> None:
    outcome = run_program("import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('1.1.1.1', 80))\n")
    assert outcome.status == "failed" and "unreachable" in outcome.detail.lower()
    local = run_program("import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', 22))\n")
    assert local.status == "failed"
    dns = run_program("import socket\nsocket.getaddrinfo('pypi.org', 443)\n")
    assert dns.status == "failed"


def test_an_endless_loop_is_stopped_at_the_timeout() -> None:
    started = time.monotonic()
    outcome = run_program("while True:\n    pass\n", Limits(timeout_s=1.5))
    assert outcome.status == "timeout"
    assert time.monotonic() - started < 10
    spawned = run_program("import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
                          "while True:\n    pass\n", Limits(timeout_s=1.5))
    assert spawned.status == "timeout"


def test_no_secret_of_the_environment_is_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    monkeypatch.setenv("HF_TOKEN", "hf_do_not_leak")
    probe = ("import os\nassert 'OPENAI_API_KEY' not in os.environ and 'HF_TOKEN' not in os.environ\n"
             "assert os.environ['HOME'] == '/work'\nassert sorted(os.environ) == "
             "['HOME', 'LANG', 'PATH', 'PYTHONHASHSEED', 'TMPDIR']\n")
    assert run_program(probe).passed


def test_memory_forks_and_file_size_are_limited() -> None:
    assert run_program("x = bytearray(8 << 30)\n").status == "failed"
    forks = run_program("import os\nfor _ in range(200):\n    os.fork()\n", Limits(processes=8))
    assert forks.status in ("failed", "timeout")
    big = run_program("open('/work/big', 'wb').write(b'x' * (64 << 20))\n", Limits(file_bytes=1 << 20))
    assert big.status in ("failed", "error")


def test_leaving_early_is_not_passing() -> None:
    """A program that exits before its tests ran (sys.exit / os._exit) has not passed them."""
    assert not run_program("import sys\nsys.exit(0)\nassert False\n").passed
    assert not run_program("import os\nos._exit(0)\nassert False\n").passed


def test_without_unshare_nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    sandbox_process._probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="unshare"):
            available()
        with pytest.raises(SandboxUnavailable):
            run_program("x = 1\n")
    finally:
        monkeypatch.undo()
        sandbox_process._probe.cache_clear()
    assert sys.platform.startswith("linux")
