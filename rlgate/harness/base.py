"""The harness port: what every evaluation harness (lm-eval, inspect-ai, an importer) takes and returns.

A harness plans a run of a contract's tasks, runs it into an output folder with a run manifest,
reads stored outputs (its own or a team's existing ones) back as a harness-neutral `RunResult`, and
says what its tasks' metrics mean (`vocabulary`). Harnesses only produce results; they never gate.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from typing import Protocol as TypingProtocol

from rlgate._core.errors import InputError
from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.contract.vocabulary import GENERIC_SAMPLES_HINT, TaskVocabulary, open_vocabulary
from rlgate.harness.checkpoint import CheckpointInfo
from rlgate.results.manifest import RunManifest
from rlgate.results.models import RunResult
from rlgate.results.shard import ShardCheckpoint, ShardManifest


class ProgressSink(TypingProtocol):
    """Receives per-task progress; the CLI draws it with rich, tests count it, the library prints nothing."""

    def task_started(self, task: str, total: int, cached: int) -> None: ...

    def advanced(self, task: str, count: int) -> None: ...

    def task_finished(self, task: str) -> None: ...

    def message(self, text: str) -> None: ...


class SilentProgress:
    """A ProgressSink that discards everything."""

    def task_started(self, task: str, total: int, cached: int) -> None:
        return None

    def advanced(self, task: str, count: int) -> None:
        return None

    def task_finished(self, task: str) -> None:
        return None

    def message(self, text: str) -> None:
        return None


@dataclass
class RunPlan:
    """One evaluation: which contract tasks, on which checkpoint (or imported responses), written where."""

    contract: ResolvedContract
    tasks: list[ResolvedTask]
    out_dir: Path
    cache_dir: Path
    checkpoint: CheckpointInfo | None = None
    responses: Path | None = None
    responded_only: bool = False
    limit: int | None = None
    role: str = "candidate"
    progress: ProgressSink = field(default_factory=SilentProgress)
    #: sequential gating (`rlgate check` with protocol.sequential): generate the documents of looks 1..look of
    #: the seeded order (Sequential.order with this seed) only; None: every document
    sequential_look: int | None = None
    order_seed: int = 0
    #: (K, N): evaluate shard K (from 1) of N, a contiguous range of every leaf task's documents, and write
    #: its shard manifest and generations beside the results (`rlgate eval --shard`, the Ray executor)
    shard: tuple[int, int] | None = None
    #: answer every request from the cache, never loading the model (`rlgate merge`: the shards generated)
    cached_only: bool = False

    def shard_manifest(self, *, harness: str, protocol_hash: str, base: dict[str, int],
                       documents: dict[str, list[int]], generations: str, unanswered: int = 0) -> ShardManifest:
        """The shard manifest of this plan's shard (every harness's shard.json: what `rlgate merge` checks)."""
        assert self.shard is not None and self.checkpoint is not None
        return ShardManifest(
            contract=str(self.contract.path), contract_name=self.contract.name,
            contract_hash=self.contract.content_hash(), protocol_hash=protocol_hash, harness=harness, role=self.role,
            checkpoint=ShardCheckpoint(**asdict(self.checkpoint)), shard=self.shard[0], shards=self.shard[1],
            tasks=[t.name for t in self.tasks], limit=self.limit, base=base,
            documents={task: list(ids) for task, ids in documents.items()}, generations=generations,
            unanswered=unanswered)


@dataclass
class RunOutcome:
    """Where the results went and what the run recorded about itself."""

    out_dir: Path
    results_file: Path
    manifest: RunManifest
    model_loaded: bool


class Harness(ABC):
    """One evaluation harness behind the port, registered by name (`rlgate.harness.registry`, or the
    `rlgate.plugins` entry-point group for a harness in another package).

    A harness reads its stored outputs (`can_read`, `read`) and says what its tasks' metrics mean
    (`vocabulary`). Running is optional: `plan` / `run` default to refusing, as a read-only harness
    (an importer of stored scores) does. Capabilities are declared here with their defaults, so
    callers read them directly and never ask which harness it is.
    """

    name: ClassVar[str]
    #: harnesses whose tasks this one can answer from stored files (e.g. SWE-bench reports for an inspect task)
    imports_for: ClassVar[tuple[str, ...]] = ()
    #: its reader already takes unusable scores out of the samples (so `read_results` spares a second pass)
    scores_checked: ClassVar[bool] = False
    #: runs a seeded subset of documents per look (RunPlan.sequential_look), for protocol.sequential
    generates_in_looks: ClassVar[bool] = False
    #: runs a shard of every task's documents (RunPlan.shard) and merges shards into one run (`merge`)
    runs_shards: ClassVar[bool] = False
    #: answers every request from the cache, never loading the model (RunPlan.cached_only): a second role of an
    #: already-sharded checkpoint is evaluated from the merged cache instead of sharded again
    answers_from_cache: ClassVar[bool] = False
    #: its tasks are agent tasks (trajectories): the contract's agent budget and safety rules apply
    runs_agents: ClassVar[bool] = False
    #: how to get per-sample results out of this harness (shown where only aggregates were found)
    samples_hint: ClassVar[str] = GENERIC_SAMPLES_HINT

    def version(self) -> str | None:
        """The harness library's version (recorded in every manifest), or None when not installed."""
        return None

    @abstractmethod
    def can_read(self, path: Path) -> bool:
        """Whether `path` looks like this harness's stored output (cheap: names and first bytes only)."""

    @abstractmethod
    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        """Stored outputs as a RunResult; bad input raises InputError naming the file and the fix."""

    def vocabulary(self, task: ResolvedTask) -> TaskVocabulary:
        """What the task's metrics mean: known metrics and filters, default filter, directions, ranges.

        The default knows no metric of its own (any name is accepted; rlgate's derived and agent
        metrics keep their meaning); a harness with a catalog returns a closed vocabulary."""
        return self.vocabulary_of(task.name)

    def vocabulary_of(self, name: str) -> TaskVocabulary:
        """The vocabulary of a task known by name only (a leaf task of stored results)."""
        return open_vocabulary(self.name, samples_hint=self.samples_hint)

    def answer_parse(self, task: str, response: str, doc: dict[str, Any]) -> AnswerParse | None:
        """The task's own answer parser on a response (None: the harness has none for the task), so badcase
        classifiers judge "no parseable answer" exactly as the task's scorer does."""
        return None

    def family(self, name: str) -> str | None:
        """The catalog task a task name belongs to (`mmlu_pro_math` -> `mmlu_pro`), None when it has none."""
        return None

    def check_task(self, task: ResolvedTask, contract: ResolvedContract) -> None:
        """Refuse (InputError, with the fix) a task the contract may not run as written, right after it loads and
        before anything runs (e.g. model-written code without `unsafe_code: sandboxed`); default: accept."""
        return None

    def requirements(self, task: ResolvedTask) -> TaskRequirements:
        """What running the task needs, and what of it is missing here (shown by `rlgate validate`)."""
        return TaskRequirements()

    def convert_responses(self, files: list[Path], source: str, out: Path, *, task: str | None = None,
                          answer_marker: bool = False) -> ConvertReport:
        """Other tools' predictions as a responses file this harness scores (`rlgate import`); default: none."""
        raise InputError(f"the {self.name} harness converts no other tool's predictions", field="--harness",
                         fix="convert with the harness whose tasks the predictions answer (lm_eval)")

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        """A RunPlan for `tasks`, refused (InputError) when a task is not this harness's to run."""
        raise self._read_only()

    def run(self, plan: RunPlan) -> RunOutcome:
        """Evaluate the plan into `plan.out_dir`; cached generations are never generated twice."""
        raise self._read_only()

    def merge(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> RunOutcome:
        """The whole run of `plan` into `plan.out_dir` from its shards (folder, manifest; in shard order), already
        checked to be shards 1..N of this run with every document in exactly one (`rlgate.app.shards`):
        `merge_generations`, then `assemble`."""
        self.merge_generations(plan, shards)
        return self.assemble(plan, shards)

    def merge_generations(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> None:
        """The part of `merge` that writes the plan's cache (lm-eval: the shards' generations into it), done
        before `assemble`; nothing for a harness whose merge joins the shards' own files."""
        return None

    def assemble(self, plan: RunPlan, shards: list[tuple[Path, ShardManifest]]) -> RunOutcome:
        """The part of `merge` that only reads the cache: the whole run into `plan.out_dir`, once
        `merge_generations` is done. Other runs may assemble beside it from the same cache, on its host (the
        Ray executor assembles the roles at once)."""
        raise InputError(f"the {self.name} harness does not merge shards", field="suites.tasks.harness",
                         fix="run its tasks in one process (executor kind local, no --shard)")

    def _read_only(self) -> InputError:
        return InputError(f"the {self.name} harness only reads stored results; it cannot run tasks",
                          field="suites.tasks.harness", fix="give its stored outputs to `rlgate gate`")

    def own_plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
                 **options: object) -> RunPlan:
        """The plan of a harness that runs its own tasks only: a task of another harness is refused."""
        foreign = [t for t in tasks if t.harness != self.name]
        if foreign:
            raise InputError(f"task '{foreign[0].name}' belongs to harness '{foreign[0].harness}', not {self.name}",
                             field="suites.tasks.harness", fix="run each harness's tasks in its own plan")
        return RunPlan(contract=contract, tasks=tasks, out_dir=out_dir, cache_dir=cache_dir, **options)  # type: ignore[arg-type]


@dataclass
class ConvertReport:
    """What `convert_responses` converted: rows per task, rows skipped (and why), bare answers (marked when
    asked, with `marker`)."""

    rows: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    bare: Counter[str] = field(default_factory=Counter)
    marker: str = ""
    #: task -> the source's own benchmark version (OpenCompass: `<abbr>@<config hash>`), printed by `rlgate import`
    versions: dict[str, str] = field(default_factory=dict)
    #: what the user must know about the converted rows (printed by `rlgate import`), e.g. whose prompt they answer
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AnswerParse:
    """What a task's answer parser found in a response: whether it parsed, and the answer (where it gives one)."""

    parsed: bool
    answer: str | None = None


@dataclass(frozen=True)
class TaskRequirements:
    """What a task needs to run (`needs`), what of it this machine lacks (`missing`), and notes."""

    needs: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.needs or self.missing or self.notes)
