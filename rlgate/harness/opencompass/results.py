"""OpenCompass's own per-sample verdicts (`results/<model>/<abbr>.json` `details`) as a RunResult.

OpenCompass (`opencompass/tasks/openicl_eval.py`, `OpenICLEvalTask._save_results`) writes one JSON
document per model and dataset, `<work_dir>/<timestamp>/results/<model>/<abbr>.json`: the
evaluator's aggregate (`accuracy`, in percent; `accuracy (N runs average)` when a dataset is sampled
N times) and, unless run with `--dump-eval-details False`, `details`. Its forms, read from the source:

- 0.4 - 0.5 (`BaseEvaluator.evaluate`): a list, one entry per example, `{"example_abbr":
  "<abbr>[_<split>]_<idx>", "pred": [...], "answer": [...], "correct": [bool per replica]}`
  (`is_correct` or `cascade_correct` for some evaluators);
- earlier evaluators' own lists or `{"<i>": {...}}` mappings with a scalar `correct`;
- `format_details` (an evaluator that gives none): `{"type": "GEN" | "PPL", "<i>": {"predictions",
  "references", "correct"?}}`.

One sample per example; its `accuracy` is the mean of its replicas' verdicts (the sample is the
unit). An example without a verdict is refused (unknown is never zero), and so is a `details` list
whose mean is not the file's own `accuracy`. Subjective (judge) results, `{"<i>": {"origin_prompt":
judge prompt, ...}}` with no `details`, hold pairwise judge verdicts, not per-sample correctness:
refused with the reason. The benchmark version is `<abbr>@<config hash>` from the summarizer's csv.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import load_document
from rlgate.harness.lmeval.opencompass import summary_version
from rlgate.results.models import NO_FILTER, RunProvenance, RunResult, SampleRecord, TaskProtocol, TaskResult

METRIC = "accuracy"
VERDICT_KEYS = ("correct", "is_correct", "cascade_correct")
FIX = ("give the results/<model>/<dataset>.json OpenCompass wrote with its per-sample details (the default; not "
       "--dump-eval-details False), unedited")
_INDEX = re.compile(r"_(\d+)$")


def results_files(path: Path) -> tuple[list[Path], Path | None]:
    """(results/<model>/<abbr>.json files, the run folder holding summary/ and predictions/, when known)."""
    if path.is_file():
        run = path.parent.parent.parent if path.parent.parent.name == "results" else None
        return [path], run
    if path.name == "results":
        models = sorted(p for p in path.iterdir() if p.is_dir())
        return _one_model(path, models), path.parent
    if path.parent.name == "results":
        return sorted(path.glob("*.json")), path.parent.parent
    runs = [path] if (path / "results").is_dir() else sorted(p for p in path.iterdir() if (p / "results").is_dir())
    if len(runs) != 1:
        raise InputError(f"{'no' if not runs else len(runs)} OpenCompass run folders (<timestamp>/results/) here",
                         file=path, fix="point at one run folder <work_dir>/<timestamp>, or at results/<model>")
    models = sorted(p for p in (runs[0] / "results").iterdir() if p.is_dir())
    return _one_model(runs[0] / "results", models), runs[0]


def _one_model(results: Path, models: list[Path]) -> list[Path]:
    if len(models) != 1:
        listed = ", ".join(m.name for m in models[:5]) or "none"
        raise InputError(f"an OpenCompass run holds {len(models)} models' results ({listed}); one run is one model",
                         file=results, fix="point at results/<model> of the model to gate")
    return sorted(models[0].glob("*.json"))


def _entries(details: Any, file: Path) -> list[tuple[str, dict[str, Any]]]:
    """(position key, entry) per example, in OpenCompass's order."""
    if isinstance(details, list):
        pairs = [(str(i), entry) for i, entry in enumerate(details)]
    elif isinstance(details, dict):
        pairs = [(k, v) for k, v in details.items() if k != "type"]
        if not all(k.isdigit() for k, _ in pairs):
            bad = next(k for k, _ in pairs if not k.isdigit())
            raise InputError(f"details key '{bad[:40]}' is not an example index", file=file, field="details", fix=FIX)
        pairs.sort(key=lambda kv: int(kv[0]))
    else:
        raise InputError(f"'details' is a {type(details).__name__}, not a list or mapping of examples", file=file,
                         field="details", fix=FIX)
    for key, entry in pairs:
        if not isinstance(entry, dict):
            raise InputError(f"details entry {key} is not an object", file=file, field=f"details.{key}", fix=FIX)
    return pairs


def _verdicts(entry: dict[str, Any], key: str, file: Path) -> list[bool]:
    name = next((k for k in VERDICT_KEYS if k in entry), None)
    if name is None:
        raise InputError(f"details entry {key} records no per-sample verdict ({', '.join(VERDICT_KEYS)}): this "
                         "dataset's evaluator gives none, and an unknown verdict is never a failure", file=file,
                         field=f"details.{key}", fix="gate this dataset through an lm-eval task (rlgate import --from "
                         "opencompass) or an evaluator that records `correct` per example")
    value = entry[name]
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, bool) for v in values):
        raise InputError(f"details entry {key}: '{name}' is {json.dumps(value)[:60]}, not true/false per replica",
                         file=file, field=f"details.{key}.{name}", fix=FIX)
    return values


def _texts(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [] if value is None else [str(value)]


def _subjective(data: dict[str, Any]) -> bool:
    first = next(iter(data.values()), None)
    return "details" not in data and all(k.isdigit() for k in data) and isinstance(first, dict) and (
        "origin_prompt" in first)


def _own_accuracy(data: dict[str, Any]) -> tuple[str, float] | None:
    for key, value in data.items():
        if (key == METRIC or (key.startswith(METRIC + " (") and key.endswith("runs average)"))) and isinstance(
                value, int | float) and not isinstance(value, bool):
            return key, float(value)
    return None


def read_dataset(file: Path, run: Path | None) -> TaskResult:
    """One dataset's results file as a TaskResult named by its abbreviation."""
    data = load_document(file, fix=FIX)
    abbr = file.stem
    if not isinstance(data, dict):
        raise InputError("an OpenCompass results file is a JSON object", file=file, fix=FIX)
    if _subjective(data):
        raise InputError(f"'{abbr}' holds subjective (judge) results: pairwise judge verdicts on two models' answers, "
                         "not per-sample correctness of one model, so there is nothing to gate per sample",
                         file=file, fix="gate an objective dataset, or score the predictions with a judge task of "
                         "rlgate's own (rlgate judge)")
    if "details" not in data:
        raise InputError(f"'{abbr}' has no per-sample 'details' (OpenCompass ran with --dump-eval-details False, or "
                         "the evaluation failed)", file=file, field="details",
                         fix="re-run `opencompass CONFIG -r <timestamp> -m eval` without --dump-eval-details False")
    samples: list[SampleRecord] = []
    shares: list[float] = []
    for key, entry in _entries(data["details"], file):
        verdicts = _verdicts(entry, key, file)
        shares.append(sum(verdicts) / len(verdicts))
        match = _INDEX.search(str(entry.get("example_abbr", "")))
        doc_id = int(match.group(1)) if match else int(key)
        answer = _texts(entry.get("answer", entry.get("references", entry.get("gold"))))
        digest = hashlib.sha256(json.dumps([abbr, doc_id, answer], ensure_ascii=False).encode("utf-8")).hexdigest()
        samples.append(SampleRecord(
            doc_id=doc_id, doc_hash=digest[:16], target=answer[0] if answer else None,
            responses=_texts(entry.get("pred", entry.get("predictions"))),
            scores={NO_FILTER: {METRIC: shares[-1]}},
            extra={"opencompass_replicas": len(verdicts)} if len(verdicts) > 1 else {}))
    if not samples:
        raise InputError(f"'{abbr}' has no examples in 'details'", file=file, field="details", fix=FIX)
    ids = [s.doc_id for s in samples]
    if len(set(ids)) != len(ids):
        raise InputError(f"'{abbr}': an example index appears twice in 'details'", file=file, field="details", fix=FIX)
    mean = sum(shares) / len(shares)
    own = _own_accuracy(data)
    if own is not None and not math.isclose(100 * mean, own[1], abs_tol=1e-6):
        raise InputError(f"'{abbr}': its details average {100 * mean:.4f} % but the file's '{own[0]}' is {own[1]}",
                         file=file, field=own[0], fix="give the results file as OpenCompass wrote it, unedited")
    version = summary_version(run, abbr) if run is not None else None
    return TaskResult(task=abbr, metrics={NO_FILTER: {METRIC: mean}}, higher_is_better={METRIC: True},
                      n_samples=len(samples), samples=samples,
                      protocol=TaskProtocol(version=version or abbr, dataset=abbr,
                                            scoring={"source": "opencompass_results_details"}))


def read_run(path: Path, version: str | None = None, *, samples: bool = True) -> RunResult:
    """Every dataset of one model's OpenCompass results as a RunResult (one task per dataset abbreviation)."""
    files, run = results_files(path)
    if not files:
        raise InputError("no OpenCompass results file (results/<model>/<dataset>.json) here", file=path, fix=FIX)
    tasks: dict[str, TaskResult] = {}
    for file in files:
        task = read_dataset(file, run)
        if not samples:
            task.samples = []
        tasks[task.task] = task
    model = files[0].parent.name
    provenance = RunProvenance(source=str(path), harness="opencompass", harness_version=version, model=model,
                               library_versions={"opencompass": version} if version else {})
    return RunResult(provenance=provenance, tasks=tasks)
