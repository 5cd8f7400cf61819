"""Inside the new namespaces, before the model's program runs: a private read-only root, limits, then exec.

Run by `rlgate.sandbox.process` as `python -I -S _jail.py SPEC_JSON` under `unshare` (new network,
mount and PID namespaces; a user namespace too when rlgate is not root). It bind-mounts the system
directories and the Python install read-only into the sandbox's root folder, chroots there, drops to
`nobody` when it started as root, sets the resource limits and replaces itself with the interpreter
that runs the program. Standard library only (it runs with -S, before any of rlgate is importable).
Exit 120 means the jail could not be built: the caller fails closed instead of scoring anything.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
JAIL_FAILED = 120


def _fail(message: str) -> None:
    sys.stderr.write(f"rlgate-sandbox: {message}\n")
    sys.stderr.flush()
    os._exit(JAIL_FAILED)


def _mount(libc: ctypes.CDLL, source: str | None, target: str, flags: int) -> None:
    done = libc.mount(source.encode() if source else None, target.encode(), None, flags, None)
    if done != 0:
        errno = ctypes.get_errno()
        _fail(f"mount {source} -> {target} failed: {os.strerror(errno)}")


def _bind_read_only(libc: ctypes.CDLL, root: str, path: str) -> None:
    """`path` visible at the same place inside `root`, read-only (symlinks such as /lib -> usr/lib copied)."""
    inside = root + path
    if os.path.islink(path):
        os.makedirs(os.path.dirname(inside), exist_ok=True)
        if not os.path.lexists(inside):
            os.symlink(os.readlink(path), inside)
        return
    if not os.path.exists(path):
        return
    if os.path.isdir(path):
        os.makedirs(inside, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(inside), exist_ok=True)
        if not os.path.exists(inside):
            open(inside, "a").close()  # an empty file to mount over
    _mount(libc, path, inside, MS_BIND | MS_REC)
    locked = os.statvfs(path).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mount(libc, None, inside, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | locked)


def _limits(spec: dict[str, int]) -> None:
    for name, value in spec.items():
        which = getattr(resource, name)
        resource.setrlimit(which, (value, value))


def main() -> None:
    spec = json.loads(sys.argv[1])
    root, python = spec["root"], spec["python"]
    libc = ctypes.CDLL(None, use_errno=True)
    _mount(libc, None, "/", MS_REC | MS_PRIVATE)  # nothing mounted here propagates back to the host
    for path in spec["read_only"]:
        _bind_read_only(libc, root, path)
    os.chroot(root)
    os.chdir("/work")
    if spec["drop_to"] is not None:
        uid = int(spec["drop_to"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    _limits(spec["limits"])
    os.execve(python, [python, "-I", "-S", "-B", "/work/.rlgate_run.py"], spec["env"])


if __name__ == "__main__":
    try:
        main()
    except OSError as exc:
        _fail(f"{type(exc).__name__}: {exc}")
