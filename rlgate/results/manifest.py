"""The run manifest: what produced an output folder, and what happened to every request.

Written beside a harness's outputs as `run_manifest.json` and carried, typed, on every run rlgate produced
(`RunProvenance.manifest`); read by reports (rollout card), by `check` (which baseline run a candidate was
compared with), by coverage and by the protocol and benchmark-version checks, always by field: the few
harness-specific mappings it holds (`protocol`) are read only through the methods here.

Schema history: v1 (rlgate 0.1) named `lm_eval_model`; v2 names the harness, its version and a
harness-specific model spec, and records benchmark versions, split visibility and (since `seeds`
was added, with an empty default) the harness's seeds. `load_manifest` migrates v1 files on read,
so folders written by older rlgate still gate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rlgate._core.errors import InputError
from rlgate._core.jsonio import load_document
from rlgate._core.text import visible_line

if TYPE_CHECKING:
    from rlgate.results.models import RunResult, SampleRecord, Trajectory

MANIFEST_SCHEMA_VERSION: Literal[2] = 2
MANIFEST_FILE = "run_manifest.json"


class _Model(BaseModel):
    # Validators are built on first use (defer_build): gating folders without a run manifest (lm-eval's own
    # outputs) never uses them, and building the four models cost ~3 ms of every run.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Drops(_Model):
    """Requests whose response is missing or unusable; each is still scored (as a failure), never removed."""

    errored: int = Field(0, description="the backend raised for this request (after its retries)")
    timed_out: int = Field(0, description="the backend timed out (after its retries); agents: a time limit hit")
    limited: int = Field(0, description="agents: a message, turn, token or tool-call limit hit")
    sandbox_failed: int = Field(0, description="agents: the sandbox (e.g. a Docker container) failed")
    empty: int = Field(0, description="the response was empty or whitespace")
    missing: int = Field(0, description="imported responses: no row answered this request")
    examples: list[str] = Field(default_factory=list, description="a few request ids with the error text")

    @property
    def total(self) -> int:
        return self.errored + self.timed_out + self.limited + self.sandbox_failed + self.empty + self.missing

    @classmethod
    def of_trajectories(cls, samples: Iterable[SampleRecord], example: Callable[[SampleRecord, Trajectory], str],
                        keep: int = 5) -> Drops:
        """Counts by `results.drops.drop_kind` of every sample that holds a trajectory, with a few examples."""
        from rlgate.results.drops import drop_kind

        drops = cls()
        for sample in samples:
            trajectory = sample.trajectory
            kind = drop_kind(trajectory, bool(sample.extra.get("missing"))) if trajectory is not None else None
            if trajectory is None or kind is None:
                continue
            attr = _DROP_FIELD[kind]
            setattr(drops, attr, getattr(drops, attr) + 1)
            if len(drops.examples) < keep:
                drops.examples.append(f"{sample.doc_id}: {example(sample, trajectory)}")
        return drops


#: results.drops' kinds -> the Drops counter each is counted in
_DROP_FIELD = {"missing": "missing", "sandbox_failed": "sandbox_failed", "errored": "errored",
               "timed_out": "timed_out", "limit": "limited"}


class TaskRun(_Model):
    """One leaf task in one run."""

    task: str
    suite_task: str = Field(description="the suite entry (task or group) this leaf belongs to")
    version: str | None = None
    task_hash: str
    dataset: str = ""
    documents: int = Field(0, description="documents scored (answered)")
    expected_documents: int | None = Field(
        None, description="documents the protocol asks for; coverage = documents / expected_documents")
    missing_documents: list[int] = Field(
        default_factory=list, description="doc ids never answered (imported responses): not scored, listed here")
    not_generated: list[int] = Field(
        default_factory=list,
        description="doc ids a sequential check did not generate (settled before their look), "
        "in the seeded order; not missing: coverage counts them out")
    sequential_look: int | None = Field(None, description="the look of a sequential check this run reached")
    requests: int = 0
    cached: int = 0
    generated: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    wall_time_s: float = 0.0
    drops: Drops = Field(default_factory=Drops)


class ImportReport(_Model):
    """How rows of an imported responses file matched the task documents."""

    file: str
    rows: int
    matched: int
    unmatched: int = 0
    duplicates: int = 0
    unknown_task: int = 0
    examples: list[str] = Field(default_factory=list, description="a few unmatched or duplicate rows, by line")

    @field_validator("examples")
    @classmethod
    def _one_visible_line_each(cls, examples: list[str]) -> list[str]:
        """Printed by `rlgate eval` and kept in the manifest: a task name or document field from the imported file
        must not start a line of its own or act on the terminal."""
        return [visible_line(e) for e in examples]


class RunManifest(_Model):
    """Provenance of one rlgate evaluation run."""

    schema_version: Literal[2] = MANIFEST_SCHEMA_VERSION
    harness: str = Field("lm_eval", description="the harness that produced the run (registry name)")
    harness_version: str | None = Field(None, description="version of the harness library")
    contract: str
    contract_name: str
    role: str = "candidate"
    checkpoint: str
    checkpoint_kind: str
    checkpoint_fingerprint: str
    weights_hash: str | None = None
    load_path: str | None = None
    checkpoint_notes: list[str] = Field(default_factory=list)
    backend: str
    model_spec: dict[str, object] = Field(
        default_factory=dict, description="harness-specific model spec, e.g. {'lm_eval_model': 'hf'}")
    model_args: dict[str, object] = Field(default_factory=dict)
    protocol_hash: str
    protocol: dict[str, object] = Field(default_factory=dict)
    library_versions: dict[str, str] = Field(default_factory=dict)
    started: str
    wall_time_s: float
    model_loaded: bool
    tasks: list[TaskRun] = Field(default_factory=list)
    import_report: ImportReport | None = None
    benchmark_versions: dict[str, str] = Field(
        default_factory=dict, description="task -> 'suite@version[/task@version]', compared by check and gate")
    task_visibility: dict[str, str] = Field(
        default_factory=dict, description="task -> split visibility, so reports withhold private samples")
    results_file: str = Field(description="lm-eval results file, relative to the output folder")
    seeds: dict[str, int] = Field(
        default_factory=dict, description="the seeds the harness was given, by its own names (e.g. random_seed)")

    def recorded_seeds(self) -> dict[str, int]:
        """The seeds of the run; for manifests written before `seeds` was recorded, the protocol's sampling seed
        (every harness seeded its generation with it)."""
        if self.seeds:
            return dict(self.seeds)
        sampling = self.protocol.get("sampling")
        seed = sampling.get("seed") if isinstance(sampling, dict) else None
        return {"sampling_seed": seed} if type(seed) is int else {}

    def image_protocol(self) -> dict[str, Any]:
        """The image protocol of a VLM run (resolution, max pixels, ...); empty for text runs."""
        image = self.protocol.get("image")
        return dict(image) if isinstance(image, dict) else {}

    @property
    def tokens_out(self) -> int | None:
        """Generated tokens counted over the tasks, where any task counted them."""
        known = [t.tokens_out for t in self.tasks if t.tokens_out is not None]
        return sum(known) if known else None

    @property
    def drops(self) -> Drops:
        total = Drops()
        for task in self.tasks:
            for key in ("errored", "timed_out", "limited", "sandbox_failed", "empty", "missing"):
                setattr(total, key, getattr(total, key) + getattr(task.drops, key))
        return total

    def attach_to(self, run: RunResult) -> RunResult:
        """Record this manifest as the run's provenance (what produced it, the checkpoint's fingerprint)."""
        run.provenance.manifest = self
        run.provenance.checkpoint_fingerprint = self.checkpoint_fingerprint
        return run


def migrate_manifest(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older manifest's fields up to the current schema (v1 -> v2); newer ones are refused."""
    version = data.get("schema_version", 1)
    if isinstance(version, int) and version > MANIFEST_SCHEMA_VERSION:
        raise ValueError(f"schema_version {version} is newer than this rlgate reads ({MANIFEST_SCHEMA_VERSION})")
    if version == 1:
        data = dict(data)
        model = data.pop("lm_eval_model", None)
        data["schema_version"] = 2
        data.setdefault("harness", "lm_eval")
        versions = data.get("library_versions")
        data.setdefault("harness_version", versions.get("lm_eval") if isinstance(versions, dict) else None)
        data.setdefault("model_spec", {"lm_eval_model": model} if model is not None else {})
    return data


def load_manifest(path: Path) -> RunManifest:
    """Read a run manifest of any schema this rlgate knows; a bad file is an InputError naming it."""
    data = load_document(path, "the manifest is corrupt or truncated; re-run the evaluation")
    if not isinstance(data, dict):
        raise InputError("a run manifest is a JSON object", file=path)
    try:
        return RunManifest.model_validate(migrate_manifest(data))
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(f"{where}: {first['msg']}", file=path, field=where,
                             fix="the manifest was edited or written by another tool; re-run the evaluation"
                             ) from None
        raise InputError(str(exc), file=path, field="schema_version", fix="upgrade rlgate to read it") from None


def stored_import(path: Path, harness: str, subfolder: str) -> tuple[RunManifest, Path] | None:
    """(manifest, folder of the imported files) when `path` is, or is a file in, a folder where rlgate stored an
    import of `harness`'s outputs (a run manifest beside `subfolder`); None for the harness's own files."""
    folder = path if path.is_dir() else path.parent
    if not ((folder / MANIFEST_FILE).is_file() and (folder / subfolder).is_dir()):
        return None
    manifest = load_manifest(folder / MANIFEST_FILE)
    return (manifest, folder / subfolder) if manifest.harness == harness else None
