"""VLM metrics rlgate adds to lm-eval's image tasks when it reads a run, and per-ability breakdowns.

- `relaxed_numeric_accuracy` (chartqa): ChartQA's relaxed accuracy (numbers within 5 %, text exact)
  as lm-eval's own `relaxed_accuracy` metric function scored it; the same value under the name the
  VLM gates use.
- `answer_parse_failure_rate`: chartqa: lm-eval's own final-answer parser
  (`ExplicitPromptRelaxedCorrectness._get_final_answer`) finds no answer; mmmu_val: none of MMMU's
  three parsing rules matches (lm-eval then picks a random letter, which would hide the failure);
  mathvista_testmini: its rule filter says `[invalid]` (rlgate's generic derived metric).
- Abilities (the radar's per-ability axes) as pseudo-groups `<task>::<ability>`: ChartQA
  human-written vs augmented questions, MathVista skills (an item counts for each of its skills),
  MMMU disciplines (lm-eval's six subgroups).

lm-eval's chartqa utils are loaded from the installed file by path, so reading a folder does not
import lm-eval (or torch).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from rlgate.results.derived import PARSE_FAILURE
from rlgate.results.models import RunResult, SampleRecord, TaskResult
from rlgate.results.shared_scores import writable_scores

ABILITY = "::"
RELAXED = "relaxed_numeric_accuracy"
CHARTQA_ORIGIN = {0: "human", 1: "augmented"}
MMMU_DISCIPLINES = {"mmmu_val_art_and_design": "art_and_design", "mmmu_val_business": "business",
                    "mmmu_val_health_and_medicine": "health_and_medicine",
                    "mmmu_val_humanities_and_social_science": "humanities_and_social_science",
                    "mmmu_val_science": "science", "mmmu_val_tech_and_engineering": "tech_and_engineering"}


@functools.lru_cache(maxsize=1)
def chartqa_utils() -> ModuleType | None:
    """lm-eval's tasks/chartqa/utils.py, loaded by path (it imports only re and string)."""
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    file = Path(next(iter(spec.submodule_search_locations))) / "tasks" / "chartqa" / "utils.py"
    if not file.is_file():
        return None
    loader_spec = importlib.util.spec_from_file_location("rlgate_lmeval_chartqa_utils", file)
    if loader_spec is None or loader_spec.loader is None:
        return None
    module = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(module)
    return module


def chartqa_final_answer(response: str) -> str:
    """The answer lm-eval's chartqa scorer reads from a response ('' when it finds none)."""
    utils = chartqa_utils()
    if utils is None:
        return ""
    return str(utils.ExplicitPromptRelaxedCorrectness()._get_final_answer(response))


def mmmu_parsed(response: str, doc: dict[str, Any]) -> bool:
    """Whether one of MMMU's parsing rules finds an option (lm-eval's parse_multi_choice_response)."""
    if doc.get("question_type") != "multiple-choice":
        return bool(response.strip())
    try:
        import ast

        options = [str(o) for o in ast.literal_eval(str(doc.get("options")))]
    except (ValueError, SyntaxError):
        return False
    letters = "ABCDEFGHI"[: len(options)]
    text = response
    for char in ",.!?;:'":
        text = text.strip(char)
    text = f" {text} "
    if any(f"({c})" in text for c in letters) or any(f" {c} " in text for c in letters):
        return True
    return len(text.split()) > 5 and any(o.lower() in text.lower() for o in options)


def _sample_value(sample: SampleRecord, metric: str, filt: str = "none") -> float | None:
    value = sample.scores.get(filt, {}).get(metric)
    if isinstance(value, list):
        return sum(value) / len(value) if value else None
    return float(value) if isinstance(value, (int, float)) else None


def _set_mean(task: TaskResult, filt: str, metric: str, values: list[float]) -> None:
    if values:
        task.metrics.setdefault(filt, {})[metric] = sum(values) / len(values)


def add_vlm_metrics(task: TaskResult) -> None:
    """relaxed_numeric_accuracy and answer_parse_failure_rate on chartqa / mmmu_val leaves (in place)."""
    if not task.samples:
        return
    name = task.task
    if name.startswith("chartqa"):
        relaxed, fails = [], []
        for sample in task.samples:
            response = sample.responses[0] if sample.responses else ""
            fail = 0.0 if chartqa_final_answer(response) else 1.0
            writable_scores(sample).setdefault("none", {})[PARSE_FAILURE] = fail
            fails.append(fail)
            value = _sample_value(sample, "relaxed_accuracy")
            if value is None and "relaxed_accuracy" in sample.scores.get("none", {}):
                value = 0.0  # lm-eval's relaxed_accuracy returns None for a partial match; it is not a match
            if value is not None:
                writable_scores(sample)["none"][RELAXED] = value
                relaxed.append(value)
        _set_mean(task, "none", PARSE_FAILURE, fails)
        _set_mean(task, "none", RELAXED, relaxed)
    elif name.startswith("mmmu_val_"):
        fails = []
        for sample in task.samples:
            response = sample.responses[0] if sample.responses else ""
            fail = 0.0 if mmmu_parsed(response, sample.doc or {}) else 1.0
            writable_scores(sample).setdefault("none", {})[PARSE_FAILURE] = fail
            fails.append(fail)
        _set_mean(task, "none", PARSE_FAILURE, fails)


def _abilities_of(task: str, sample: SampleRecord) -> list[str]:
    doc = sample.doc or {}
    if task.startswith("chartqa"):
        origin = doc.get("human_or_machine")
        return [CHARTQA_ORIGIN[origin]] if origin in CHARTQA_ORIGIN else []
    if task.startswith("mathvista"):
        meta = doc.get("metadata") or {}
        skills = meta.get("skills") if isinstance(meta, dict) else None
        return [str(s).replace(" ", "_") for s in skills] if isinstance(skills, list) else []
    return []


def ability_metric(task: TaskResult) -> tuple[str, str] | None:
    """(filter, metric) the ability breakdown of a task reports."""
    if task.task.startswith("chartqa"):
        return "none", RELAXED
    if task.task.startswith("mathvista"):
        return "rule", "acc"
    return None


def add_abilities(run: RunResult) -> None:
    """Per-ability values as pseudo-groups `<task>::<ability>` in run.group_metrics (in place)."""
    for name, task in run.tasks.items():
        pick = ability_metric(task)
        if pick is None or not task.samples:
            continue
        filt, metric = pick
        values: dict[str, list[float]] = {}
        for sample in task.samples:
            value = _sample_value(sample, metric, filt)
            if value is None:
                continue
            for ability in _abilities_of(name, sample):
                values.setdefault(ability, []).append(value)
        for ability, found in sorted(values.items()):
            run.group_metrics[f"{name}{ABILITY}{ability}"] = {filt: {metric: sum(found) / len(found)}}
    for group, discipline in MMMU_DISCIPLINES.items():
        value = run.group_metrics.get(group, {}).get("none", {}).get("acc")
        if value is not None:
            run.group_metrics[f"mmmu_val{ABILITY}{discipline}"] = {"none": {"acc": value}}
