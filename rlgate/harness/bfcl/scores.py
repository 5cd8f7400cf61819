"""BFCL's own score files (`bfcl evaluate`'s output) as rlgate results: gate exactly what BFCL scored.

`bfcl evaluate` writes `score/{model}/{non_live,live,...}/BFCL_v4_{category}_score.json`: a first line
`{"accuracy", "correct_count", "total_count"}`, then one line per *failed* entry (`{"id", "valid":
false, "error", "error_type", ...}`). The passed entries are the category's other ids, which come
from bfcl-eval's shipped dataset; so the file is read only when its `total_count` is the size of
that category in the installed bfcl-eval, every failed id is one of its ids, and `correct_count` is
`total_count` minus the failures (else one located error). One sample per id, `task_success` = BFCL's
verdict; the score holds verdicts, not trajectories, so only `task_success` is computed.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import iter_jsonl
from rlgate.harness.bfcl import checker
from rlgate.results.agent_metrics import AGENT_KEY, score_task, scorer_outcome
from rlgate.results.models import (
    NO_FILTER,
    RunProvenance,
    RunResult,
    SampleRecord,
    TaskProtocol,
    TaskResult,
    Trajectory,
)

SCORE_NAME = re.compile(r"^BFCL_v\d+_(?P<category>[a-z_]+)_score\.json$")
FIX = ("give the score file `bfcl evaluate` wrote (score/{model}/.../BFCL_v4_{category}_score.json: a first line "
       '{"accuracy", "correct_count", "total_count"}, then the failed entries), unedited')


def score_files(path: Path) -> list[Path]:
    """BFCL score files at `path`: the file itself, or those a few levels down a folder."""
    if path.is_file():
        return [path]
    return sorted(p for depth in range(4) for p in path.glob("/".join(["*"] * depth + ["BFCL_v*_score.json"])))


def _model(file: Path) -> str:
    for parent in file.parents:
        if parent.parent.name == "score":
            return parent.name
    return file.parent.name


def _ids(category: str, file: Path) -> list[str]:
    try:
        return checker.dataset_ids(category)
    except InputError:
        raise
    except Exception as exc:  # bfcl-eval does not ship this category (another BFCL version)
        raise InputError(f"bfcl-eval {checker.version()} has no dataset for category '{category}' ({exc})",
                         file=file, fix="read the score file with the bfcl-eval version that wrote it") from None


def _header(file: Path, row: Any) -> tuple[int, int]:
    keys = ("accuracy", "correct_count", "total_count")
    if not isinstance(row, dict) or any(k not in row for k in keys):
        raise InputError('the first line is not BFCL\'s {"accuracy", "correct_count", "total_count"}', file=file,
                         line=1, fix=FIX)
    correct, total = row["correct_count"], row["total_count"]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (correct, total)) or correct > total:
        raise InputError(f"correct_count {correct!r} / total_count {total!r} are not counts", file=file, line=1,
                         field="correct_count", fix=FIX)
    return correct, total


def task_for_score(file: Path, name: str | None = None) -> TaskResult:
    """One score file as a task (`bfcl_<category>` unless named)."""
    match = SCORE_NAME.match(file.name)
    if match is None:
        raise InputError("not a BFCL score file name (BFCL_v4_<category>_score.json)", file=file, fix=FIX)
    category = match["category"]
    correct = total = -1
    failed: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, row in iter_jsonl(file, fix=FIX):
        if line == 1:
            correct, total = _header(file, row)
            continue
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or row.get("valid") is not False:
            raise InputError('a failed-entry line is an object with a string "id" and "valid": false', file=file,
                             line=line, fix=FIX)
        if row["id"] in failed:
            raise InputError(f"id '{row['id']}' is listed twice (lines {failed[row['id']][0]} and {line})", file=file,
                             line=line, fix=FIX)
        failed[row["id"]] = (line, row)
    if total < 0:
        raise InputError("the score file is empty", file=file, fix=FIX)
    ids = _ids(category, file)
    if total != len(ids):
        raise InputError(f"total_count is {total} but bfcl-eval {checker.version()}'s {category} has {len(ids)} "
                         "entries (another BFCL version, or a partial run)", file=file, line=1, field="total_count",
                         fix="read the score file with the bfcl-eval version that wrote it, or re-run `bfcl evaluate`")
    unknown = [i for i in failed if i not in set(ids)]
    if unknown:
        raise InputError(f"id '{unknown[0]}' is not in bfcl-eval {checker.version()}'s {category} data", file=file,
                         line=failed[unknown[0]][0], fix="read the score file with the bfcl-eval version that wrote it")
    if total - len(failed) != correct:
        raise InputError(f"correct_count is {correct} but {len(failed)} of {total} entries are listed as failed",
                         file=file, line=1, field="correct_count", fix=FIX)
    samples = []
    for sample_id in ids:
        entry = failed.get(sample_id)
        ok = entry is None
        errors = entry[1].get("error") if entry is not None else None
        explanation = "; ".join(str(e) for e in errors) if isinstance(errors, list) else None
        extra: dict[str, Any] = {"sample_id": sample_id, AGENT_KEY: scorer_outcome(
            1.0 if ok else 0.0, None, None, {"valid": 1.0 if ok else 0.0}, outcome_only=True)}
        if entry is not None:
            extra.update(line=entry[0], error_type=entry[1].get("error_type"))
        samples.append(SampleRecord(
            doc_id=sample_id, doc_hash=hashlib.sha256(json.dumps(["bfcl", sample_id]).encode()).hexdigest()[:16],
            scores={NO_FILTER: {}}, trajectory=Trajectory(explanation=explanation), extra=extra))
    task = TaskResult(task=name or f"bfcl_{category}", n_samples=len(samples), samples=samples, protocol=TaskProtocol(
        version=checker.version(), dataset=f"bfcl-eval {category}",
        agent={"source": "bfcl_score_file", "category": category}))
    score_task(task)
    return task


def read_score_files(path: Path, *, samples: bool = True, names: dict[str, str] | None = None) -> RunResult:
    """Every score file at `path` as one task each; a folder with none is an error."""
    checker.require_bfcl()
    files = score_files(path)
    if not files:
        raise InputError("no BFCL score file (BFCL_v4_<category>_score.json) in this folder", file=path,
                         fix="point at `bfcl evaluate`'s score/{model} folder or one of its score files")
    models = sorted({_model(f) for f in files})
    if len(models) > 1:
        raise InputError(f"score files of {len(models)} models ({', '.join(models)})", file=path,
                         fix="point at one model's folder, score/{model}")
    tasks: dict[str, TaskResult] = {}
    for file in files:
        category = SCORE_NAME.match(file.name)
        name = (names or {}).get(category["category"]) if category else None
        task = task_for_score(file, name)
        if task.task in tasks:
            raise InputError(f"two score files of '{task.task}'", file=file, fix="keep one score file per category")
        if not samples:
            task.samples = []
        tasks[task.task] = task
    provenance = RunProvenance(source=str(path), harness="bfcl", harness_version=checker.version(), model=models[0])
    return RunResult(provenance=provenance, tasks=tasks)
