"""The check right after a contract loads: each gate's metric, asked of the harness that owns its task.

`load_contract` here is the one every command uses (and `rlgate.load_contract`): the contract layer
loads and checks the files' structure, then each task's harness answers `vocabulary(task)` and every
gate is checked against it with a located error (file:line, the closest match). The vocabularies go to
the engine with the gates (`GateConfig.vocabularies`), so the pure engine reads the default filter,
value range and the hint for per-sample results as data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate.contract.loader import THRESHOLDS, GateOrigin, ResolvedContract, ResolvedTask
from rlgate.contract.loader import load_contract as load_contract_files
from rlgate.contract.metrics import DERIVED_METRICS, MetricRef, is_bounded
from rlgate.contract.vocabulary import TaskVocabulary
from rlgate.contract.yamlpos import suggest
from rlgate.harness.base import AnswerParse
from rlgate.harness.registry import DEFAULT_HARNESS, get_harness


def task_vocabulary(task: ResolvedTask) -> TaskVocabulary:
    """What the task's harness says its metrics mean."""
    return get_harness(task.harness).vocabulary(task)


def vocabulary_of(name: str, harness: str | None = None) -> TaskVocabulary:
    """The vocabulary of a task known only by name (a leaf of stored results), from its harness (lm_eval unless
    named, as in suites)."""
    return get_harness(harness or DEFAULT_HARNESS).vocabulary_of(name)


def answer_parse(task: str, response: str, doc: dict[str, Any], harness: str | None = None) -> AnswerParse | None:
    """The task's own answer parser on a response, from its harness (lm_eval unless named); None: it has none."""
    return get_harness(harness or DEFAULT_HARNESS).answer_parse(task, response, doc)


def family_of(name: str, harness: str | None = None) -> str:
    """The family a task name belongs to in its harness's catalog (`mmlu_pro_math` -> `mmlu_pro`), else itself."""
    return get_harness(harness or DEFAULT_HARNESS).family(name) or name


def _check_gate(origin: GateOrigin, task: ResolvedTask, vocabulary: TaskVocabulary) -> None:
    ref_text = origin.gate.metric
    ref = MetricRef.parse(ref_text)
    if vocabulary.closed and not ref.derived:
        metrics = vocabulary.metrics
        if ref.metric not in metrics:
            options = [*metrics, *DERIVED_METRICS]
            close = suggest(ref.metric, options)
            fix = f"did you mean '{ref.task}/{close}'?" if close else f"metrics of {ref.task}: {', '.join(options)}"
            raise origin.error("metric", f"task '{ref.task}' has no metric '{ref.metric}'", fix)
        filters = metrics[ref.metric].filters
        if ref.filter is None and len(filters) > 1:
            raise origin.error("metric", f"'{ref_text}' is ambiguous: {ref.task} reports {ref.metric} under "
                               f"filters {', '.join(filters)}", f"write {ref_text}/{filters[-1]}")
        if ref.filter is not None and filters and ref.filter not in filters:
            close = suggest(ref.filter, list(filters))
            fix = f"did you mean '{ref.task}/{ref.metric}/{close}'?" if close else f"filters: {', '.join(filters)}"
            raise origin.error("metric", f"{ref.task}/{ref.metric} has no filter '{ref.filter}'", fix)
    if task.entry.metric_ranges.get(ref.metric) is not None:
        return  # a range the suite declares was checked with the contract
    kind = vocabulary.metric(ref.metric).kind
    if (kind == "fraction") if kind is not None else is_bounded(ref.metric):
        for name in THRESHOLDS:
            value = getattr(origin.gate, name, None)
            if value is not None and abs(value) > 1:
                raise origin.error(name, f"{name}={value} is out of range: {ref.metric} is a fraction in [0, 1]",
                                   f"did you mean {value / 100:g}?")


def check_vocabulary(resolved: ResolvedContract) -> ResolvedContract:
    """Check every gate against its task's harness vocabulary; the vocabularies are handed to the engine.

    Raises InputError at the gate's metric (or threshold) with the closest match; returns `resolved`
    with `gates.vocabularies` filled (task -> vocabulary), in place."""
    for each in resolved.tasks:
        get_harness(each.harness).check_task(each, resolved)
    vocabularies = {task.name: task_vocabulary(task) for task in resolved.tasks}
    for origin in resolved.gate_origins:
        task = resolved.task(MetricRef.parse(origin.gate.metric).task)
        if task is not None:  # the loader refused a gate on a task in no suite
            _check_gate(origin, task, vocabularies[task.name])
    resolved.gates = resolved.gates.model_copy(update={"vocabularies": vocabularies})
    return resolved


def load_contract(path: str | Path) -> ResolvedContract:
    """Load, resolve and check a contract, its gates checked against each task's harness; InputError on the
    first problem (file, line, field and fix)."""
    return check_vocabulary(load_contract_files(path))
