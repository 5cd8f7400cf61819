"""The harness registry: name -> harness, imported lazily on first use.

Naming a harness imports nothing heavy, so `import rlgate` and `rlgate gate` on stored results
never pull in lm-eval, torch, vLLM or inspect. A new harness is one package and either one line
here, one `register_harness` call, or (for a package outside rlgate) one entry point
`"harness.<name>" = "module:Class"` in the `rlgate.plugins` group.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate._core.gcpause import collector_paused
from rlgate.harness.base import Harness
from rlgate.registry import Registry
from rlgate.results.integrity import quarantine, quarantine_out_of_range
from rlgate.results.manifest import MANIFEST_FILE
from rlgate.results.models import RunResult
from rlgate.results.shared_scores import share_scores
from rlgate.results.shared_values import SharedValues

#: harness name -> "module:Class" (imported on first use) or a factory.
REGISTRY: Registry[Harness] = Registry("harness", {
    "lm_eval": "rlgate.harness.lmeval:LmEvalHarness",
    "inspect": "rlgate.harness.inspect:InspectHarness",
    "swebench": "rlgate.harness.swebench:SweBenchHarness",
    "bfcl": "rlgate.harness.bfcl:BfclHarness",
    "opencompass": "rlgate.harness.opencompass:OpenCompassHarness",
    "reward": "rlgate.harness.reward:RewardHarness",
})
#: harness name -> "module:Class" (imported on first use) or a factory: the entries registered in code
HARNESSES = REGISTRY.entries
DEFAULT_HARNESS = "lm_eval"


def register_harness(name: str, target: str | Callable[[], Harness]) -> None:
    """Add (or replace) a harness: a "module:Class" string or a zero-argument factory."""
    REGISTRY.register(name, target)


def unregister_harness(name: str) -> None:
    """Remove a harness added with `register_harness` (the built-in lm_eval stays)."""
    REGISTRY.unregister(name, keep=DEFAULT_HARNESS)


def get_harness(name: str = DEFAULT_HARNESS) -> Harness:
    """The harness registered under `name` (in code or by a plugin); unknown: an InputError listing the known ones."""
    harness = REGISTRY.get(name)
    if not isinstance(harness, Harness):
        raise InputError(f"harness '{name}' is a {type(harness).__name__}, not a rlgate.harness.Harness",
                         field="harness", fix="subclass rlgate.harness.Harness (its defaults fill what it leaves out)")
    return harness


def importer_for(task_harness: str, responses: Path) -> Harness | None:
    """A registered importer (a harness whose `imports_for` names `task_harness`) that reads `responses`:
    e.g. a SWE-bench report answering an inspect task. None: the task's own harness imports them."""
    for known in REGISTRY.lazy_names():
        if known == task_harness:
            continue
        harness = get_harness(known)
        if task_harness in harness.imports_for and harness.can_read(responses):
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
    if recorded is not None and recorded in REGISTRY:
        return get_harness(recorded)
    for known in REGISTRY.lazy_names():  # plugins are listed only when no built-in harness reads the path
        harness = get_harness(known)
        if harness.can_read(target):
            return harness
    from rlgate.harness.detect import diagnose

    seen = diagnose(target)  # what the files look like instead, and the way in
    raise InputError(f"no harness recognises these results: they look like {seen[0]}" if seen else
                     "no harness recognises these results (no harness's file names or first bytes match)",
                     file=target, fix=seen[1] if seen else f"give stored outputs of one of: "
                     f"{', '.join(sorted(REGISTRY.names()))}, or name it with --harness")


def read_results(path: str | Path, *, harness: str | None = None, samples: bool = True,
                 shared: SharedValues | None = None) -> RunResult:
    """Stored results at `path` as a RunResult, through the harness that wrote them.

    Whatever the harness, unusable per-sample scores (NaN, infinity, wrong type, outside the range the
    harness's vocabulary gives the metric) leave the samples and are listed on their task
    (`TaskResult.corrupt`), so every adapter reports them the same way: here, unless the harness declares
    `scores_checked` (its reader applies the same type rules while reading; ranges are checked here).
    Equal score tables become one read-only table (`share_scores`); `shared`, one table for the runs of a
    gate, makes this run's documents, prompts, targets and answers the first run's objects where their
    content is the same (`rlgate.results.shared_values`; docs/performance.md has what it saves).
    """
    with collector_paused():
        reader = harness_for(path, harness)
        if shared is None:
            run = reader.read(Path(path), samples=samples)
        else:
            with shared.reading():  # a reader that shares as it reads finds the reference (lm-eval's does)
                run = reader.read(Path(path), samples=samples)
        if not reader.scores_checked:
            quarantine(run)
        quarantine_out_of_range(run, lambda task: reader.vocabulary_of(task).ranges())
        share_scores(run)
        return run if shared is None else shared.share(run)

