"""The reward harness's own output file (`reward_scores.json`) and how it reads back as a RunResult.

Every pair keeps both raw scores, so the per-pair value (1 when the chosen response scores higher, 0.5 on a
tie, 0 otherwise) can always be recomputed; each category of a task is a leaf (`<task>_<category>`) under the
task as a group, so a gate on the task pools every pair and a gate on a leaf reads one category.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskProtocol, TaskResult

SCORES_FILE = "reward_scores.json"
METRIC = "accuracy"
FILTER = "none"
RULE = "pairwise accuracy: 1 when the chosen response scores higher than the rejected one, 0.5 on a tie, else 0"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScoredPair(_Model):
    id: str
    category: str
    subset: str | None = None
    doc_hash: str
    prompt: str
    chosen: str
    rejected: str
    chosen_score: float
    rejected_score: float

    @property
    def value(self) -> float:
        """The per-pair value: the sample of every paired test."""
        if self.chosen_score == self.rejected_score:
            return 0.5
        return 1.0 if self.chosen_score > self.rejected_score else 0.0


class RewardTask(_Model):
    task: str
    dataset: str
    format: str = Field(description="how a (prompt, response) reached the model: chat_template, plain or served")
    pairs: list[ScoredPair] = Field(default_factory=list)


class RewardScores(_Model):
    schema_version: Literal[1] = 1
    model: str
    tasks: list[RewardTask] = Field(default_factory=list)


def leaf_name(task: str, category: str) -> str:
    return f"{task}_{category}"


def read_scores(path: Path) -> RewardScores:
    file = path / SCORES_FILE if path.is_dir() else path
    try:
        return RewardScores.model_validate_json(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the reward scores: {exc.strerror or exc}", file=file) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"not a reward scores file: {where}: {first['msg']}", file=file,
                         fix="re-run `rlgate eval` on the reward-model contract") from None


def to_run(scores: RewardScores, source: Path, version: str | None) -> RunResult:
    """The scores as leaves per category under each task (a group)."""
    tasks: dict[str, TaskResult] = {}
    groups: dict[str, list[str]] = {}
    for task in scores.tasks:
        by_category: dict[str, list[ScoredPair]] = {}
        for pair in task.pairs:
            by_category.setdefault(pair.category, []).append(pair)
        groups[task.task] = []
        for category, pairs in sorted(by_category.items()):
            leaf = leaf_name(task.task, category)
            groups[task.task].append(leaf)
            samples = [SampleRecord(
                doc_id=p.id, doc_hash=p.doc_hash, prompt=p.prompt,
                doc={"prompt": p.prompt, "chosen": p.chosen, "rejected": p.rejected},
                scores={FILTER: {METRIC: p.value}},
                extra={"category": category, "subset": p.subset, "chosen_score": p.chosen_score,
                       "rejected_score": p.rejected_score}) for p in pairs]
            tasks[leaf] = TaskResult(
                task=leaf, metrics={FILTER: {METRIC: sum(p.value for p in pairs) / len(pairs)}},
                higher_is_better={METRIC: True}, n_samples=len(pairs), n_expected=len(pairs),
                protocol=TaskProtocol(dataset=task.dataset, scoring={"rule": RULE, "format": task.format}),
                samples=samples)
    provenance = RunProvenance(source=str(source), harness="reward", harness_version=version, model=scores.model)
    return RunResult(provenance=provenance, tasks=tasks, groups=groups)
