"""The harness registry: name -> harness, imported lazily on first use.

Naming a harness imports nothing heavy, so `import rlgate` and `rlgate gate` on stored results
never pull in lm-eval, torch, vLLM or inspect. A new harness is one package and one line here
(or one `register_harness` call, e.g. from a plugin or a test).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path

from rlgate.errors import InputError
from rlgate.gcpause import collector_paused
from rlgate.harness.base import Harness
from rlgate.results.integrity import quarantine
from rlgate.results.manifest import MANIFEST_FILE
from rlgate.results.models import RunResult

#: harness name -> "module:Class" (imported on first use) or a factory.
HARNESSES: dict[str, str | Callable[[], Harness]] = {
    "lm_eval": "rlgate.harness.lmeval:LmEvalHarness",
    "inspect": "rlgate.harness.inspect:InspectHarness",
    "swebench": "rlgate.harness.swebench:SweBenchHarness",
    "bfcl": "rlgate.harness.bfcl:BfclHarness",
}
DEFAULT_HARNESS = "lm_eval"


def register_harness(name: str, target: str | Callable[[], Harness]) -> None:
    """Add (or replace) a harness: a "module:Class" string or a zero-argument factory."""
    HARNESSES[name] = target


def unregister_harness(name: str) -> None:
    """Remove a harness added with `register_harness` (the built-in lm_eval stays)."""
    if name != DEFAULT_HARNESS:
        HARNESSES.pop(name, None)


def get_harness(name: str = DEFAULT_HARNESS) -> Harness:
    """The harness registered under `name`; an unknown name is an InputError listing the known ones."""
    target = HARNESSES.get(name)
    if target is None:
        raise InputError(f"unknown harness '{name}'", field="harness",
                         fix=f"known harnesses: {', '.join(sorted(HARNESSES))}")
    if callable(target):
        return target()
    module_name, _, cls_name = target.partition(":")
    harness: Harness = getattr(importlib.import_module(module_name), cls_name)()
    return harness


def importer_for(task_harness: str, responses: Path) -> Harness | None:
    """A registered importer (a harness whose `imports_for` names `task_harness`) that reads `responses`:
    e.g. a SWE-bench report answering an inspect task. None: the task's own harness imports them."""
    for known in list(HARNESSES):
        if known == task_harness:
            continue
        harness = get_harness(known)
        if task_harness in getattr(harness, "imports_for", ()) and harness.can_read(responses):
            return harness
    return None


def _manifest_harness(path: Path) -> str | None:
    """The harness a run manifest beside `path` names (v1 manifests were all lm-eval's)."""
    folder = path if path.is_dir() else path.parent
    for candidate in (folder / MANIFEST_FILE, folder.parent / MANIFEST_FILE):
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                return None  # the harness's own reader reports the corrupt manifest
            if isinstance(data, dict):
                return str(data.get("harness") or DEFAULT_HARNESS)
    return None


def harness_for(path: str | Path, name: str | None = None) -> Harness:
    """The harness that reads `path`: the one named, the one its manifest names, or the first that can."""
    target = Path(path)
    if name is not None:
        return get_harness(name)
    if not target.exists():
        raise InputError("results path does not exist", file=target,
                         fix="point at a harness's output folder or file (e.g. lm_eval --output_path DIR)")
    recorded = _manifest_harness(target)
    if recorded is not None and recorded in HARNESSES:
        return get_harness(recorded)
    for known in list(HARNESSES):
        harness = get_harness(known)
        if harness.can_read(target):
            return harness
    raise InputError("no harness recognises these results", file=target,
                     fix=f"give stored outputs of one of: {', '.join(sorted(HARNESSES))}, or name it with --harness")


def read_results(path: str | Path, *, harness: str | None = None, samples: bool = True) -> RunResult:
    """Stored results at `path` as a RunResult, through the harness that wrote them.

    Whatever the harness, unusable per-sample scores (NaN, infinity, wrong type) leave the samples
    and are listed on their task (`TaskResult.corrupt`), so every adapter reports them the same way: here,
    unless the harness declares `scores_checked` (its reader applies the same rules while reading).
    """
    with collector_paused():
        reader = harness_for(path, harness)
        run = reader.read(Path(path), samples=samples)
        return run if getattr(reader, "scores_checked", False) else quarantine(run)

