"""Official BFCL result files behind the harness port: an importer scored by bfcl-eval's own checker.

`rlgate gate` reads result files (or `bfcl generate`'s result folder) directly, one task per category
(`bfcl_<category>`); `rlgate eval --responses FILES` imports them as the contract's BFCL tasks (an
`inspect_evals/bfcl` entry whose `task_args.categories` lists the category, or a task with `harness:
bfcl`) into a run folder with a run manifest. Scoring is in `results` and `checker`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedTask
from rlgate.harness.base import RunOutcome, RunPlan
from rlgate.harness.importer import ImporterHarness
from rlgate.results.manifest import Drops, TaskRun, stored_import
from rlgate.results.models import RunResult

if TYPE_CHECKING:
    from rlgate.harness.bfcl.checker import ModelFlags

RESULTS = "bfcl"


def categories_of(task: ResolvedTask) -> list[str]:
    """The BFCL categories a contract task evaluates (inspect_evals/bfcl's `categories`, or `category`)."""
    if task.harness != "bfcl" and task.entry.task.split("/")[-1] != "bfcl":
        return []
    args = task.entry.task_args
    found = args.get("categories", args.get("category", []))
    return [found] if isinstance(found, str) else [str(c) for c in found]


def _has(folder: Path, kind: str) -> bool:
    """Whether a folder holds BFCL `result` or `score` files a few levels down."""
    return folder.is_dir() and any(next(folder.glob("/".join(["*"] * d + [f"BFCL_v*_{kind}.json"])), None)
                                   is not None for d in range(4))


class BfclHarness(ImporterHarness):
    """Reads BFCL result files; `run` imports them (`--responses`), it never calls a model."""

    name = "bfcl"

    def version(self) -> str | None:
        from rlgate.harness.bfcl.checker import version

        return version()

    def can_read(self, path: Path) -> bool:
        from rlgate.harness.bfcl.results import FILE_NAME
        from rlgate.harness.bfcl.scores import SCORE_NAME

        if path.is_file():
            return FILE_NAME.match(path.name) is not None or SCORE_NAME.match(path.name) is not None
        return _has(path, "result") or _has(path, "score")

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        """Result files (re-scored by bfcl-eval's checker), BFCL's own score files (`bfcl evaluate`, read as
        scored) where there are no result files, or an rlgate import folder (task names from its manifest)."""
        from rlgate.harness.bfcl.results import read_result_files
        from rlgate.harness.bfcl.scores import SCORE_NAME, read_score_files

        stored = stored_import(path, self.name, RESULTS)
        if stored is None:
            if SCORE_NAME.match(path.name) or (path.is_dir() and not _has(path, "result") and _has(path, "score")):
                return read_score_files(path, samples=samples)
            return read_result_files(path, samples=samples)
        manifest, files = stored
        recorded = manifest.model_spec.get("categories")
        names = {str(k): str(v) for k, v in recorded.items()} if isinstance(recorded, dict) else {}
        model = manifest.model_spec.get("bfcl_model")
        recorded_flags = manifest.model_spec.get("bfcl_flags")
        given = None
        if isinstance(recorded_flags, dict):
            from rlgate.harness.bfcl.flags import from_task_args

            given = from_task_args(recorded_flags, "run_manifest.model_spec.bfcl_flags")
        return manifest.attach_to(read_result_files(files, names=names, model=str(model) if model else None,
                                                    samples=samples, given=given))

    def run(self, plan: RunPlan) -> RunOutcome:
        """Import `plan.responses` as the contract's BFCL tasks, by category."""
        from rlgate.harness.bfcl.results import read_result_files, result_files
        from rlgate.results.drops import drop_kind

        if plan.responses is None:
            raise InputError("rlgate does not run BFCL generation itself", field="--checkpoint",
                             fix="run the task live through inspect (task: inspect_evals/bfcl), or give `bfcl "
                                 "generate`'s result files with --responses")
        started = self.started()
        names = self._names(plan)
        given = self._flags(plan)
        files = result_files(plan.responses, categories=names)  # in a folder: the contract's categories only
        run = read_result_files(plan.responses, names=names, files=files, given=given)
        by_name = {v: k for k, v in names.items()}
        stray = [t for t in run.tasks if t not in by_name]
        if stray:
            raise InputError(f"result files of {', '.join(stray)}, which no contract task evaluates",
                             file=plan.responses,
                             fix="list the category in an inspect_evals/bfcl task's task_args.categories, or leave "
                                 "the file out")
        missing = [t.name for t in plan.tasks if t.name not in run.tasks]
        if missing and not plan.responded_only:
            raise InputError(f"no result file for task(s) {', '.join(missing)}", file=plan.responses,
                             fix="add their BFCL_v4_<category>_result.json, or pass --responded-only")
        target = plan.out_dir / RESULTS
        self.copy_files(files, target)
        runs = []
        tasks = {t.name: t for t in plan.tasks}
        for name, result in run.tasks.items():
            drops = Drops()
            for sample in result.samples:
                if sample.trajectory is not None and drop_kind(sample.trajectory, bool(sample.extra.get("missing"))):
                    drops.missing += 1
                    if len(drops.examples) < 5:
                        drops.examples.append(f"{sample.doc_id}: missing")
            digest = hashlib.sha256("\n".join(sorted(f"{s.doc_id}={s.responses}" for s in result.samples))
                                    .encode("utf-8")).hexdigest()[:16]
            runs.append(TaskRun(task=name, suite_task=tasks[name].entry.task, version=result.protocol.version,
                                task_hash=digest, dataset=result.protocol.dataset or "", documents=result.n_samples,
                                requests=result.n_samples, cached=result.n_samples, drops=drops))
        fingerprint = hashlib.sha256(",".join(sorted(r.task_hash for r in runs)).encode()).hexdigest()[:16]
        manifest = self.write_manifest(
            plan, started=started, runs=runs, fingerprint=f"bfcl:{fingerprint}",
            model_spec={"bfcl_model": run.provenance.model, "categories": {c: n for c, n in names.items()
                                                                           if n in run.tasks},
                        **({"bfcl_flags": {"fc": given.is_fc_model, "underscore_to_dot": given.underscore_to_dot}}
                           if given is not None else {})},
            protocol_hash="bfcl-result-files", protocol={"source": "bfcl_result_file"}, results_file=RESULTS,
            benchmark_tasks=set(run.tasks), library_versions={"bfcl_eval": self.version() or "unknown"})
        plan.progress.message(f"scored {sum(r.documents for r in runs)} BFCL results with bfcl-eval "
                              f"{self.version()}'s checker ({sum(r.drops.missing for r in runs)} missing: failures)")
        return RunOutcome(plan.out_dir, target, manifest, False)

    @staticmethod
    def _flags(plan: RunPlan) -> ModelFlags | None:
        """The model flags the contract's BFCL tasks name (they must agree), else None."""
        from rlgate.harness.bfcl.flags import from_task_args

        found = {(t.name, f) for t in plan.tasks if categories_of(t)
                 and (f := from_task_args(t.entry.task_args, f"suites.tasks[{t.name}]")) is not None}
        if len({f for _, f in found}) > 1:
            raise InputError("the contract's BFCL tasks name different model flags (" + ", ".join(
                f"{n}: fc={f.is_fc_model}, underscore_to_dot={f.underscore_to_dot}" for n, f in sorted(found)) + ")",
                field="suites.tasks.task_args", fix="one model's result files have one set of flags: give the same "
                "fc / underscore_to_dot on every BFCL task")
        return next(iter(found))[1] if found else None

    @staticmethod
    def _names(plan: RunPlan) -> dict[str, str]:
        names: dict[str, str] = {}
        for task in plan.tasks:
            for category in categories_of(task):
                if category in names:
                    raise InputError(f"category '{category}' is evaluated by two tasks ({names[category]}, "
                                     f"{task.name})", field="suites.tasks.task_args",
                                     fix="give each BFCL category to one task")
                names[category] = task.name
        if not names:
            raise InputError("no BFCL task among the contract's tasks for these result files", file=plan.responses,
                             fix="list an inspect_evals/bfcl task with task_args.categories (or `harness: bfcl`)")
        return names


__all__ = ["BfclHarness", "categories_of"]
