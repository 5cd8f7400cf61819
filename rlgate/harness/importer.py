"""The shared base of importers: harnesses that score another tool's stored outputs instead of running tasks.

BFCL result files and SWE-bench reports answer the contract's inspect tasks (`imports_for`); `rlgate eval
--responses FILES` copies the files into the run folder and writes the run manifest the same way for each,
so the scaffolding (copying, timing, the manifest's fixed fields for an import) lives here once.
"""

from __future__ import annotations

import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from rlgate._core.files import write_text_atomic
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.harness.base import Harness, RunPlan
from rlgate.results.manifest import MANIFEST_FILE, RunManifest, TaskRun


class ImporterHarness(Harness):
    """A read-only harness whose `run` imports `--responses` files into a run folder with a manifest."""

    imports_for: ClassVar[tuple[str, ...]] = ("inspect",)  # a task of its own harness is read by it directly

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        return RunPlan(contract=contract, tasks=tasks, out_dir=out_dir, cache_dir=cache_dir, **options)  # type: ignore[arg-type]

    @staticmethod
    def started() -> tuple[float, str]:
        """(monotonic start, ISO timestamp) of an import, for the manifest's `started` and `wall_time_s`."""
        return time.monotonic(), datetime.now(timezone.utc).isoformat(timespec="seconds")

    @staticmethod
    def copy_files(files: list[Path], target: Path, root: Path | None = None) -> None:
        """Copy the imported files into `target` (replaced whole), keeping their paths below `root` if given."""
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for file in files:
            dest = target / (file.relative_to(root) if root is not None else file.name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, dest)

    def write_manifest(self, plan: RunPlan, *, started: tuple[float, str], runs: list[TaskRun], fingerprint: str,
                       model_spec: dict[str, Any], protocol_hash: str, protocol: dict[str, Any], results_file: str,
                       benchmark_tasks: set[str], library_versions: dict[str, str] | None = None) -> RunManifest:
        """The run manifest of an import (responses, no model loaded), written beside the copied files."""
        assert plan.responses is not None
        manifest = RunManifest(
            harness=self.name, harness_version=self.version(), contract=str(plan.contract.path),
            contract_name=plan.contract.name, role=plan.role, checkpoint=str(plan.responses),
            checkpoint_kind="responses", checkpoint_fingerprint=fingerprint, backend="responses",
            model_spec=model_spec, protocol_hash=protocol_hash, protocol=protocol, started=started[1],
            wall_time_s=round(time.monotonic() - started[0], 3), model_loaded=False, tasks=runs,
            **({"library_versions": library_versions} if library_versions is not None else {}),
            benchmark_versions={t.name: t.benchmark_version for t in plan.tasks if t.name in benchmark_tasks},
            task_visibility={t.name: t.visibility for t in plan.tasks}, results_file=results_file)
        write_text_atomic(plan.out_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2))
        return manifest
