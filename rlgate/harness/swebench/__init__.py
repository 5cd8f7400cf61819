"""SWE-bench harness reports behind the harness port: an importer, since rlgate never runs SWE-bench itself.

Teams evaluate coding agents with the official harness (Docker, one container per instance); rlgate
reads what it wrote. `rlgate gate` reads a report (or a folder of them) directly; `rlgate eval
--responses REPORT` imports it as the contract's SWE-bench task (`inspect_evals/swe_bench*`, or a
task with `harness: swebench`) into a run folder with a run manifest. The reading is in `report`.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedTask
from rlgate.harness.base import RunOutcome, RunPlan
from rlgate.harness.importer import ImporterHarness
from rlgate.results.manifest import Drops, TaskRun, stored_import
from rlgate.results.models import RunResult

REPORTS = "swebench"


def is_swebench_task(task: ResolvedTask) -> bool:
    """A contract task a SWE-bench report answers: `harness: swebench`, or an inspect-evals SWE-bench task."""
    return task.harness == "swebench" or task.entry.task.split("/")[-1].startswith("swe_bench")


class SweBenchHarness(ImporterHarness):
    """Reads SWE-bench harness reports; `run` imports them (`--responses`), it never evaluates a model."""

    name = "swebench"
    #: the tasks of these harnesses may be answered by a SWE-bench report (`rlgate eval --responses`)

    def version(self) -> str | None:
        try:
            return metadata.version("swebench")
        except metadata.PackageNotFoundError:
            return None

    def can_read(self, path: Path) -> bool:
        from rlgate.harness.swebench.report import INSTANCE_REPORT, looks_like_summary, summary_files

        if path.is_file():
            return path.suffix == ".json" and (path.name == INSTANCE_REPORT or looks_like_summary(path))
        if not path.is_dir():
            return False
        if summary_files(path):
            return True
        return any(next(path.glob("/".join(["*"] * depth + [INSTANCE_REPORT])), None) is not None
                   for depth in range(7))

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        """A report or folder; an rlgate import folder keeps the contract's task name from its run manifest."""
        from rlgate.harness.swebench.report import read_reports

        stored = stored_import(path, self.name, REPORTS)
        if stored is None or not stored[0].tasks:
            return read_reports(path, self.version(), samples=samples)
        manifest, files = stored
        return manifest.attach_to(read_reports(files, self.version(), task=manifest.tasks[0].task, samples=samples))

    def run(self, plan: RunPlan) -> RunOutcome:
        """Import `plan.responses` (a SWE-bench report) as the contract's one SWE-bench task."""
        from rlgate.harness.swebench.report import collect, dataset_name, task_result

        if plan.responses is None:
            raise InputError("rlgate does not run the SWE-bench harness itself", field="--checkpoint",
                             fix="run `python -m swebench.harness.run_evaluation` (it needs Docker), then give its "
                                 "report with `rlgate eval --responses REPORT` or `rlgate gate --candidate REPORT`")
        started = self.started()
        task = self._task(plan)
        instances, files = collect(plan.responses)
        dataset = dataset_name(plan.responses, files)
        result = task_result(task.name, instances, dataset)
        target = plan.out_dir / REPORTS
        self.copy_files(files, target, plan.responses if plan.responses.is_dir() else plan.responses.parent)
        drops = Drops.of_trajectories(result.samples, lambda sample, _: str(sample.extra["swebench_status"]))
        digest = "swebench:" + ",".join(f"{i}={instances[i].status}" for i in sorted(instances))
        fingerprint = hashlib.sha256(digest.encode("utf-8")).hexdigest()[:16]
        run = TaskRun(task=task.name, suite_task=task.entry.task, task_hash=fingerprint, dataset=dataset or "",
                      documents=len(result.samples), requests=len(result.samples), cached=len(result.samples),
                      drops=drops)
        manifest = self.write_manifest(
            plan, started=started, runs=[run], fingerprint=f"swebench:{fingerprint}",
            model_spec={"swebench_report": plan.responses.name}, protocol_hash="swebench-report",
            protocol={"source": "swebench_harness_report"}, results_file=REPORTS, benchmark_tasks={task.name})
        plan.progress.message(f"imported {len(result.samples)} SWE-bench instances from {plan.responses} as "
                              f"'{task.name}' ({drops.total} errored, empty-patch or incomplete: failures)")
        return RunOutcome(plan.out_dir, target, manifest, False)

    @staticmethod
    def _task(plan: RunPlan) -> ResolvedTask:
        found = [t for t in plan.tasks if is_swebench_task(t)]
        if len(found) != 1:
            listed = ", ".join(t.name for t in plan.tasks)
            raise InputError(("no" if not found else "more than one") + f" SWE-bench task among the contract's tasks "
                             f"({listed}) for this SWE-bench report", file=plan.responses,
                             fix="list exactly one task `inspect_evals/swe_bench` (or one with `harness: swebench`) "
                                 "in the suites, or pick its split with --split")
        others = [t.name for t in plan.tasks if t is not found[0]]
        if others and not plan.responded_only:
            raise InputError(f"this SWE-bench report answers only '{found[0].name}', not {', '.join(others)}",
                             file=plan.responses, fix="pass --responded-only to import it alone (the other tasks "
                             "then have no results, and their gates are nodata)")
        return found[0]


__all__ = ["SweBenchHarness", "is_swebench_task"]
