"""Find protocol differences between two runs: scores made under different protocols are not comparable.

Compared per leaf task: task version (one a run did not record is unknown, never a match), few-shot
count, generation kwargs, agent protocol (epochs, limits, task arguments, tool list), filter set,
dataset, the scoring definition (lm-eval's metric_list, filter_list, doc_to_target, process_results;
inspect's scorers and their arguments: the first differing field is quoted), and the prompts of paired
documents (or lm-eval's task hash when samples are absent); per run: the scoring harness's major.minor
version, chat template, system instruction, few-shot-as-multiturn and the image protocol of VLM runs
(resolution, max pixels, aspect ratio, images per prompt). Each difference is one readable line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rlgate.engine.pairing import PairedTask
from rlgate.results.models import RunResult, TaskResult

_UNSET = object()
#: characters of a value quoted in a difference
_QUOTED = 80


def _show(value: Any) -> str:
    if value is None or value is _UNSET:
        return "unset"
    text = repr(value)
    return text if len(text) <= _QUOTED else text[:_QUOTED - 1] + "…"


def first_difference(base: Any, cand: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """(path, baseline value, candidate value) of the first place two JSON values differ (mappings in the
    baseline's key order, then the candidate's extra keys; lists of one length item by item); None if equal."""
    if base == cand:
        return None
    if isinstance(base, dict) and isinstance(cand, dict):
        for key in [*base, *(k for k in cand if k not in base)]:
            found = first_difference(base.get(key, _UNSET), cand.get(key, _UNSET), f"{path}.{key}" if path else key)
            if found is not None:
                return found
    if isinstance(base, list) and isinstance(cand, list) and len(base) == len(cand):
        for index, (b, c) in enumerate(zip(base, cand, strict=True)):
            found = first_difference(b, c, f"{path}[{index}]")
            if found is not None:
                return found
    return path, base, cand


def _kwargs_diff(task: str, base: dict[str, Any], cand: dict[str, Any], label: str = "generation_kwargs"
                 ) -> list[str]:
    out = []
    for key in sorted(set(base) | set(cand)):
        if base.get(key) != cand.get(key):
            out.append(f"{task}: {label}.{key} {_show(base.get(key))} (baseline) vs "
                       f"{_show(cand.get(key))} (candidate)")
    return out


def task_differences(task: str, base: TaskResult, cand: TaskResult, paired: PairedTask | None) -> list[str]:
    """Protocol differences of one leaf task."""
    b, c = base.protocol, cand.protocol
    out: list[str] = []
    if b.version != c.version:  # one side unrecorded is unknown, not a match
        out.append(f"{task}: task version {_show(b.version)} (baseline) vs {_show(c.version)} (candidate)"
                   + (" (not recorded by one run)" if b.version is None or c.version is None else ""))
    for label, bv, cv in (("num_fewshot", b.num_fewshot, c.num_fewshot), ("dataset", b.dataset, c.dataset)):
        if bv != cv and bv is not None and cv is not None:
            out.append(f"{task}: {label} {_show(bv)} (baseline) vs {_show(cv)} (candidate)")
    if sorted(b.filters) != sorted(c.filters):
        out.append(f"{task}: filters {b.filters} (baseline) vs {c.filters} (candidate)")
    out.extend(_kwargs_diff(task, b.generation_kwargs, c.generation_kwargs))
    out.extend(_kwargs_diff(task, b.agent, c.agent, "agent"))  # epochs, limits, task args, tools
    scoring = first_difference(b.scoring, c.scoring) if b.scoring and c.scoring else None
    if scoring is not None:
        where, bv, cv = scoring
        out.append(f"{task}: scoring definition {where} {_show(bv)} (baseline) vs {_show(cv)} (candidate): "
                   "the runs score responses differently")
    if paired is not None and paired.report.paired:
        prompts_b = [base.samples[i].prompt for i in paired.baseline_index.tolist()]
        prompts_c = [cand.samples[j].prompt for j in paired.candidate_index.tolist()]
        differ = [] if prompts_b == prompts_c else [
            k for k, (pb, pc) in enumerate(zip(prompts_b, prompts_c, strict=True))
            if pb is not None and pc is not None and pb != pc]
        if differ:
            example = base.samples[int(paired.baseline_index[differ[0]])].doc_id
            out.append(f"{task}: prompts differ on {len(differ)} of {paired.report.paired} paired documents "
                       f"(first: doc {example}); chat template, few-shot examples or prompt format changed")
    elif b.task_hash and c.task_hash and b.task_hash != c.task_hash and not (base.samples or cand.samples):
        out.append(f"{task}: lm-eval task hash {b.task_hash[:12]} (baseline) vs {c.task_hash[:12]} (candidate): "
                   "documents or prompts differ")
    return out


def run_differences(base: RunResult, cand: RunResult) -> list[str]:
    """Run-level protocol differences (prompt formatting shared by all tasks)."""
    bp, cp = base.provenance, cand.provenance
    out = []
    if bp.harness == cp.harness and _release(bp.harness_version) != _release(cp.harness_version) \
            and bp.harness_version and cp.harness_version:
        out.append(f"run: {bp.harness or 'harness'} version {bp.harness_version} (baseline) vs {cp.harness_version} "
                   "(candidate): the scoring harness changed its major or minor version")
    for label, bv, cv in (("chat template applied", bp.chat_template, cp.chat_template),
                          ("system instruction", bp.system_instruction, cp.system_instruction),
                          ("fewshot_as_multiturn", bp.fewshot_as_multiturn, cp.fewshot_as_multiturn)):
        if bv != cv and not (bv in (None, False, "") and cv in (None, False, "")):
            out.append(f"run: {label} {_show(bv)} (baseline) vs {_show(cv)} (candidate)")
    out.extend(_kwargs_diff("run", _image_protocol(base), _image_protocol(cand), "image protocol"))
    return out


def _release(version: str | None) -> tuple[str, ...]:
    """A version's major.minor (`0.4.13` -> ('0', '4')); patch releases score alike."""
    if not version:
        return ()
    return tuple(re.split(r"[.+-]", version.strip().removeprefix("v"))[:2])


def _image_protocol(run: RunResult) -> dict[str, Any]:
    """The image protocol rlgate's run manifest records for VLM runs (empty for text runs)."""
    manifest = run.provenance.manifest
    return manifest.image_protocol() if manifest is not None else {}


def protocol_differences(base: RunResult, cand: RunResult, leaves: Iterable[str],
                         paired: dict[str, PairedTask]) -> list[str]:
    """Every protocol difference between the runs for the given leaf tasks, run-level first."""
    out = run_differences(base, cand)
    for leaf in leaves:
        if leaf in base.tasks and leaf in cand.tasks:
            out.extend(task_differences(leaf, base.tasks[leaf], cand.tasks[leaf], paired.get(leaf)))
    return out
