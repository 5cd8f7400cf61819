"""One untrusted program in a throw-away jail: no network, a private read-only root, limits, no secrets.

Each program gets a fresh temporary folder (its cwd, HOME and TMPDIR, the only writable place it sees),
runs under `unshare` in new network, mount and PID namespaces (plus a user namespace when rlgate is
not root), inside a chroot that holds only the system directories and the Python install, read-only,
with CPU, memory, file-size, open-file and process limits and a wall-clock timeout, and an environment
of five fixed variables. Where `unshare` cannot build that (not Linux, namespaces disabled, a container
that forbids them) nothing runs: `SandboxUnavailable`, and the suite's code gates cannot be scored.
docs/sandbox.md lists exactly what this isolates and what it does not.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Status = Literal["passed", "failed", "syntax_error", "timeout", "error"]
_JAIL = Path(__file__).with_name("_jail.py")
_JAIL_FAILED = 120
_NOBODY = 65534
#: exit codes of the in-jail runner (`_RUNNER`)
_SYNTAX, _ASSERTION, _EXCEPTION = 3, 4, 5
_RUNNER = """\
import os, sys, traceback
nonce = sys.stdin.readline().strip()
sys.stdin.close()
with open("/work/.rlgate_paths", encoding="utf-8") as handle:
    sys.path[:0] = [line for line in handle.read().splitlines() if line]
with open("/work/program.py", encoding="utf-8") as handle:
    source = handle.read()
try:
    code = compile(source, "program.py", "exec")
except (SyntaxError, ValueError):
    traceback.print_exc(limit=0)
    sys.stderr.flush()
    os._exit(3)
try:
    exec(code, {"__name__": "__main__"})
except AssertionError:
    traceback.print_exc()
    sys.stderr.flush()
    os._exit(4)
except BaseException:
    traceback.print_exc()
    sys.stderr.flush()
    os._exit(5)
sys.stdout.flush()
os.write(1, ("\\n" + nonce + "\\n").encode())
os._exit(0)
"""


class SandboxUnavailable(RuntimeError):
    """The jail cannot be built on this machine; nothing was run (the gate fails closed)."""


@dataclass(frozen=True)
class Limits:
    """Per-program limits (seconds, bytes, counts); the defaults follow lm-eval's code_eval (3 s)."""

    timeout_s: float = 3.0
    cpu_s: int = 5
    memory_bytes: int = 1 << 30
    file_bytes: int = 16 << 20
    open_files: int = 64
    processes: int = 32


@dataclass(frozen=True)
class Outcome:
    """What happened to one program: passed (ran to its end), failed (an exception), wrong output (an
    assertion failed), a syntax error, or a timeout; `detail` is the end of its error output."""

    status: Status
    wrong_output: bool = False
    detail: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def _unshare() -> list[str]:
    tool = shutil.which("unshare")
    if tool is None or not sys.platform.startswith("linux"):
        raise SandboxUnavailable("running model code needs Linux namespaces through unshare(1) (util-linux), "
                                 "which this machine lacks")
    if os.geteuid() == 0:
        return [tool, "--net", "--mount", "--pid", "--fork", "--kill-child", "--"]
    return [tool, "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork", "--kill-child", "--"]


def _read_only_paths() -> list[str]:
    """The system directories and this interpreter's install, seen read-only inside the jail."""
    paths = ["/usr", "/bin", "/lib", "/lib64", "/lib32", "/dev/null", "/dev/zero", "/dev/urandom"]
    for prefix in (sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))):
        real = os.path.realpath(prefix)
        if not any(real == p or real.startswith(p + "/") for p in paths):
            paths.append(real)
    return paths


def _limits(limits: Limits) -> dict[str, int]:
    return {"RLIMIT_CPU": limits.cpu_s, "RLIMIT_AS": limits.memory_bytes, "RLIMIT_FSIZE": limits.file_bytes,
            "RLIMIT_NOFILE": limits.open_files, "RLIMIT_NPROC": limits.processes, "RLIMIT_CORE": 0}


def _environment() -> dict[str, str]:
    """The whole environment of the program: nothing inherited (no tokens, keys, proxies or paths)."""
    return {"PATH": "/usr/bin:/bin", "HOME": "/work", "TMPDIR": "/work", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}


def _tail(file: Path, size: int = 2000) -> str:
    try:
        with file.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def library_paths() -> tuple[str, ...]:
    """This interpreter's site-packages (read-only inside the jail when asked: MBPP+'s tests import numpy)."""
    import site

    return tuple(p for p in site.getsitepackages() if os.path.isdir(p))


def run_program(program: str, limits: Limits | None = None, libraries: tuple[str, ...] = ()) -> Outcome:
    """Run `program` (Python source) in a fresh jail; raises SandboxUnavailable when no jail can be built.

    `libraries`: folders importable by the program, seen read-only (default: the standard library only)."""
    limits = limits or Limits()
    command = _unshare()
    python = os.path.realpath(sys.executable)
    nonce = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="rlgate-sandbox-") as folder:
        root = Path(folder) / "root"
        work = root / "work"
        work.mkdir(parents=True)
        (work / "program.py").write_text(program, encoding="utf-8", errors="surrogatepass")
        (work / ".rlgate_run.py").write_text(_RUNNER, encoding="utf-8")
        libraries = tuple(os.path.realpath(p) for p in libraries)
        (work / ".rlgate_paths").write_text("".join(p + "\n" for p in libraries), encoding="utf-8")
        drop_to = _NOBODY if os.geteuid() == 0 else None
        if drop_to is not None:
            os.chown(work, drop_to, drop_to)
        spec = {"root": str(root), "python": python, "read_only": [*_read_only_paths(), *libraries], "drop_to": drop_to,
                "limits": _limits(limits), "env": _environment()}
        out_file, err_file = Path(folder) / "stdout", Path(folder) / "stderr"
        started = time.monotonic()
        with out_file.open("wb") as out, err_file.open("wb") as err:
            process = subprocess.Popen([*command, python, "-I", "-S", str(_JAIL), json.dumps(spec)],
                                       stdin=subprocess.PIPE, stdout=out, stderr=err, env=_environment(),
                                       cwd=folder, start_new_session=True, close_fds=True)
            timed_out = False
            try:
                process.communicate(input=(nonce + "\n").encode(), timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(process)
        seconds = time.monotonic() - started
        stderr = _tail(err_file)
        code = process.returncode
        if code == _JAIL_FAILED and "rlgate-sandbox:" in stderr:
            raise SandboxUnavailable(stderr.strip().splitlines()[-1])
        if timed_out or code in (-signal.SIGXCPU, -signal.SIGKILL):
            return Outcome("timeout", detail=stderr[-500:], seconds=seconds)
        if code == 0 and _tail(out_file, 200).rstrip().endswith(nonce):
            return Outcome("passed", seconds=seconds)
        if code == _SYNTAX:
            return Outcome("syntax_error", detail=stderr[-500:], seconds=seconds)
        if code == _ASSERTION:
            return Outcome("failed", wrong_output=True, detail=stderr[-500:], seconds=seconds)
        return Outcome("failed" if code in (_EXCEPTION, 0) else "error", detail=stderr[-500:], seconds=seconds)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The whole session: unshare, the jail's PID 1 and everything it forked."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_programs(programs: list[str], limits: Limits | None = None, workers: int | None = None,
                 libraries: tuple[str, ...] = ()) -> list[Outcome]:
    """Each program in its own jail, a few at a time (the waits release the GIL); order kept."""
    if not programs:
        return []
    available()
    count = workers or max(1, min(8, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(functools.partial(run_program, limits=limits, libraries=libraries), programs))


@functools.lru_cache(maxsize=1)
def _probe() -> str | None:
    try:
        outcome = run_program("x = 1\n", Limits(timeout_s=30.0))
    except SandboxUnavailable as exc:
        return str(exc)
    except OSError as exc:
        return f"unshare could not start ({exc})"
    if not outcome.passed:
        return f"a trivial program did not run in the jail ({outcome.status}: {outcome.detail.strip()[-200:]})"
    return None


def available() -> None:
    """Raise SandboxUnavailable (why, and the fix) unless a trivial program runs in the jail; probed once."""
    problem = _probe()
    if problem is not None:
        raise SandboxUnavailable(f"{problem}; rlgate runs model code only in its sandbox (docs/sandbox.md): run "
                                 "on Linux with util-linux's unshare and namespaces allowed (as root, or with "
                                 "user namespaces enabled: sysctl user.max_user_namespaces > 0)")
