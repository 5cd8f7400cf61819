"""The run manifest: what produced an output folder, and what happened to every request.

Written beside lm-eval's results as `run_manifest.json`, read by reports (rollout card) and by
`check` (which baseline run a candidate was compared with).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MANIFEST_SCHEMA_VERSION: Literal[1] = 1
MANIFEST_FILE = "run_manifest.json"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Drops(_Model):
    """Requests whose response is missing or unusable; each is still scored (as a failure), never removed."""

    errored: int = Field(0, description="the backend raised for this request (after its retries)")
    timed_out: int = Field(0, description="the backend timed out (after its retries)")
    empty: int = Field(0, description="the response was empty or whitespace")
    missing: int = Field(0, description="imported responses: no row answered this request")
    examples: list[str] = Field(default_factory=list, description="a few request ids with the error text")

    @property
    def total(self) -> int:
        return self.errored + self.timed_out + self.empty + self.missing


class TaskRun(_Model):
    """One leaf task in one run."""

    task: str
    suite_task: str = Field(description="the suite entry (task or group) this leaf belongs to")
    version: str | None = None
    task_hash: str
    dataset: str = ""
    documents: int = 0
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


class RunManifest(_Model):
    """Provenance of one rlgate evaluation run."""

    schema_version: Literal[1] = MANIFEST_SCHEMA_VERSION
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
    lm_eval_model: str
    model_args: dict[str, object] = Field(default_factory=dict)
    protocol_hash: str
    protocol: dict[str, object] = Field(default_factory=dict)
    library_versions: dict[str, str] = Field(default_factory=dict)
    started: str
    wall_time_s: float
    model_loaded: bool
    tasks: list[TaskRun] = Field(default_factory=list)
    import_report: ImportReport | None = None
    results_file: str = Field(description="lm-eval results file, relative to the output folder")

    @property
    def drops(self) -> Drops:
        total = Drops()
        for task in self.tasks:
            for key in ("errored", "timed_out", "empty", "missing"):
                setattr(total, key, getattr(total, key) + getattr(task.drops, key))
        return total
