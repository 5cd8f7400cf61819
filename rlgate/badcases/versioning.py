"""Anchor sets across benchmark versions: a model's own change versus a change in the suite's difficulty.

Harnesses record each task's benchmark version in the run manifest and `rlgate.engine.versions`
refuses silent comparisons; when versions do differ (and the contract allows it), fixed anchor
documents scored in every version tell whether the new version is harder or easier.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlgate._core.errors import InputError
from rlgate._core.jsonio import load_document
from rlgate.badcases.classify import classify_run
from rlgate.badcases.models import AnchorShift
from rlgate.badcases.taxonomy import ClassifyOptions

if TYPE_CHECKING:
    from rlgate.results.models import RunResult

class AnchorSet(BaseModel):
    """Fixed documents scored in every suite version: task -> document hashes (lm-eval's doc_hash)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    description: str = ""
    tasks: dict[str, list[str]] = Field(min_length=1)


def load_anchor_set(path: str | Path) -> AnchorSet:
    """Read an anchor set from JSON; a missing or malformed file is an InputError."""
    file = Path(path)
    if not file.exists():
        raise InputError("anchor set file does not exist", file=str(file))
    if file.is_dir():
        raise InputError("cannot read the anchor set: it is a folder", file=str(file),
                         fix="pass the anchor set JSON file (--anchors), not a folder")
    data = load_document(file, "pass the anchor set JSON file (--anchors)")
    try:
        return AnchorSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(first["msg"], file=str(file), field=".".join(str(p) for p in first["loc"]),
                         fix='write {"schema_version": 1, "tasks": {"<task>": ["<doc_hash>", ...]}}') from None


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


def anchor_shifts(old: RunResult, new: RunResult, anchors: AnchorSet, alpha: float = 0.05,
                  options: ClassifyOptions | None = None) -> list[AnchorShift]:
    """Per task: accuracy change on anchors versus on the rest; a significant gap flags a difficulty change.

    The anchors measure the model's own change (same documents in both versions); the rest mixes
    that with the new version's difficulty. Two-sided z-test on the difference of differences.
    """
    from scipy.stats import norm

    old_out = classify_run(old, options)
    new_out = classify_run(new, options)
    shifts: list[AnchorShift] = []
    for task, hashes in sorted(anchors.tasks.items()):
        wanted = set(hashes)
        groups: dict[str, list[bool]] = {"ao": [], "an": [], "ro": [], "rn": []}
        seen_old: set[str] = set()
        seen_new: set[str] = set()
        for outcomes, (anchor_key, rest_key), seen in ((old_out, ("ao", "ro"), seen_old),
                                                       (new_out, ("an", "rn"), seen_new)):
            for (leaf, _), outcome in outcomes.items():
                if leaf != task and not leaf.startswith(task + "_"):
                    continue
                is_anchor = outcome.doc_hash in wanted
                if is_anchor:
                    seen.add(outcome.doc_hash)
                groups[anchor_key if is_anchor else rest_key].append(outcome.correct)
        if not groups["ao"] or not groups["an"] or not groups["ro"] or not groups["rn"]:
            continue
        anchor_delta = _rate(groups["an"]) - _rate(groups["ao"])
        rest_delta = _rate(groups["rn"]) - _rate(groups["ro"])
        shift = rest_delta - anchor_delta
        var = sum(_rate(v) * (1 - _rate(v)) / len(v) for v in groups.values())
        p = float(2 * norm.sf(abs(shift) / math.sqrt(var))) if var > 0 else (1.0 if shift == 0 else 0.0)
        flagged = p < alpha
        missing = len(wanted - (seen_old & seen_new))
        text = (f"{task}: anchors moved {100 * anchor_delta:+.1f} pts, other documents {100 * rest_delta:+.1f} pts; "
                + (f"the new suite version looks {'harder' if shift < 0 else 'easier'} by {100 * abs(shift):.1f} "
                   f"pts (p={p:.3g}): compare runs only within one version" if flagged
                   else f"no significant difficulty change (p={p:.3g})"))
        if missing:
            text += f"; {missing} anchor documents were not scored in both runs"
        shifts.append(AnchorShift(task=task, n_anchor_old=len(groups["ao"]), n_anchor_new=len(groups["an"]),
                                  n_rest_old=len(groups["ro"]), n_rest_new=len(groups["rn"]),
                                  anchor_delta=anchor_delta, rest_delta=rest_delta, difficulty_shift=shift,
                                  p_value=p, flagged=flagged, missing_anchors=missing, text=text))
    return shifts
