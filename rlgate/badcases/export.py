"""Export failed samples as JSONL a training pipeline can take as the next round's data.

One row per failed candidate document outside release_gate_only splits: the prompt, the reference,
the bad response, its failure classes, the baseline's response when it was right (a preference
pair), and which use fits (sft, preference, reward_data). Agent tasks add the failed trajectory, the
baseline's successful trajectory on the same task as `chosen_trajectory`, and the uses
recovery_curriculum / safety_negative. Private samples are never written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.badcases.classify import classify_run
from rlgate.badcases.families import gsm8k_gold
from rlgate.badcases.taxonomy import ClassifyOptions, SampleOutcome, first_response
from rlgate.results.models import RunResult, SampleRecord, doc_order

EXPORT_SCHEMA = "rlgate.badcase/1"


@dataclass
class ExportSummary:
    path: Path
    written: int
    private_withheld: int
    by_class: dict[str, int]


def _reference(outcome: SampleOutcome, sample: SampleRecord) -> tuple[str | None, str | None]:
    """(reference text to train on, short reference answer) for the sample's family."""
    doc = sample.doc or {}
    if outcome.family == "gsm8k":
        gold = gsm8k_gold(sample)
        answer = doc.get("answer") if isinstance(doc.get("answer"), str) else sample.target
        short = (f"{gold:g}" if gold is not None else None)
        return answer, short
    if outcome.family == "mmlu_pro":
        letter = doc.get("answer") if isinstance(doc.get("answer"), str) else sample.target
        return (f"The answer is ({letter})." if letter else None), letter
    return sample.target, sample.target


def _uses(outcome: SampleOutcome, reference: str | None, chosen: str | None) -> list[str]:
    uses: list[str] = []
    if chosen is not None or (reference and outcome.family == "gsm8k"):
        uses.append("sft")
    if chosen is not None:
        uses.append("preference")
    if outcome.family in ("gsm8k", "mmlu_pro", "ifeval") or reference:
        uses.append("reward_data")
    return uses


def _agent_fields(sample: SampleRecord, chosen: SampleRecord | None, outcome: SampleOutcome
                  ) -> tuple[dict[str, Any], list[str]]:
    """The failed trajectory and, where the baseline succeeded on the same task, its trajectory as the chosen
    one (distillation / preference); uses follow the failure classes."""
    assert sample.trajectory is not None
    chosen_traj = chosen.trajectory if chosen is not None else None
    classes = outcome.classes
    uses = []
    if chosen_traj is not None:
        uses += ["sft", "preference"]
    if "agent_unrecovered_tool_error" in classes:
        uses.append("recovery_curriculum")
    if "agent_unsafe_action" in classes:
        uses.append("safety_negative")
    uses.append("reward_data")
    fields = {"trajectory": sample.trajectory.model_dump(mode="json"),
              "chosen_trajectory": chosen_traj.model_dump(mode="json") if chosen_traj is not None else None,
              "limits_hit": sample.limits_reached(),
              "safety_violations": sample.extra.get("safety_violations") or [],
              "error_categories": sorted({f.category for f in outcome.failures
                                          if f.cls == "agent_unrecovered_tool_error" and f.category})}
    return fields, uses


def badcase_rows(candidate: RunResult, baseline: RunResult | None, private_tasks: frozenset[str],
                 options: ClassifyOptions | None = None, only_new: bool = False) -> Iterator[dict[str, Any]]:
    """Rows for every failed public candidate sample, in task and document order."""
    cand_out = classify_run(candidate, options)
    base_out = classify_run(baseline, options) if baseline is not None else {}
    base_samples = ({(n, s.doc_id): s for n, r in baseline.tasks.items() for s in r.samples}
                    if baseline is not None else {})
    for name in sorted(candidate.tasks):
        if name in private_tasks:
            continue
        for sample in sorted(candidate.tasks[name].samples, key=lambda s: doc_order(s.doc_id)):
            outcome = cand_out[(name, sample.doc_id)]
            if outcome.correct or not outcome.failures:
                continue
            base = base_out.get((name, sample.doc_id))
            same_doc = base is not None and base.doc_hash == outcome.doc_hash
            base_right = bool(same_doc and base is not None and base.correct)
            if only_new and not base_right:
                continue
            base_sample = base_samples.get((name, sample.doc_id))
            chosen = first_response(base_sample) if base_right and base_sample is not None else None
            reference, short = _reference(outcome, sample)
            uses = _uses(outcome, reference, chosen)
            agent: dict[str, Any] = {}
            if sample.trajectory is not None:
                agent, uses = _agent_fields(sample, base_sample if base_right else None, outcome)
            yield {
                "schema": EXPORT_SCHEMA, "task": name, "family": outcome.family, "doc_id": sample.doc_id,
                "doc_hash": sample.doc_hash, "failure_classes": sorted(outcome.classes),
                "failure_kinds": sorted({f.kind for f in outcome.failures}),
                "categories": sorted({f.category for f in outcome.failures if f.category}),
                "prompt": sample.prompt, "reference": reference, "reference_answer": short,
                "bad_response": first_response(sample), "extracted_answer": outcome.answer,
                "chosen_response": chosen, "baseline_correct": base_right if same_doc else None,
                "suggested_use": uses[0] if uses else "review", "suggested_uses": uses,
                "doc": sample.doc, **agent,
            }


def export_badcases(path: str | Path, candidate: RunResult, baseline: RunResult | None,
                    private_tasks: frozenset[str], options: ClassifyOptions | None = None,
                    only_new: bool = False) -> ExportSummary:
    """Write the rows to `path` atomically (a crash leaves no half-written file)."""
    target = Path(path)
    if target.parent and not target.parent.exists():
        raise InputError("the export folder does not exist", file=str(target.parent),
                         fix="create the folder or choose another --export path")
    if target.is_dir():
        raise InputError("is a folder", file=target, field="--export",
                         fix="name the JSONL file to write, e.g. --export badcases.jsonl")
    tmp = target.with_name(target.name + ".tmp")
    written = 0
    by_class: dict[str, int] = {}
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            for row in badcase_rows(candidate, baseline, private_tasks, options, only_new):
                handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                written += 1
                for cls in row["failure_classes"]:
                    by_class[cls] = by_class.get(cls, 0) + 1
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write the export: {exc.strerror or exc}", file=target, field="--export",
                         fix="choose a writable path for --export") from None
    withheld = sum(len(r.samples) for n, r in candidate.tasks.items() if n in private_tasks)
    return ExportSummary(path=target, written=written, private_withheld=withheld, by_class=by_class)
