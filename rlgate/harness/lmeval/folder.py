"""lm-eval's adapter: read an lm-eval output folder (`lm_eval --output_path DIR --log_samples`) into a `RunResult`.

lm-eval 0.4.x writes `results_<timestamp>.json` and one `samples_<task>_<timestamp>.jsonl` per leaf
task, usually inside a folder named after the model. The flat `"metric,filter"` keys are parsed
here, once, into nested `filter -> metric -> value`; samples (one line per filter and document)
are merged into one `SampleRecord` per document (`samples_file`, decoded by msgspec). No torch, no
lm_eval, so reading a 12,000-sample run takes a fraction of a second. Bad files raise `InputError` naming the
file and line.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rlgate._core.errors import InputError
from rlgate._core.jsonio import load_document
from rlgate.harness.lmeval.per_response import add_per_response
from rlgate.harness.lmeval.run_files import find_results_file, samples_file_of
from rlgate.harness.lmeval.samples_file import SamplesRead, read_samples_file
from rlgate.harness.lmeval.scored_responses import attach as attach_scored
from rlgate.results.shared_values import reference_pairing

__all__ = ["SamplesRead", "find_results_file", "parse_metric_key", "read_lmeval_folder", "read_samples_file"]
from rlgate.harness.lmeval.vlm_metrics import add_abilities, add_vlm_metrics
from rlgate.results.derived import add_derived_metrics
from rlgate.results.models import (
    RunProvenance,
    RunResult,
    TaskProtocol,
    TaskResult,
)

_FIX_FOLDER = "point at the folder given to lm_eval --output_path (run with --log_samples)"


def _load_json(file: Path) -> Any:
    return load_document(file, "the file is corrupt or truncated; re-run lm_eval or restore it")


def parse_metric_key(key: str) -> tuple[str, str, bool] | None:
    """`"exact_match,flexible-extract"` -> ("exact_match", "flexible-extract", is_stderr); None if not a metric."""
    if "," not in key:
        return None
    metric, _, filt = key.partition(",")
    if metric.endswith("_stderr"):
        return metric[: -len("_stderr")], filt, True
    return metric, filt, False


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer too large for a float: not finite, so the engine refuses it
            return math.inf
    return None  # "N/A", null, or a non-scalar aggregate


Nested = dict[str, dict[str, float | None]]


def _nested_metrics(entry: dict[str, Any]) -> tuple[Nested, Nested]:
    values: Nested = {}
    errors: Nested = {}
    for key, raw in entry.items():
        parsed = parse_metric_key(key)
        if parsed is None:
            continue
        metric, filt, is_stderr = parsed
        (errors if is_stderr else values).setdefault(filt, {})[metric] = _number(raw)
    return values, errors


def _protocol(task: str, doc: dict[str, Any]) -> TaskProtocol:
    config = (doc.get("configs") or {}).get(task) or {}
    version = (doc.get("versions") or {}).get(task, (config.get("metadata") or {}).get("version"))
    shots = (doc.get("n-shot") or {}).get(task, config.get("num_fewshot"))
    filters = [f.get("name", "?") for f in config.get("filter_list") or [] if isinstance(f, dict)] or ["none"]
    dataset = config.get("dataset_path")
    if dataset and config.get("dataset_name"):
        dataset += f"/{config['dataset_name']}"
    data_files = (config.get("dataset_kwargs") or {}).get("data_files")
    if data_files:
        dataset = f"{dataset} {json.dumps(data_files, sort_keys=True)}"
    return TaskProtocol(
        version=None if version is None else str(version),
        num_fewshot=shots if isinstance(shots, int) else None,
        generation_kwargs=dict(config.get("generation_kwargs") or {}),
        filters=filters,
        task_hash=(doc.get("task_hashes") or {}).get(task),
        dataset=dataset,
        scoring={k: config[k] for k in _SCORING_FIELDS if config.get(k) is not None},
    )


#: the task config fields that define how a response is scored (a function's source, as lm-eval dumps it)
_SCORING_FIELDS = ("metric_list", "filter_list", "doc_to_target", "process_results")


def read_lmeval_folder(path: str | Path, *, samples: bool = True) -> RunResult:
    """Read the newest lm-eval run under `path` into a RunResult (samples included by default)."""
    results_file = find_results_file(path)
    doc = _load_json(results_file)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise InputError("no 'results' mapping: not an lm-eval results file", file=results_file, fix=_FIX_FOLDER)
    timestamp = results_file.name[len("results_"):-len(".json")]
    _check_shape(doc, results_file)
    configs = doc.get("configs") or {}
    subtasks = {k: list(v) for k, v in (doc.get("group_subtasks") or {}).items() if isinstance(v, list)}
    groups = {k: v for k, v in subtasks.items() if v and k not in configs}
    leaves = [name for name in doc["results"] if name not in groups]
    hib_all = doc.get("higher_is_better") or {}
    n_samples = doc.get("n-samples") or {}
    tasks: dict[str, TaskResult] = {}
    for name in leaves:
        entry = doc["results"][name]
        if not isinstance(entry, dict):
            raise InputError(f"results['{name}'] is not a mapping", file=results_file)
        values, errors = _nested_metrics(entry)
        counts: dict[str, Any] = n_samples[name] if isinstance(n_samples.get(name), dict) else {}
        count = counts.get("effective")
        task = TaskResult(
            task=name, metrics=values, stderr=errors,
            higher_is_better={k: bool(v) for k, v in (hib_all.get(name) or {}).items() if v is not None},
            n_samples=_count(count, entry, name, results_file),
            n_expected=_original(counts.get("original"), name, results_file),
            protocol=_protocol(name, doc),
        )
        sample_file = samples_file_of(results_file, name, timestamp) if samples else None
        if sample_file is not None:
            task.samples, task.corrupt, task.duplicate_lines = read_samples_file(sample_file,
                                                                                 reference_pairing(name))
            if not task.samples and task.n_samples:  # no samples at all would read as a run without --log_samples
                raise InputError(f"holds no sample line, where the results file counts {task.n_samples} documents "
                                 "(a run killed while writing it?)", file=sample_file,
                                 fix="re-run lm_eval for this task with --log_samples, or restore the samples file")
        add_derived_metrics(task, configs.get(name) or {})
        add_vlm_metrics(task)
        add_per_response(task, configs.get(name) or {})
        if samples:
            attach_scored(task, results_file)
        tasks[name] = task
    group_metrics = {g: _nested_metrics(doc["results"].get(g) or {})[0] for g in groups}
    run = RunResult(provenance=_provenance(results_file, doc), tasks=tasks, groups=groups,
                    group_metrics=group_metrics)
    _add_group_derived(run)
    add_abilities(run)
    return run


_FLAG: TypeAdapter[bool | None] = TypeAdapter(bool | None)
_MAPPINGS = ("configs", "versions", "n-shot", "higher_is_better", "n-samples", "group_subtasks", "task_hashes")
_TASK_MAPPINGS = ("configs", "higher_is_better", "n-samples")
_CONFIG_MAPPINGS = ("metadata", "generation_kwargs", "dataset_kwargs")


def _count(count: Any, entry: dict[str, Any], task: str, file: Path) -> int:
    """The task's document count: n-samples' effective, else the entry's sample_len (0 when neither)."""
    value = count if count is not None else entry.get("sample_len", 0) or 0
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        field = f"n-samples.{task}.effective" if count is not None else f"results.{task}.sample_len"
        raise InputError(f"is not a count ({str(value)[:60]})", file=file, field=field,
                         fix="the results file is corrupt or edited; re-run lm_eval or restore it") from None


def _original(value: Any, task: str, file: Path) -> int | None:
    """n-samples.original: the documents of the task's full split, what a complete run holds (None: unknown)."""
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"is not a count ({str(value)[:60]})", file=file, field=f"n-samples.{task}.original",
                         fix="the results file is corrupt or edited; re-run lm_eval or restore it") from None


def _check_shape(doc: dict[str, Any], file: Path) -> None:
    """Refuse, naming the field, a results file whose known fields have a type lm-eval never writes (an edited
    or foreign file): read as they are, they would stop the reading with a traceback. Absent or empty is fine."""

    def bad(field: str, what: str) -> InputError:
        return InputError(f"is not {what}", file=file, field=field,
                          fix="the results file is corrupt or edited; re-run lm_eval or restore it")

    def mapping(value: Any, field: str) -> None:
        if value and not isinstance(value, dict):
            raise bad(field, "a mapping")

    for key in _MAPPINGS:
        mapping(doc.get(key), key)
    for group, entry in (doc.get("group_subtasks") or {}).items():
        if isinstance(entry, list) and not all(isinstance(name, str) for name in entry):
            raise bad(f"group_subtasks.{group}", "a list of task names")
    for task, entry in doc["results"].items():
        mapping(entry, f"results.{task}")
        for key in _TASK_MAPPINGS:
            mapping((doc.get(key) or {}).get(task), f"{key}.{task}")
        hashed = (doc.get("task_hashes") or {}).get(task)
        if hashed is not None and not isinstance(hashed, str):
            raise bad(f"task_hashes.{task}", "a string")
        config = (doc.get("configs") or {}).get(task) or {}
        for key in _CONFIG_MAPPINGS:
            mapping(config.get(key), f"configs.{task}.{key}")
        dataset = config.get("dataset_path")
        if dataset and not isinstance(dataset, str):
            raise bad(f"configs.{task}.dataset_path", "a string")
        filters = config.get("filter_list") or []
        if not isinstance(filters, (list, dict, str)) or any(
                isinstance(f, dict) and not isinstance(f.get("name", "?"), str) for f in filters):
            raise bad(f"configs.{task}.filter_list", "a list of filters with string names")
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    texts = {"model_name": doc.get("model_name"), "lm_eval_version": doc.get("lm_eval_version"),
             "system_instruction": doc.get("system_instruction")}
    if not texts["model_name"]:  # the model's name is then config.model
        texts = {"config.model": (config or {}).get("model"), **texts, "model_name": None}
    for key, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise bad(key, "a string")
    model_args = (config or {}).get("model_args")
    if model_args is not None and not isinstance(model_args, (str, dict)):
        raise bad("config.model_args", "a string or a mapping")
    try:
        _FLAG.validate_python(doc.get("fewshot_as_multiturn"))  # what RunProvenance accepts
    except ValidationError:
        raise bad("fewshot_as_multiturn", "true or false") from None


def _provenance(results_file: Path, doc: dict[str, Any]) -> RunProvenance:
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    versions = {k: str(doc[k]) for k in ("lm_eval_version", "transformers_version") if doc.get(k)}
    wall = doc.get("total_evaluation_time_seconds")
    try:
        wall_s = float(wall) if wall is not None else None
    except (TypeError, ValueError):
        wall_s = None
    return RunProvenance(
        source=str(results_file.parent),
        harness="lm_eval",
        harness_version=doc.get("lm_eval_version"),
        model=doc.get("model_name") or (config or {}).get("model"),
        model_args=(config or {}).get("model_args"),
        lm_eval_version=doc.get("lm_eval_version"),
        library_versions=versions,
        chat_template=bool(doc.get("chat_template")) if "chat_template" in doc else None,
        system_instruction=doc.get("system_instruction"),
        fewshot_as_multiturn=doc.get("fewshot_as_multiturn"),
        date=str(doc["date"]) if doc.get("date") is not None else None,
        wall_time_s=wall_s, seeds=_seeds(config or {}),
    )


#: the seeds lm-eval's results file records in `config` (simple_evaluate's arguments, by lm-eval's names)
_SEED_FIELDS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")


def _seeds(config: dict[str, Any]) -> dict[str, int]:
    return {name: config[name] for name in _SEED_FIELDS if type(config.get(name)) is int}


def _add_group_derived(run: RunResult) -> None:
    """Size-weighted group values of the derived metrics (lm-eval's weight_by_size=True)."""
    for group in run.groups:
        leaves = [run.tasks[t] for t in run.leaves(group)]
        totals: dict[tuple[str, str], list[float]] = {}
        for task in leaves:
            for filt, metrics in task.metrics.items():
                for metric, value in metrics.items():
                    if value is not None and metric in _DERIVED_NAMES:
                        pair = totals.setdefault((filt, metric), [0.0, 0.0])
                        pair[0] += value * task.n_samples
                        pair[1] += task.n_samples
        for (filt, metric), (weighted, size) in totals.items():
            if size:
                run.group_metrics.setdefault(group, {}).setdefault(filt, {})[metric] = weighted / size


_DERIVED_NAMES = ("answer_parse_failure_rate", "response_length_mean", "truncation_rate")
