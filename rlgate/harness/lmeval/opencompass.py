"""OpenCompass predictions converted into the rows `rlgate eval --responses` re-scores with lm-eval's task.

OpenCompass (`opencompass/openicl/icl_inferencer/icl_base_inferencer.py`, `GenInferencerOutputHandler
.save_results` / `dump_results_dict`) writes one JSON document per model and dataset,
`<work_dir>/<timestamp>/predictions/<model>/<dataset_abbr>.json`: `{"<idx>": {"origin_prompt",
"prediction", "gold"?}}`, `idx` the position in the dataset's test split (a split too large for one
task is split by OpenCompass's partitioners into `<abbr>_0.json`, `<abbr>_1.json`, ... each holding
`test_range[i:i+step]` numbered from 0, so a part's entries follow the earlier parts'; a dataset sampled
`n` times is its test set repeated n times, so entry i answers example i % size, the size read from the
run's results file, whose `details` hold one entry per example with a verdict per replica). Each entry
becomes `{"task", "doc_id": idx, "response": prediction, "target": gold}`; lm-eval's own task
(filters and metric functions) scores it, and `target` is checked against the task's
`doc_to_target`, so an entry on another document (another data order or subset) is reported,
never scored. Its `origin_prompt` goes along as `prompt`: OpenCompass prompts with its own dataset
config, and `rlgate eval --responses` warns where that is not the prompt lm-eval's task renders (the
responses then answer another input than an lm-eval run of the same task).

Only datasets that map to an lm-eval task are converted (gsm8k, mmlu_pro, ifeval: `DATASETS`); the
others are gated on OpenCompass's own per-sample verdicts (`rlgate.harness.opencompass`). A
subjective (judge) evaluation, whose `gold` is a dict of metadata and whose results are pairwise
verdicts, has no per-sample correctness to gate: it is refused with the reason.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import load_document

#: OpenCompass dataset abbreviation prefix -> lm-eval task (abbr `gsm8k`, config `gsm8k_gen_1d7fe4`)
DATASETS = {"gsm8k": "gsm8k", "mmlu_pro": "mmlu_pro", "IFEval": "ifeval", "ifeval": "ifeval"}
FIX = ("give the predictions/<model>/<dataset>.json OpenCompass wrote ({\"<idx>\": {\"origin_prompt\", "
       "\"prediction\", \"gold\"}}), unedited")
_SHARD = re.compile(r"^(?P<abbr>.+?)(?:_(?P<shard>\d+))?$")


def prediction_files(path: Path) -> list[Path]:
    """The predictions files at `path`: a file, a predictions/<model> folder, or a work_dir run folder."""
    if path.is_file():
        return [path]
    for folder in (path, path / "predictions"):
        found = sorted(folder.glob("*.json")) or sorted(folder.glob("*/*.json"))
        if found and (folder.name == "predictions" or folder.parent.name == "predictions"):
            return found
    found = sorted(path.glob("*/predictions/*/*.json"))
    if not found:
        raise InputError("no OpenCompass predictions file (predictions/<model>/<dataset>.json) here", file=path,
                         fix="point at the run folder OpenCompass wrote under --work-dir, or at one predictions file")
    return found


def dataset_of(path: Path) -> tuple[str, str | None]:
    """(dataset abbreviation, lm-eval task or None) of a predictions file."""
    match = _SHARD.match(path.stem)
    abbr = match["abbr"] if match else path.stem
    task = next((t for prefix, t in DATASETS.items() if abbr == prefix or abbr.startswith(prefix + "_")), None)
    if task == "mmlu_pro" and abbr.startswith("mmlu_pro_"):
        task = abbr  # OpenCompass splits MMLU-Pro by category, as lm-eval's mmlu_pro_<category> tasks do
    return abbr, task


def benchmark_version(path: Path) -> str:
    """`<abbr>@<version>` of a predictions file (`summary_version`), else the abbr."""
    base = _SHARD.match(path.stem)
    name = base["abbr"] if base else path.stem
    run = path.parent.parent.parent  # <work_dir>/<timestamp>/predictions/<model>/<abbr>.json
    return summary_version(run, name) or name


def summary_version(run: Path, name: str) -> str | None:
    """`<abbr>@<version>`: the dataset config hash OpenCompass's summarizer writes in the `version` column of
    `<run>/summary/summary_<ts>.csv` (e.g. gsm8k@1d7fe4 for configs/datasets/gsm8k/gsm8k_gen_1d7fe4.py)."""
    for summary in sorted((run / "summary").glob("summary_*.csv"), reverse=True):
        try:
            with summary.open(encoding="utf-8", newline="") as handle:
                for row in csv.DictReader(handle):
                    if row.get("dataset") == name and row.get("version") not in (None, "", "-"):
                        return f"{name}@{row['version']}"
        except (OSError, UnicodeDecodeError, csv.Error):
            continue
    return None


def _examples(path: Path, abbr: str) -> int | None:
    """How many examples the dataset has when OpenCompass sampled it several times (`n` > 1), from the run's
    results file (one `details` entry per example, a verdict per replica); None when not repeated or not known."""
    results = path.parent.parent.parent / "results" / path.parent.name / f"{abbr}.json"
    if not results.is_file():
        return None
    try:
        details = load_document(results, fix=FIX).get("details")
    except (InputError, AttributeError):
        return None  # the results file's own reader reports it; the predictions stand on their own
    if not isinstance(details, list) or not details or not isinstance(details[0], dict):
        return None
    verdicts = details[0].get("correct")
    return len(details) if isinstance(verdicts, list) and len(verdicts) > 1 else None


def opencompass_rows(path: Path, task: str | None) -> Iterator[tuple[int, dict[str, Any], list[str]]]:
    """(entry index, identity {"task", "doc_id", "target"?}, [prediction]) per OpenCompass prediction."""
    abbr, mapped = dataset_of(path)
    data = load_document(path, fix=FIX)
    if not isinstance(data, dict):
        raise InputError("an OpenCompass predictions file is a JSON object keyed by entry index", file=path, fix=FIX)
    first = next(iter(data.values()), None)
    if isinstance(first, dict) and isinstance(first.get("gold"), dict):
        raise InputError(f"'{abbr}' is a subjective (judge) evaluation: its 'gold' is metadata "
                         f"({', '.join(list(first['gold'])[:3])}), not a reference answer, and OpenCompass scores it "
                         "by pairwise judge verdicts, so there is no per-sample correctness to gate", file=path,
                         field="gold", fix="gate an objective dataset (gsm8k, mmlu_pro, ifeval), or score these "
                         "responses with a judge task of rlgate's own (rlgate judge)")
    name = task or mapped
    if name is None:
        known = ", ".join(sorted(set(DATASETS)))
        raise InputError(f"OpenCompass dataset '{abbr}' has no matching lm-eval task rlgate can re-score it with "
                         f"(mapped: {known})", file=path, fix="gate it on OpenCompass's own per-sample verdicts "
                         f"instead (a contract task {{task: {abbr}, harness: opencompass}} and `rlgate gate` on the "
                         "run folder), or pass --task NAME naming the lm-eval task that holds the same documents "
                         "in the same order")
    offset = 0
    match = _SHARD.match(path.stem)
    if match and match["shard"] is not None:  # SizePartitioner: abbr_<part> holds test_range[i:i+step], idx from 0
        part = int(match["shard"])
        earlier = [p for p in path.parent.glob(f"{match['abbr']}_*.json")
                   if (m := _SHARD.match(p.stem)) and m["shard"] is not None and int(m["shard"]) < part]
        offset = sum(len(load_document(p, fix=FIX)) for p in earlier)
    size = _examples(path, match["abbr"] if match else abbr)
    for key, entry in data.items():
        if not key.isdigit():
            raise InputError(f"entry key '{key[:40]}' is not an index", file=path, field=key[:40], fix=FIX)
        if not isinstance(entry, dict) or not isinstance(entry.get("prediction"), str):
            raise InputError(f"entry {key} has no text 'prediction'", file=path, field=f"{key}.prediction", fix=FIX)
        position = offset + int(key)
        # a dataset sampled n times (its config's `n`) is the test set repeated n times: entry i is example i % size
        identity: dict[str, Any] = {"task": name, "doc_id": position % size if size else position}
        gold = entry.get("gold")
        if isinstance(gold, str | int | float) and not isinstance(gold, bool):
            identity["target"] = str(gold)
        if isinstance(entry.get("origin_prompt"), str):  # compared with lm-eval's own prompt at `rlgate eval`
            identity["prompt"] = entry["origin_prompt"]
        yield int(key) + 1, identity, [entry["prediction"]]
