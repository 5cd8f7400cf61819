"""lm-eval behind the harness port: runner, folder reader, backends, task catalog, imported responses.

This module is light: `LmEvalHarness` imports lm-eval (and torch) only inside `run`, so reading
stored folders (`rlgate gate`) never does. The modules `runner`, `caching_lm`, `output`, `replay` and
`tasks` import lm_eval at the top and are imported only from `run`.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError, MissingExtraError
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.contract.vocabulary import TaskVocabulary
from rlgate.harness.base import AnswerParse, ConvertReport, Harness, RunOutcome, RunPlan, TaskRequirements
from rlgate.harness.lmeval.catalog import SAMPLES_HINT, catalog_task, runs_code, task_vocabulary
from rlgate.results.manifest import MANIFEST_FILE, RunManifest, load_manifest
from rlgate.results.models import RunResult
from rlgate.results.shard import ShardManifest

_HEAVY = ("lm_eval", "torch", "transformers", "datasets")


def _results_head(file: Path) -> bool:
    """An lm-eval results file names its "results" near the top (not, e.g., an agent's results_summary.json);
    an empty or broken one is still lm-eval's, so its reader reports what is wrong with it."""
    try:
        with file.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return True
    return b'"results"' in head or not head.lstrip().startswith(b"{")


class LmEvalHarness(Harness):
    """lm-eval 0.4.x: `simple_evaluate` with rlgate's cache-first or replay LM; output folders as lm-eval's."""

    name = "lm_eval"
    #: runs a seeded subset of documents per look (RunPlan.sequential_look), for protocol.sequential
    generates_in_looks = True
    runs_shards = True
    answers_from_cache = True
    #: its reader takes every unusable score out of the samples as it reads them (samples_file), and what it
    #: derives afterwards is finite, so `read_results` spares a second pass over every score
    scores_checked = True
    samples_hint = SAMPLES_HINT

    def version(self) -> str | None:
        try:
            return metadata.version("lm-eval")
        except metadata.PackageNotFoundError:
            return None

    def can_read(self, path: Path) -> bool:
        if path.is_file():
            return path.name.startswith("results_") and path.suffix == ".json" and _results_head(path)
        return path.is_dir() and any(_results_head(f) for pattern in ("results_*.json", "*/results_*.json")
                                     for f in sorted(path.glob(pattern))[:16])

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        """An lm-eval output folder, with rlgate's run manifest attached when rlgate produced it."""
        from rlgate.harness.lmeval.folder import find_results_file, read_lmeval_folder

        run = read_lmeval_folder(path, samples=samples)
        manifest = _manifest_near(find_results_file(path))
        return run if manifest is None else manifest.attach_to(run)

    def vocabulary(self, task: ResolvedTask) -> TaskVocabulary:
        """The catalog's entry for a built-in task (by name or prefix); a local task folder is open."""
        return task_vocabulary(task.name, local=task.path is not None)

    def vocabulary_of(self, name: str) -> TaskVocabulary:
        return task_vocabulary(name)

    def requirements(self, task: ResolvedTask) -> TaskRequirements:
        """Code tasks need the sandbox; Minerva's scorer needs the math extra (`rlgate validate` shows both)."""
        import importlib.util

        needs, missing = [], []
        if task.path is None and runs_code(task.name):
            from rlgate.sandbox import SandboxUnavailable, available

            needs.append("rlgate's sandbox for model code (Linux namespaces via unshare; docs/sandbox.md)")
            try:
                available()
            except SandboxUnavailable as exc:
                missing.append(str(exc))
        if catalog_task(task.name) in ("minerva_math500", "minerva_math"):
            needs.append("the math extra (sympy, math_verify, antlr4 4.11)")
            if importlib.util.find_spec("math_verify") is None:
                missing.append("math_verify: pip install 'rl-release-gate[math]'")
        return TaskRequirements(needs, missing)

    def check_task(self, task: ResolvedTask, contract: ResolvedContract) -> None:
        """A task that executes model-written code loads only under `unsafe_code: sandboxed` (before anything runs)."""
        if task.path is None and runs_code(task.name) and contract.contract.unsafe_code != "sandboxed":
            suite = next((str(f) for f in contract.suite_files), "the suite")
            raise InputError(f"task '{task.name}' (in {suite}) executes model-written code, and the contract does not "
                             "say how", file=contract.path, field="unsafe_code",
                             fix="add `unsafe_code: sandboxed` to the contract: rlgate then runs the code only in its "
                                 "sandbox (no network, a private read-only root, limits; docs/sandbox.md)")

    def family(self, name: str) -> str | None:
        return catalog_task(name)

    def answer_parse(self, task: str, response: str, doc: dict[str, Any]) -> AnswerParse | None:
        """ChartQA's final-answer parser and MMMU's three parsing rules, as lm-eval's scorers apply them."""
        from rlgate.harness.lmeval.vlm_metrics import chartqa_final_answer, mmmu_parsed

        if task.startswith("chartqa"):
            answer = chartqa_final_answer(response)
            return AnswerParse(bool(answer), answer or None)
        if task.startswith("mmmu_val"):
            return AnswerParse(mmmu_parsed(response, doc))
        return None

    def convert_responses(self, files: list[Path], source: str, out: Path, *, task: str | None = None,
                          answer_marker: bool = False) -> ConvertReport:
        """lmms-eval samples files or VLMEvalKit result files as responses lm-eval's own metrics score."""
        from rlgate.harness.lmeval.convert import convert

        return convert(files, source, out, task=task, answer_marker=answer_marker)

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        return self.own_plan(contract, tasks, out_dir, cache_dir, **options)

    def run(self, plan: RunPlan) -> RunOutcome:
        try:
            from rlgate.harness.lmeval.runner import LmEvalRunner
        except ModuleNotFoundError as exc:
            root = (exc.name or "").split(".")[0]
            if root in _HEAVY:
                raise MissingExtraError.for_extra("evaluating with lm-eval", "hf", root) from None
            raise
        return LmEvalRunner().run(plan)

    def merge_generations(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> None:
        """The shards' generations into the plan's cache (renumbered as one process numbers them)."""
        from rlgate.harness.lmeval.shard_files import import_generations

        import_generations(plan, shards)

    def assemble(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> RunOutcome:
        """The whole run evaluated from the merged cache without the model: the folder one process writes,
        every sample generated by exactly one shard."""
        from dataclasses import replace

        return self.run(replace(plan, cached_only=True))


def _manifest_near(results_file: Path) -> RunManifest | None:
    """rlgate writes run_manifest.json in the output folder, one level above lm-eval's model folder."""
    for folder in (results_file.parent, results_file.parent.parent):
        candidate = folder / MANIFEST_FILE
        if candidate.is_file():
            manifest = load_manifest(candidate)
            if manifest.results_file and (folder / manifest.results_file).resolve() != results_file.resolve():
                return None  # the manifest describes another (older or newer) run in this folder
            return manifest
    return None


__all__ = ["LmEvalHarness"]
