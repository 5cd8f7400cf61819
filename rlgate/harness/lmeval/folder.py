"""lm-eval's adapter: read an lm-eval output folder (`lm_eval --output_path DIR --log_samples`) into a `RunResult`.

lm-eval 0.4.x writes `results_<timestamp>.json` and one `samples_<task>_<timestamp>.jsonl` per leaf
task, usually inside a folder named after the model. The flat `"metric,filter"` keys are parsed
here, once, into nested `filter -> metric -> value`; samples (one line per filter and document)
are merged into one `SampleRecord` per document. Only `json` is used: no torch, no lm_eval, so
reading a 12,000-sample run takes a fraction of a second. Bad files raise `InputError` naming the
file and line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from rlgate.errors import InputError
from rlgate.harness.lmeval.per_response import add_per_response
from rlgate.harness.lmeval.vlm_metrics import add_abilities, add_vlm_metrics
from rlgate.jsonl import iter_jsonl
from rlgate.results.derived import add_derived_metrics
from rlgate.results.integrity import SampleLines, classify, shown
from rlgate.results.models import (
    CorruptScore,
    RunProvenance,
    RunResult,
    SampleRecord,
    TaskProtocol,
    TaskResult,
    doc_order,
)

_RESULTS_RE = re.compile(r"^results_(?P<ts>.+)\.json$")
_FIX_FOLDER = "point at the folder given to lm_eval --output_path (run with --log_samples)"


def find_results_file(path: str | Path) -> Path:
    """The newest results_*.json in `path` or in the one model-named folder below it."""
    root = Path(path)
    if root.is_file():
        if _RESULTS_RE.match(root.name):
            return root
        raise InputError(f"'{root.name}' is not an lm-eval results file (results_<timestamp>.json)",
                         file=root, fix=_FIX_FOLDER)
    if not root.is_dir():
        raise InputError("results folder does not exist", file=root, fix=_FIX_FOLDER)
    found = sorted(root.glob("results_*.json"))
    if not found:
        nested = sorted(root.glob("*/results_*.json"))
        folders = sorted({p.parent.name for p in nested})
        if len(folders) > 1:
            raise InputError(f"results of several models under this folder: {', '.join(folders)}", file=root,
                             fix="point at one model's folder, e.g. " + str(root / folders[0]))
        found = nested
    if not found:
        raise InputError("no results_*.json here or in a folder one level below", file=root, fix=_FIX_FOLDER)
    # lm-eval's timestamps are ISO dates with ':' replaced, so names sort by time.
    return max(found, key=lambda p: (_RESULTS_RE.match(p.name)["ts"], p.stat().st_mtime))  # type: ignore[index]


def _load_json(file: Path) -> Any:
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not a UTF-8 text file ({exc.reason})", file=file, fix=_FIX_FOLDER) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=file) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno,
                         fix="the file is corrupt or truncated; re-run lm_eval or restore it") from None


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
        return float(value)
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
    )


def _prompt(arguments: Any) -> str | None:
    if isinstance(arguments, dict):  # lm-eval >= 0.4.3: {"gen_args_0": {"arg_0": prompt, ...}}
        first = arguments.get("gen_args_0") or {}
        value = first.get("arg_0") if isinstance(first, dict) else None
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        value = arguments[0][0]
    else:
        value = None
    return value if isinstance(value, str) else None


def _responses(resps: Any) -> list[str]:
    if not isinstance(resps, list) or not resps:
        return []
    first = resps[0]
    if isinstance(first, list):
        return [str(r) for r in first]
    return [str(r) for r in resps]


def _agreeing(row: dict[str, Any]) -> dict[str, Any]:
    """What two lines for the same document and filter must agree on (compared only when a line repeats)."""
    names = row["metrics"] if isinstance(row.get("metrics"), list) else []
    return {"response": row.get("resps"), "filtered answer": row.get("filtered_resps"),
            "document": row.get("doc_hash"), "target": row.get("target"), **{str(m): row.get(m) for m in names}}


class SamplesRead(NamedTuple):
    """One samples file: a record per document, the scores taken out as corrupt, identical repeats collapsed."""

    samples: list[SampleRecord]
    corrupt: list[CorruptScore]
    duplicate_lines: int


def read_samples_file(file: Path) -> SamplesRead:
    """Merge a samples_<task>_<ts>.jsonl (one line per filter and document) into records by doc_id.

    A line repeating (doc_id, filter) is collapsed when identical and refused (InputError naming both
    lines) when it disagrees. A NaN / infinite score, or a non-number where the metric is numeric on
    other lines, is listed as corrupt instead of kept; non-numeric values of a metric that is never
    numeric (corpus metrics such as bleu keep (reference, prediction) per sample) are skipped as before.
    """
    records: dict[int, dict[str, Any]] = {}
    fix = "the samples file is corrupt or truncated; re-run lm_eval for this task"
    lines = SampleLines(file, fix="two lines for the same document and filter disagree, so neither can be trusted; "
                        "re-run lm_eval for this task (or delete the line that is wrong)", fields=_agreeing)
    corrupt: list[CorruptScore] = []
    odd: list[tuple[int, int, str, str, Any]] = []  # (doc_id, line, filter, metric, value) not numbers
    where = file.name
    for number, row in iter_jsonl(file, fix=fix):
        if not isinstance(row, dict) or not isinstance(row.get("doc_id"), int):
            raise InputError("a sample line needs an integer 'doc_id'", file=file, line=number,
                             fix="this is not an lm-eval samples file")
        filt = row.get("filter", "none")
        names = row.get("metrics") or []
        if not isinstance(names, list):
            names = []
        if not lines.first(row["doc_id"], str(filt), number, row):
            continue
        record = records.get(row["doc_id"])
        if record is None:
            record = records[row["doc_id"]] = {
                "doc_id": row["doc_id"], "doc_hash": str(row.get("doc_hash") or ""),
                "prompt": _prompt(row.get("arguments")), "target": None if row.get("target") is None
                else str(row["target"]), "responses": _responses(row.get("resps")), "filtered": {},
                "scores": {}, "doc": row.get("doc") if isinstance(row.get("doc"), dict) else None,
                "extra": {},
            }
            tokens, truncated = row.get("response_tokens"), row.get("truncated")
            # optional per-response details a runner may add to lm-eval's sample lines
            if isinstance(tokens, list) and all(isinstance(t, int) for t in tokens):
                record["response_tokens"] = tokens
            if isinstance(truncated, list) and all(isinstance(t, bool) for t in truncated):
                record["truncated"] = truncated
        filtered = row.get("filtered_resps")
        if isinstance(filtered, list) and filtered:
            first = filtered[0]
            if isinstance(first, list):
                record["extra"].setdefault("filtered_all", {})[filt] = [str(v) for v in first]
                first = first[0] if first else ""
            record["filtered"][filt] = str(first)
        scores = record["scores"].setdefault(filt, {})
        for metric in names:
            if metric not in row:
                continue  # listed but not written: the sample lacks it (counted by the engine as missing)
            raw = row[metric]
            if type(raw) is float and raw - raw == 0.0:  # the common case, finite: no call
                scores[metric] = raw
                continue
            value, problem = classify(raw)
            if value is not None:
                scores[metric] = value
            elif problem == "non_finite":
                corrupt.append(CorruptScore(doc_id=row["doc_id"], metric=metric, filter=filt, problem=problem,
                                            value=shown(raw), where=f"{where}:{number}"))
            else:
                odd.append((row["doc_id"], number, filt, metric, raw))
    numeric = {(c.filter, c.metric) for c in corrupt}  # a NaN is still a number
    if odd:
        numeric |= {(f, m) for r in records.values() for f, values in r["scores"].items() for m in values}
    for doc_id, number, filt, metric, raw in odd:
        if raw is None or (filt, metric) in numeric:  # a number elsewhere: this line's value is broken
            corrupt.append(CorruptScore(doc_id=doc_id, metric=metric, filter=filt, problem="wrong_type",
                                        value=shown(raw), where=f"{where}:{number}"))
    corrupt.sort(key=lambda c: (doc_order(c.doc_id), c.filter, c.metric))
    # Every field was built above with its declared type, so validation would only cost time.
    samples = [SampleRecord.model_construct(**r) for r in records.values()]
    return SamplesRead(samples, corrupt, lines.collapsed)


def read_lmeval_folder(path: str | Path, *, samples: bool = True) -> RunResult:
    """Read the newest lm-eval run under `path` into a RunResult (samples included by default)."""
    results_file = find_results_file(path)
    doc = _load_json(results_file)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise InputError("no 'results' mapping: not an lm-eval results file", file=results_file, fix=_FIX_FOLDER)
    timestamp = _RESULTS_RE.match(results_file.name)["ts"]  # type: ignore[index]
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
        count = n_samples.get(name, {}).get("effective") if isinstance(n_samples.get(name), dict) else None
        task = TaskResult(
            task=name, metrics=values, stderr=errors,
            higher_is_better={k: bool(v) for k, v in (hib_all.get(name) or {}).items() if v is not None},
            n_samples=int(count if count is not None else entry.get("sample_len", 0) or 0),
            protocol=_protocol(name, doc),
        )
        sample_file = results_file.parent / f"samples_{name}_{timestamp}.jsonl"
        if samples and sample_file.exists():
            task.samples, task.corrupt, task.duplicate_lines = read_samples_file(sample_file)
        add_derived_metrics(task, configs.get(name) or {})
        add_vlm_metrics(task)
        add_per_response(task, configs.get(name) or {})
        tasks[name] = task
    group_metrics = {g: _nested_metrics(doc["results"].get(g) or {})[0] for g in groups}
    run = RunResult(provenance=_provenance(results_file, doc), tasks=tasks, groups=groups,
                    group_metrics=group_metrics)
    _add_group_derived(run)
    add_abilities(run)
    return run


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
        wall_time_s=wall_s,
    )


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
