"""inspect-ai behind the harness port: agent and tool-use tasks, run live or read from `.eval` logs.

This module is light: `InspectHarness` imports inspect_ai only inside `read` and `run`, so naming
the harness (the registry, `rlgate validate`) never does. Results carry one sample per (task,
sample id, epoch) with its trajectory; agent metrics are defined in `rlgate.results.agent_metrics`.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from rlgate._core.errors import MissingExtraError
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.harness.base import Harness, RunOutcome, RunPlan, TaskRequirements
from rlgate.results.manifest import MANIFEST_FILE, load_manifest
from rlgate.results.models import RunResult
from rlgate.results.shard import ShardManifest

_HEAVY = ("inspect_ai", "inspect_evals")


def is_json_log(path: Path) -> bool:
    """A JSON-format inspect log (`--log-format json`, and every log before `.eval`, versions 1 and 2):
    a cheap look at its first bytes for the top-level `version` / `status` / `eval` keys inspect writes first."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    start = head.lstrip()
    return (start.startswith(b"{") and re.match(rb'\{\s*"version"\s*:\s*\d+\s*,', start) is not None
            and b'"eval"' in head and b'"status"' in head)


def _require_inspect(what: str) -> None:
    import importlib.util

    if importlib.util.find_spec("inspect_ai") is None:
        raise MissingExtraError.for_extra(what, "agent", "inspect_ai")


class InspectHarness(Harness):
    """inspect-ai: `inspect_ai.eval` with the contract's model, GenerateConfig, limits and epochs; `.eval` logs."""

    name = "inspect"
    runs_agents = True
    #: shard K of N runs the K-th range of each dataset; the merge joins the shards' logs (`inspect.shards`)
    runs_shards = True
    samples_hint = "give the .eval log itself (inspect logs every sample unless run with --no-log-samples)"

    def version(self) -> str | None:
        try:
            return metadata.version("inspect-ai")
        except metadata.PackageNotFoundError:
            return None

    def can_read(self, path: Path) -> bool:
        if path.is_file():
            return path.suffix == ".eval" or (path.suffix == ".json" and is_json_log(path))
        if not path.is_dir():
            return False
        return any(next(folder.glob("*.eval"), None) is not None
                   or any(is_json_log(f) for f in sorted(folder.glob("*.json"))[:64])
                   for folder in (path, path / "logs"))

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        """`.eval` logs (a file or a folder) with rlgate's run manifest attached when rlgate produced them."""
        _require_inspect("reading inspect logs")
        from rlgate.harness.inspect.log import read_logs

        run = read_logs(path, self.version(), samples=samples)
        folder = path if path.is_dir() else path.parent
        for candidate in (folder / MANIFEST_FILE, folder.parent / MANIFEST_FILE):
            if candidate.is_file():
                manifest = load_manifest(candidate)
                if manifest.harness == self.name:
                    manifest.attach_to(run)
                break
        return run

    def requirements(self, task: ResolvedTask) -> TaskRequirements:
        from rlgate.harness.inspect.catalog import missing, needs, notes

        return TaskRequirements(needs(task), missing(task), notes(task))

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        plan = self.own_plan(contract, tasks, out_dir, cache_dir, **options)
        if options.get("checkpoint") is not None and options.get("responses") is None \
                and not options.get("cached_only"):  # a merge joins logs: it runs nothing, needs no Docker
            from rlgate.harness.inspect.catalog import check_requirements

            for task in tasks:  # at plan time: a missing Docker or package stops the run before any model time
                check_requirements(task)
        return plan

    def run(self, plan: RunPlan) -> RunOutcome:
        _require_inspect("running agent tasks")
        from rlgate.harness.inspect.runner import InspectRunner

        return InspectRunner().run(plan)

    def assemble(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> RunOutcome:
        """The shards' logs joined (no cache is written: `merge_generations` does nothing)."""
        _require_inspect("merging shards of agent tasks")
        from rlgate.harness.inspect.runner import InspectRunner

        return InspectRunner().merge(plan, shards)


__all__ = ["InspectHarness", "is_json_log"]
