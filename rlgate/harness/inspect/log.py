"""inspect-ai `.eval` logs as rlgate results: one sample per (task, sample id, epoch), with its trajectory.

Imports inspect_ai (only `read_eval_log`); reached only from `InspectHarness.read` and `.run`.
Every sample in the log is kept: an errored sample or one that hit a limit is a failed trajectory,
and a (sample id, epoch) the log's dataset promises but the log lacks (an interrupted run) becomes
a failed placeholder trajectory, so a run never has fewer samples than expected.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from sys import intern
from typing import Any, TypeVar

from pydantic import BaseModel

from rlgate._core.errors import InputError
from rlgate._core.gcpause import collector_paused
from rlgate.harness.inspect import is_json_log
from rlgate.harness.inspect.members import LogSamples, read_samples
from rlgate.harness.inspect.scores import sample_scores
from rlgate.results.agent_metrics import AGENT_KEY, score_task, scorer_outcome
from rlgate.results.models import (
    NO_FILTER,
    DocId,
    RunProvenance,
    RunResult,
    SampleRecord,
    SampleValue,
    TaskProtocol,
    TaskResult,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    construct_compact,
)

#: metadata key rlgate writes into logs it runs: the contract's name for the task
TASK_NAME_KEY = "rlgate_task"
#: ... and the run's agent protocol fields and checkpoint fingerprint (a log is reused only under both)
PROTOCOL_KEY, CHECKPOINT_KEY = "rlgate_protocol", "rlgate_checkpoint"
CORRUPT_FIX = ("the log is corrupt or truncated (a killed run?): re-run the task, or resume it with "
               "`inspect eval-retry LOG`, then point rlgate at the complete log")


def task_name(log: Any) -> str:
    """The rlgate name of a log's task: the one rlgate recorded, else inspect's name without its package."""
    recorded = (log.eval.metadata or {}).get(TASK_NAME_KEY)
    if recorded:
        return str(recorded)
    name = str(log.eval.task)
    return name.rsplit("/", 1)[-1]


def read_log(path: Path, *, header_only: bool = False) -> Any:
    """`read_eval_log`, with a corrupt, truncated or foreign file as one InputError naming it."""
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(path), header_only=header_only)
    except Exception as exc:  # zip, JSON and pydantic errors all mean the same thing to the user
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read this inspect log ({type(exc).__name__}: {reason})", file=path,
                         fix=CORRUPT_FIX) from None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for item in content or []:
        text = getattr(item, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(item, 'type', 'content')}]")
    return "\n".join(parts)


_M = TypeVar("_M", bound=BaseModel)


def _built(cls: type[_M], values: dict[str, Any]) -> _M:
    """A model from values already of the right types with every field given, in declaration order: what
    `model_construct` does, without its per-field default handling (most of the reading time at 10^5-10^6
    steps a run), in key-sharing instance dicts with one shared fields-set (`construct_compact`: a dict and a
    set of its own per step were over half the memory of a trajectory). Only for rlgate's own models."""
    return construct_compact(cls, values, frozenset(values))


def _steps(messages: list[Any]) -> list[TrajectoryStep]:
    """The trajectory's steps. Tool names are interned and a tool result's call id is its call's own string:
    equal strings, one object each (the memory of 10^5 trajectories)."""
    steps: list[TrajectoryStep] = []
    ids: dict[str, str] = {}
    for message in messages:
        role = message.role
        if role == "assistant":
            calls = [_built(ToolCall, {"id": ids.setdefault(c.id, c.id) if type(c.id) is str else c.id,
                                       "function": intern(c.function) if type(c.function) is str else c.function,
                                       "arguments": dict(c.arguments or {}), "parse_error": c.parse_error})
                     for c in (message.tool_calls or [])]
            steps.append(_built(TrajectoryStep, {"role": "assistant", "content": _text(message.content),
                                                 "tool_calls": calls, "tool_call_id": None, "error": None}))
        elif role == "tool":
            error = message.error
            steps.append(_built(TrajectoryStep, {
                "role": "tool", "content": _text(message.content), "tool_calls": [],
                "tool_call_id": ids.get(message.tool_call_id, message.tool_call_id),
                "error": f"{error.type}: {error.message}" if error is not None else None}))
        else:
            steps.append(_built(TrajectoryStep, {"role": role, "content": _text(message.content), "tool_calls": [],
                                                 "tool_call_id": None, "error": None}))
    return steps


def _tokens(sample: Any) -> int | None:
    usage = sample.model_usage or {}
    if not usage:
        return None
    return int(sum((u.total_tokens or 0) for u in usage.values()))


def _final_state(sample: Any) -> dict[str, Any] | None:
    """The sample's store when it ended (inspect keeps it in the log): JSON data only, for the rollout card."""
    found = getattr(sample, "store", None)
    if not found:
        return None
    return {str(k): v for k, v in found.items() if isinstance(v, (str, int, float, bool, list, dict, type(None)))}


def _explanation(sample: Any) -> str | None:
    for score in (sample.scores or {}).values():
        if score.explanation:
            return str(score.explanation)
    return None


def _doc_hash(sample_id: DocId) -> str:
    """Keyed by the sample id alone, so a sample the log lacks pairs with its partner as a failure; a changed
    question under the same id shows as a prompt difference in the protocol check."""
    return hashlib.sha256(json.dumps(["inspect", str(sample_id)]).encode("utf-8")).hexdigest()[:16]


def _target(target: Any) -> str:
    return target if isinstance(target, str) else "\n".join(str(t) for t in target or [])


def _doc_id(sample_id: Any, epoch: int, epochs: int) -> DocId:
    return sample_id if epochs == 1 else f"{sample_id}#{epoch}"


def sample_record(sample: Any, epochs: int) -> SampleRecord:
    """One logged sample (one epoch) as a SampleRecord with its trajectory and scorer outcome."""
    prompt = sample.input if isinstance(sample.input, str) else _text(
        next((m.content for m in sample.input if m.role == "user"), ""))
    target = _target(sample.target)
    limits = [sample.limit.type] if getattr(sample, "limit", None) is not None else []
    error = sample.error.message if sample.error is not None else None
    trajectory = _built(Trajectory, {
        "steps": _steps(sample.messages or []), "epoch": int(sample.epoch), "limits_hit": limits, "error": error,
        "total_tokens": _tokens(sample), "working_time_s": getattr(sample, "working_time", None),
        "final_state": _final_state(sample), "explanation": _explanation(sample)})
    success, state, numeric, raw = sample_scores(sample)
    completion = sample.output.completion if sample.output is not None else ""
    # an unreadable score string stays as written, so the quarantine lists it (wrong type) instead of a number
    scores: dict[str, dict[str, SampleValue]] = {NO_FILTER: {**numeric, **raw} if raw else dict(numeric)}
    extra: dict[str, Any] = {"sample_id": sample.id,
                             AGENT_KEY: scorer_outcome(success, state, completion, numeric)}
    if sample.metadata:
        extra["metadata"] = {k: v for k, v in sample.metadata.items() if isinstance(v, (str, int, float, bool))}
    return _built(SampleRecord, {
        "doc_id": _doc_id(sample.id, int(sample.epoch), epochs), "doc_hash": _doc_hash(sample.id),
        "prompt": prompt, "target": target, "responses": [completion], "filtered": {}, "scores": scores, "doc": None,
        "response_tokens": None, "truncated": None, "extra": extra, "trajectory": trajectory})


def _placeholder(sample_id: Any, epoch: int, epochs: int, reason: str) -> SampleRecord:
    trajectory = Trajectory(epoch=epoch, error=reason)
    return SampleRecord(doc_id=_doc_id(sample_id, epoch, epochs), doc_hash=_doc_hash(sample_id),
                        scores={NO_FILTER: {}}, trajectory=trajectory,
                        extra={"sample_id": sample_id, "missing": True,
                               AGENT_KEY: scorer_outcome(None, None, None, {})})


def _tools(log: Any) -> list[str]:
    """Tool names the run offered the model: its first model call's tools, else the plan's use_tools step."""
    for sample in log.samples or []:
        for event in sample.events or []:
            if getattr(event, "event", None) == "model":
                return sorted({tool.name for tool in event.tools or []})
    names: set[str] = set()
    for step in (log.plan.steps if log.plan is not None else []):
        for tool in (step.params or {}).get("tools", []) if step.solver == "use_tools" else []:
            if isinstance(tool, dict) and "name" in tool:
                names.add(str(tool["name"]))
    return sorted(names)


def _scoring(spec: Any) -> dict[str, Any]:
    """The scorers the log names, with their arguments (what defines a score), as JSON data."""
    scorers = getattr(spec, "scorers", None) or []
    return {"scorers": [{"name": s.name, "options": s.options or {}} for s in scorers]} if scorers else {}


def _solver(log: Any) -> list[str]:
    return [str(step.solver) for step in log.plan.steps] if log.plan is not None else []


def _records(samples: list[Any], epochs: int) -> list[SampleRecord]:
    """Every sample as a record, with the cyclic garbage collector paused: building 10^5-10^6 small objects
    beside the log's own graph otherwise triggers full collections that cost more than the building."""
    with collector_paused():
        return [sample_record(s, epochs) for s in samples]


def epochs_of(log: Any) -> int:
    return int(getattr(log.eval.config, "epochs", None) or 1)


def task_result(log: Any, path: Path, *, samples: bool = True, read: LogSamples | None = None) -> TaskResult:
    """A log's samples as one TaskResult, with missing (sample, epoch) pairs as failed placeholders. `read`: the
    samples already read member by member (`members.read_samples`; `log` is then the header alone)."""
    spec = log.eval
    epochs = epochs_of(log)
    name = task_name(log)
    records = read.records if read is not None else _records(log.samples or [], epochs)
    expected_ids = list(getattr(spec.dataset, "sample_ids", None) or [])
    if expected_ids:
        have = {(r.extra["sample_id"], r.trajectory.epoch if r.trajectory else 1) for r in records}
        reason = (f"missing from the log (run status: {log.status}); a failure for task_success, unknown for "
                  "every other metric")
        for sample_id in expected_ids:
            for epoch in range(1, epochs + 1):
                if (sample_id, epoch) not in have:
                    records.append(_placeholder(sample_id, epoch, epochs, reason))
    config = spec.config
    agent = {"epochs": epochs, "message_limit": getattr(config, "message_limit", None),
             "token_limit": getattr(config, "token_limit", None), "time_limit": getattr(config, "time_limit", None),
             "task_args": {k: v for k, v in (spec.task_args or {}).items()},
             "tools": _tools(log) if read is None or read.tools is None else read.tools,
             "solver": _solver(log)}
    generate = log.plan.config.model_dump(exclude_none=True) if log.plan is not None else {}
    task = TaskResult(task=name, n_samples=len(records), samples=records,
                      protocol=TaskProtocol(version=str(spec.task_version), generation_kwargs=generate,
                                            dataset=str(getattr(spec.dataset, "name", None) or ""),
                                            agent=agent, scoring=_scoring(spec)))
    score_task(task)
    for name, value in _scorer_means(records).items():
        task.metrics.setdefault(NO_FILTER, {}).setdefault(name, value)
    if not samples:
        task.samples = []  # the metrics need every trajectory; the caller wanted only the aggregates
    return task


def _scorer_means(records: list[SampleRecord]) -> dict[str, float]:
    """Mean of each of the scorer's own numeric scores over the samples that have it."""
    sums: dict[str, list[float]] = {}
    for record in records:
        for name, value in record.scores.get(NO_FILTER, {}).items():
            if isinstance(value, float) and math.isfinite(value):  # NaN / inf are corrupt, never averaged
                acc = sums.setdefault(name, [0.0, 0.0])
                acc[0] += value
                acc[1] += 1
    return {name: total / count for name, (total, count) in sums.items() if count}


def provenance(log: Any, path: Path, version: str | None) -> RunProvenance:
    spec = log.eval
    return RunProvenance(source=str(path), harness="inspect", harness_version=version, model=str(spec.model),
                         model_args={k: str(v) for k, v in (spec.model_args or {}).items()},
                         library_versions={str(k): str(v) for k, v in (spec.packages or {}).items()},
                         system_instruction=(log.plan.config.system_message if log.plan is not None else None),
                         date=str(spec.created), seeds=_seeds(log))


def _seeds(log: Any) -> dict[str, int]:
    """The generation seed the log records (GenerateConfig.seed), where one was set."""
    seed = log.plan.config.seed if log.plan is not None else None
    return {"seed": seed} if type(seed) is int else {}


def log_files(path: Path) -> list[Path]:
    """The .eval / .json logs at `path` (a file, an rlgate run folder, or a folder of logs)."""
    if path.is_file():
        return [path]
    for folder in (path / "logs", path):
        found = sorted([*folder.glob("*.eval"), *folder.glob("*.json")]) if folder.is_dir() else []
        found = [f for f in found if f.suffix == ".eval" or is_json_log(f)]  # not a manifest or a summary
        if found:
            return found
    raise InputError("no inspect log (.eval, or a JSON log with top-level version/status/eval) in this folder",
                     file=path,
                     fix="point at an .eval file, or a folder of them (inspect eval --log-dir DIR)")


def _finished(log: Any, file: Path, scored: bool | None = None) -> None:
    """Refuse a log that is not a finished, scored run: its missing or unscored samples are unknown, never 0.
    `scored`: whether some sample has a score, when the samples were read member by member (`log.samples` None)."""
    status = str(getattr(log, "status", "") or "unknown")
    if status != "success":
        raise InputError(f"the log's status is '{status}', not 'success': the run did not finish, so what it lacks "
                         "is unknown", file=file,
                         fix=f"resume it with `inspect eval-retry {file}` (or re-run the task), then point rlgate "
                             "at the finished log")
    logged = log.samples or []
    if scored is False or (scored is None and logged and not any(sample.scores for sample in logged)):
        raise InputError(f"no sample of this log has a score (status '{status}'; saved before scoring?): an "
                         "unscored sample is unknown, not a failure", file=file,
                         fix=f"score it with `inspect score {file}`, then point rlgate at the scored log")


def _read(file: Path, fast: bool) -> tuple[Any, LogSamples | None]:
    """(the log, its samples read member by member) of an `.eval` log (`members`); (inspect's whole log, None) for
    a JSON log, with `fast` False, or where the member by member read hands the log back to inspect's reader."""
    if fast and file.suffix == ".eval":
        header = read_log(file, header_only=True)
        read = read_samples(file, epochs_of(header), sample_record)
        if read is not None:
            if header.eval.dataset.sample_ids is None:  # what read_eval_log fills in when the header lacks them
                header.eval.dataset.sample_ids = read.ids
            return header, read
    return read_log(file), None


def read_logs(path: Path, version: str | None, *, samples: bool = True, fast: bool = True) -> RunResult:
    """Every log at `path` as one RunResult (one task per log; two logs of one task are an error). A log that
    did not finish or holds no score is refused (`_finished`). `fast` False: every log through inspect's
    `read_eval_log` (the exact path the member by member read must agree with)."""
    files = log_files(path)
    tasks: dict[str, TaskResult] = {}
    first: Any = None
    origin: dict[str, Path] = {}
    for file in files:
        log, read = _read(file, fast)
        _finished(log, file, None if read is None else read.scored or not read.records)
        first = first or log
        task = task_result(log, file, samples=samples, read=read)
        if task.task in tasks:
            raise InputError(f"two logs of task '{task.task}': {origin[task.task].name} and {file.name}",
                             file=path, fix="keep one log per task (e.g. the completed retry) in the folder")
        tasks[task.task] = task
        origin[task.task] = file
    return RunResult(provenance=provenance(first, path, version), tasks=tasks)
