"""Official BFCL result files as rlgate results, scored by bfcl-eval's own AST checker (no API call).

`bfcl generate` writes `result/{model}/.../BFCL_v4_{category}_result.json`: JSON lines `{"id",
"result", ...}` (`result`: a prompt model's text, or an FC model's `[{name: "json args"}]`). Each
line is one sample of the task of its category; `task_success` is the checker's verdict against
bfcl-eval's shipped ground truth, and the decoded calls are the trajectory's tool calls (an
undecodable answer is one call with a parse error). A ground-truth id with no line is a missing,
failed sample listed in the drops manifest, so a run never has fewer samples than the category.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import iter_jsonl
from rlgate.harness.bfcl import checker
from rlgate.harness.bfcl import flags as model_flags
from rlgate.results.agent_metrics import AGENT_KEY, score_task, scorer_outcome
from rlgate.results.models import (
    NO_FILTER,
    RunProvenance,
    RunResult,
    SampleRecord,
    TaskProtocol,
    TaskResult,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)

FILE_NAME = re.compile(r"^BFCL_v\d+_(?P<category>[a-z_]+)_result\.json$")
FIX = ('each line is {"id": "<category>_<n>", "result": ...} as `bfcl generate` writes it '
       "(result/{model}/.../BFCL_v4_{category}_result.json); re-generate the file or give it unedited")
MISSING = "no result line for this id (the generation was interrupted?); counted as a failure"


def result_files(path: Path, categories: Collection[str] | None = None) -> list[Path]:
    """BFCL result files at `path`: the file itself, or those in a folder (searched a few levels down) whose
    category is in `categories` (default: the AST categories bfcl's checker scores; a `bfcl generate` folder
    also holds multi-turn and relevance results, which are left out there, never scored)."""
    if path.is_file():
        return [path]
    wanted = set(categories) if categories is not None else set(checker.AST_CATEGORIES)
    found = sorted(p for depth in range(4) for p in path.glob("/".join(["*"] * depth + ["BFCL_v*_result.json"]))
                   if (m := FILE_NAME.match(p.name)) is None or m["category"] in wanted)
    if not found:
        raise InputError("no BFCL result file (BFCL_v4_<category>_result.json) in this folder", file=path,
                         fix="point at `bfcl generate`'s result/{model} folder or one of its result files")
    return found


def category_of(sample_id: str) -> str:
    """`simple_python_12` -> `simple_python`; `live_multiple_3-1-0` -> `live_multiple`."""
    return re.sub(r"_\d+(-\d+)*$", "", sample_id)


def model_of(file: Path) -> str:
    """The model's folder name under `result/` (bfcl's registry name with '/' as '_')."""
    for parent in file.parents:
        if parent.parent.name == "result":
            return parent.name
    parent = file.parent
    return parent.parent.name if parent.name in ("non_live", "live", "multi_turn", "agentic") else parent.name


_NUMBERS = ("input_token_count", "output_token_count", "latency")  # optional; a number must be a finite one


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past any float
        return False


def _rows(file: Path) -> dict[str, dict[str, list[tuple[int, dict[str, Any]]]]]:
    """category -> id -> [(line, row)] of one file, every row checked for shape."""
    out: dict[str, dict[str, list[tuple[int, dict[str, Any]]]]] = {}
    for line, row in iter_jsonl(file, fix=FIX):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or "result" not in row:
            raise InputError('a BFCL result line is an object with a string "id" and a "result"', file=file,
                             line=line, fix=FIX)
        for key in _NUMBERS:
            value = row.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not _finite(value):
                raise InputError(f"is {str(value)[:40]}, not a finite number", file=file, line=line,
                                 field=key, fix=FIX)
        category = category_of(row["id"])
        if category not in checker.AST_CATEGORIES:
            raise InputError(f"category '{category}' (id {row['id']}) is not scored by BFCL's AST checker",
                             file=file, line=line, fix="import only the AST categories: "
                             + ", ".join(checker.AST_CATEGORIES) + " (multi-turn, agentic and relevance categories"
                             " need bfcl's full runner)")
        out.setdefault(category, {}).setdefault(row["id"], []).append((line, row))
    return out


def _trajectory(row: dict[str, Any], decoded: list[dict[str, Any]] | None, error: str) -> Trajectory:
    result = row["result"]
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    if decoded is None:
        calls = [ToolCall(function="[undecodable]", parse_error=error or "not a function call")]
    else:
        calls = [ToolCall(id=f"call_{i}", function=name, arguments=dict(args) if isinstance(args, dict) else {})
                 for i, call in enumerate(decoded) for name, args in call.items()]
    tokens = [row.get("input_token_count"), row.get("output_token_count")]
    total = sum(int(t) for t in tokens if isinstance(t, (int, float))) if any(
        isinstance(t, (int, float)) for t in tokens) else None
    latency = row.get("latency")
    return Trajectory(steps=[TrajectoryStep(role="assistant", content=text, tool_calls=calls)], total_tokens=total,
                      working_time_s=float(latency) if isinstance(latency, (int, float)) else None,
                      explanation=error or None)


def _doc_hash(sample_id: str) -> str:
    return hashlib.sha256(json.dumps(["bfcl", sample_id]).encode("utf-8")).hexdigest()[:16]


def task_for(category: str, rows: dict[str, list[tuple[int, dict[str, Any]]]], file: Path, model: str,
             name: str, given: checker.ModelFlags | None = None) -> TaskResult:
    """One category's rows as a scored TaskResult; every ground-truth id is a sample."""
    prompts, _ = checker.ground_truth(category)
    unknown = [i for i in rows if i not in prompts]
    if unknown:
        line = rows[unknown[0]][0][0]
        raise InputError(f"id '{unknown[0]}' is not in bfcl-eval {checker.version()}'s {category} data "
                         f"({len(unknown)} such ids)", file=file, line=line,
                         fix="score the file with the bfcl-eval version that generated it")
    samples: list[SampleRecord] = []
    for sample_id in prompts:
        found = rows.get(sample_id)
        if not found:
            samples.append(SampleRecord(
                doc_id=sample_id, doc_hash=_doc_hash(sample_id), scores={NO_FILTER: {}},
                trajectory=Trajectory(error=MISSING),
                extra={"sample_id": sample_id, "missing": True, AGENT_KEY: scorer_outcome(None)}))
            continue
        if len(found) > 1 and len({json.dumps(r["result"], sort_keys=True) for _, r in found}) > 1:
            raise InputError(f"id '{sample_id}' has two different results (lines {found[0][0]} and {found[1][0]})",
                             file=file, line=found[1][0], fix="keep one result per id")
        line, row = found[0]
        valid, decoded, error, error_type = checker.check(row["result"], category, sample_id, model, given)
        question = prompts[sample_id].get("question") or [[]]
        first = next((m.get("content") for turn in question for m in turn if m.get("role") == "user"), None)
        samples.append(SampleRecord(
            doc_id=sample_id, doc_hash=_doc_hash(sample_id), prompt=first if isinstance(first, str) else None,
            responses=[row["result"] if isinstance(row["result"], str) else json.dumps(row["result"])],
            scores={NO_FILTER: {}}, trajectory=_trajectory(row, decoded, error),
            extra={"sample_id": sample_id, "line": line, "error_type": error_type,
                   AGENT_KEY: scorer_outcome(1.0 if valid else 0.0, None, None, {"valid": 1.0 if valid else 0.0})}))
    flags = checker.flags(model, given)
    task = TaskResult(task=name, n_samples=len(samples), samples=samples, protocol=TaskProtocol(
        version=checker.version(), dataset=f"bfcl-eval {category}",
        agent={"source": "bfcl_result_file", "category": category, "is_fc_model": flags.is_fc_model,
               "underscore_to_dot": flags.underscore_to_dot}))
    score_task(task)
    return task


def default_name(category: str) -> str:
    return f"bfcl_{category}"


def read_result_files(path: Path, *, names: dict[str, str] | None = None, model: str | None = None,
                      samples: bool = True, files: list[Path] | None = None,
                      given: checker.ModelFlags | None = None) -> RunResult:
    """Every category at `path` as one task each (`names`: category -> task name, else `bfcl_<category>`).

    `model`: bfcl's name of the model (its result folder), else read from the files' path; `files`: the
    result files to read (default `result_files(path)`); `given`: the contract's flags for the model
    (required for a model bfcl-eval does not list; see `flags`)."""
    checker.require_bfcl()
    tasks: dict[str, TaskResult] = {}
    for file in files if files is not None else result_files(path):
        match = FILE_NAME.match(file.name)
        model = model or model_of(file)
        found = _rows(file)
        if match and match["category"] in checker.AST_CATEGORIES and not found:
            found = {match["category"]: {}}  # an empty file: every id of its category is missing
        given = model_flags.require(model, given, found, file)  # before any scoring
        for category, rows in found.items():
            if match and match["category"] != category:
                raise InputError(f"ids of category '{category}' in the {match['category']} result file", file=file,
                                 line=next(iter(rows.values()))[0][0], fix=FIX)
            name = (names or {}).get(category, default_name(category))
            if name in tasks:
                raise InputError(f"two result files of category '{category}'", file=file,
                                 fix="keep one result file per category (one model's result folder)")
            tasks[name] = task_for(category, rows, file, model, name, given)
            if not samples:
                tasks[name].samples = []
    provenance = RunProvenance(source=str(path), harness="bfcl", harness_version=checker.version(), model=model)
    return RunResult(provenance=provenance, tasks=tasks)
