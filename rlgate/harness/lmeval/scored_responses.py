"""Per-response verdicts that only the live task can give, stored beside lm-eval's files and read back.

lm-eval's math tasks (aime24, minerva_math500) score `results[0]` in Python (`process_results`) and its
code tasks run programs, so a stored samples file cannot be re-scored per response the way
`per_response` replays regex filters. The runner scores every response with the task's own filters and
`process_results` (`rescore`) and writes `per_response_<task>_<timestamp>.json` next to the samples
file; this module is that file's model and its light reader (no lm-eval). A folder made by plain
lm-eval has no such file, so its pass@k / maj@k with n > 1 stay nodata rather than guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate.results.models import TaskResult
from rlgate.results.shared_scores import writable_extra

PREFIX = "per_response_"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CodeChecks(_Model):
    """What each response's code did: the scored program's outcome, and the shown / hidden tests (None: none)."""

    outcomes: list[Literal["passed", "failed", "syntax_error", "timeout", "error"]]
    wrong_output: list[bool]
    public: list[bool | None]
    hidden: list[bool | None]


class ResponseScores(_Model):
    """One document under one filter: each response's answer (what maj@k votes on) and verdict."""

    answers: list[str]
    correct: list[float] = Field(description="the task metric of each response alone (0 or 1)")
    code: CodeChecks | None = None


class ScoredResponses(_Model):
    """A task's per-response verdicts: filter -> doc_id -> scores."""

    schema_version: Literal[1] = 1
    task: str
    metric: str = Field(description="the lm-eval metric each verdict is (its value on that response alone)")
    filters: dict[str, dict[int, ResponseScores]]


def file_for(results_file: Path, task: str) -> Path:
    stamp = results_file.stem[len("results_"):]
    return results_file.parent / f"{PREFIX}{task}_{stamp}.json"


def write(results_file: Path, scored: ScoredResponses) -> Path:
    path = file_for(results_file, scored.task)
    path.write_text(scored.model_dump_json(), encoding="utf-8")
    return path


def read(path: Path) -> ScoredResponses:
    try:
        return ScoredResponses.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"not rlgate's per-response scores ({first['msg']})", file=path, field=where or None,
                         fix="re-run `rlgate eval` for this task, or delete the file (pass@k / maj@k are then "
                             "nodata)") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=path) from None


def attach(task: TaskResult, results_file: Path) -> None:
    """Put the stored per-response verdicts on the task's samples (`extra["per_response"]`, `extra["code"]`)."""
    path = file_for(results_file, task.task)
    if not path.is_file() or not task.samples:
        return
    scored = read(path)
    if scored.task != task.task:
        raise InputError(f"holds the scores of task '{scored.task}', not '{task.task}'", file=path, field="task",
                         fix="restore the file rlgate wrote for this run")
    for sample in task.samples:
        for filt, docs in scored.filters.items():
            found = docs.get(int(sample.doc_id)) if isinstance(sample.doc_id, int) else None
            if found is None:
                continue
            if len(found.correct) != len(sample.responses) or len(found.answers) != len(found.correct):
                raise InputError(f"document {sample.doc_id} has {len(found.correct)} verdicts for "
                                 f"{len(sample.responses)} responses", file=path, field=f"filters.{filt}",
                                 fix="the file belongs to another run: re-run `rlgate eval` for this task")
            writable_extra(sample).setdefault("per_response", {})[filt] = {"answers": list(found.answers),
                                                                 "correct": list(found.correct)}
            if found.code is not None:
                writable_extra(sample).setdefault("code", {})[filt] = found.code.model_dump()
