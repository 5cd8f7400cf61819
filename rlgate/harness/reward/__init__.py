"""Reward models behind the harness port: RewardBench-style pairwise accuracy, per pair and per category.

A reward-model checkpoint is "evaluated" by scoring both responses of every preference pair; the per-pair value
(chosen above rejected: 1, tie: 0.5, else 0) is the sample of the engine's paired tests against the baseline
reward model, and each category is a leaf task so that gates (with `per_subtask: true`) give a verdict per
category. Pairs come from the suite's `data_files` (RewardBench's JSON format), else from the hub.
"""

from __future__ import annotations

import hashlib
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.contract.vocabulary import MetricInfo, TaskVocabulary
from rlgate.harness.base import Harness, RunOutcome, RunPlan, TaskRequirements
from rlgate.harness.reward.scores import FILTER, METRIC, SCORES_FILE, RewardScores, RewardTask, ScoredPair, leaf_name
from rlgate.results.manifest import MANIFEST_FILE, RunManifest, TaskRun, load_manifest
from rlgate.results.models import RunResult

HINT = "the reward harness always keeps every pair's scores (reward_scores.json)"


class RewardHarness(Harness):
    """Scores preference pairs with a reward model (local transformers classifier or a served endpoint)."""

    name = "reward"
    samples_hint: ClassVar[str] = HINT

    def version(self) -> str | None:
        try:
            return metadata.version("rlgate")
        except metadata.PackageNotFoundError:
            return None

    def vocabulary_of(self, name: str) -> TaskVocabulary:
        return TaskVocabulary(harness=self.name, closed=True, default_filter=FILTER, samples_hint=HINT,
                              samples_option="reward_scores.json",
                              metrics={METRIC: MetricInfo(filters=(FILTER,), higher_is_better=True, kind="fraction")})

    def requirements(self, task: ResolvedTask) -> TaskRequirements:
        """torch + transformers for a local reward model; `datasets` and the network without local pairs."""
        from importlib.util import find_spec

        needs = ["torch and transformers (a local reward model; a served one needs neither)"]
        missing = [name for name in ("torch", "transformers") if find_spec(name) is None]
        notes = []
        if not task.data_files:
            needs.append("the `datasets` package and the network (allenai/reward-bench from the hub)")
            missing += ["datasets"] if find_spec("datasets") is None else []
            notes.append("no data_files: the pairs are downloaded from the hub; give data_files for offline runs")
        return TaskRequirements(needs=needs, missing=missing, notes=notes)

    def can_read(self, path: Path) -> bool:
        return (path / SCORES_FILE).is_file() if path.is_dir() else path.name == SCORES_FILE

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        from rlgate.harness.reward.scores import read_scores, to_run

        run = to_run(read_scores(path), path, self.version())
        folder = path if path.is_dir() else path.parent
        return load_manifest(folder / MANIFEST_FILE).attach_to(run) if (folder / MANIFEST_FILE).is_file() else run

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        return self.own_plan(contract, tasks, out_dir, cache_dir, **options)

    def run(self, plan: RunPlan) -> RunOutcome:
        from rlgate.harness.reward.data import load_pairs

        if plan.checkpoint is None:
            raise InputError("the reward harness scores a reward-model checkpoint", field="--checkpoint",
                             fix="give --checkpoint (a sequence-classification model folder or a served model name)")
        started, stamp = time.monotonic(), datetime.now(timezone.utc).isoformat(timespec="seconds")
        scorer = self._scorer(plan)
        scored, runs = [], []
        for task in plan.tasks:
            categories = task.entry.task_args.get("categories")
            pairs, dataset = load_pairs(task.data_files, list(categories) if categories else None)
            if plan.limit:
                pairs = pairs[:plan.limit]
            plan.progress.task_started(task.name, len(pairs), 0)
            chosen = scorer.score([(p.prompt, p.chosen) for p in pairs])
            rejected = scorer.score([(p.prompt, p.rejected) for p in pairs])
            plan.progress.advanced(task.name, len(pairs))
            plan.progress.task_finished(task.name)
            scored.append(RewardTask(task=task.name, dataset=dataset, format=scorer.format, pairs=[
                ScoredPair(id=p.id, category=p.category, subset=p.subset, doc_hash=p.doc_hash, prompt=p.prompt,
                           chosen=p.chosen, rejected=p.rejected, chosen_score=c, rejected_score=r)
                for p, c, r in zip(pairs, chosen, rejected, strict=True)]))
            digest = hashlib.sha256("".join(p.doc_hash for p in pairs).encode()).hexdigest()[:16]
            for category in sorted({p.category for p in pairs}):
                size = sum(1 for p in pairs if p.category == category)
                runs.append(TaskRun(task=leaf_name(task.name, category), suite_task=task.entry.task, task_hash=digest,
                                    dataset=dataset, documents=size, expected_documents=size, requests=2 * size,
                                    generated=2 * size))
        plan.out_dir.mkdir(parents=True, exist_ok=True)
        results = plan.out_dir / SCORES_FILE
        write_text_atomic(results, RewardScores(model=plan.checkpoint.source, tasks=scored).model_dump_json(indent=1))
        manifest = self._manifest(plan, runs, stamp, time.monotonic() - started, scorer.format)
        return RunOutcome(plan.out_dir, results, manifest, True)

    @staticmethod
    def _scorer(plan: RunPlan) -> Any:
        from rlgate.harness.reward.scorers import EndpointRewardScorer, HfRewardScorer

        info = plan.checkpoint
        assert info is not None
        protocol = plan.contract.contract.protocol
        if info.kind == "served":
            if not protocol.openai.base_url:
                raise InputError("a served reward model needs the server's URL", file=plan.contract.path,
                                 field="protocol.openai.base_url", fix="set protocol.openai.base_url: "
                                 "http://HOST:PORT/v1 (the server's OpenAI-compatible root)")
            import os

            key = os.environ.get(protocol.openai.api_key_env) if protocol.openai.api_key_env else None
            return EndpointRewardScorer(protocol.openai.base_url, protocol.openai.model or info.load_path,
                                        api_key=key)
        return HfRewardScorer(info.load_path)

    def _manifest(self, plan: RunPlan, runs: list[TaskRun], started: str, wall: float, fmt: str) -> RunManifest:
        info = plan.checkpoint
        assert info is not None
        manifest = RunManifest(
            harness=self.name, harness_version=self.version(), contract=str(plan.contract.path),
            contract_name=plan.contract.name, role=plan.role, checkpoint=info.source, checkpoint_kind=info.kind,
            checkpoint_fingerprint=info.fingerprint, weights_hash=info.weights_hash, load_path=info.load_path,
            checkpoint_notes=info.notes, backend="openai" if info.kind == "served" else "hf",
            model_spec={"reward_model": fmt}, protocol_hash=hashlib.sha256(fmt.encode()).hexdigest()[:16],
            protocol={"reward_input": fmt}, started=started, wall_time_s=round(wall, 3), model_loaded=True,
            tasks=runs, benchmark_versions={t.name: t.benchmark_version for t in plan.tasks},
            task_visibility={t.name: t.visibility for t in plan.tasks}, results_file=SCORES_FILE)
        write_text_atomic(plan.out_dir / MANIFEST_FILE, manifest.model_dump_json(indent=2))
        return manifest


__all__ = ["RewardHarness"]
