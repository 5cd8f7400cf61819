"""What a decision depends on besides the runs, and the one hash over it (`Decision.contract_hash`).

Every file the gate reads to decide is hashed by name and bytes: the contract, its suites, its gate
policies, the judge's calibration anchors, the monitor's policy file, local task code (an lm-eval task
folder or file with its Python helpers, an inspect task file) and local data files. Changing any of them
changes the hash, so two decisions with one hash were made under one definition of the gate. A file that
cannot be read hashes as `<missing>` (the part that reads it reports it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract

#: folders inside a task folder that hold no task definition (caches, version control)
_SKIPPED = frozenset({"__pycache__", ".git", ".ipynb_checkpoints"})


def referenced_files(resolved: ResolvedContract) -> list[Path]:
    """Contract, suites, gate policies, judge anchors, monitor policy, local task paths and data files (a task
    folder as itself: `hashed_files` expands it), each once, in that order."""
    contract = resolved.contract
    judges = [contract.judge, *(t.entry.judge for t in resolved.tasks)]
    anchors = [resolved.resolve_path(j.calibration.anchors) for j in judges if j is not None and j.calibration]
    monitor = [resolved.resolve_path(contract.monitor.policy)] if contract.monitor and contract.monitor.policy else []
    tasks: list[Path] = []
    for task in resolved.tasks:
        if task.path is not None:
            tasks.append(task.path)
        data = task.data_files
        tasks += [Path(data)] if isinstance(data, str) else [Path(v) for v in (data or {}).values()]
    return list(dict.fromkeys([resolved.path, *resolved.suite_files, *resolved.policy_files, *anchors, *monitor,
                               *tasks]))


def hashed_files(resolved: ResolvedContract) -> Iterator[tuple[str, Path]]:
    """(name, file) of every file the hash covers: a referenced folder gives each file under it, named by its
    path inside the folder (sorted), so adding, removing or renaming a task's helper changes the hash."""
    for file in referenced_files(resolved):
        if not file.is_dir():
            yield file.name, file
            continue
        inside = sorted(p for p in file.rglob("*") if p.is_file() and not _SKIPPED & set(p.relative_to(file).parts))
        for path in inside:
            yield f"{file.name}/{path.relative_to(file).as_posix()}", path


def content_hash(resolved: ResolvedContract) -> str:
    """sha256 over every file the decision depends on (name and bytes)."""
    digest = hashlib.sha256()
    for name, file in hashed_files(resolved):
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()
