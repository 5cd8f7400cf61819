"""The two model flags bfcl-eval's checker needs, for a model its registry does not list.

bfcl-eval decodes and checks a result with the model's `is_fc_model` and `underscore_to_dot` from
its own registry (`MODEL_CONFIG_MAPPING`). A model it does not list (a team's own checkpoint, or a
model served by vLLM under another name) would silently get the defaults: an FC model whose API
writes `math.factorial` as `math_factorial` then fails every dotted function name (simple_python
53 % where BFCL's own score says 87.75 %). So such a model is refused before scoring unless the
contract's BFCL task names its flags (`task_args: {fc: true, underscore_to_dot: true}`); the refusal
offers the flags the result file itself suggests: FC results are lists of calls, prompt results text;
a call named like a dotted ground-truth name with `_` for `.` means underscore_to_dot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.harness.bfcl import checker
from rlgate.harness.bfcl.checker import ModelFlags

#: task_args keys naming the flags (contract side) -> ModelFlags field
FLAG_ARGS = {"fc": "is_fc_model", "underscore_to_dot": "underscore_to_dot"}


def from_task_args(args: dict[str, Any], where: str) -> ModelFlags | None:
    """The flags a BFCL task's task_args give (both or neither), else None."""
    given = {k: args[k] for k in FLAG_ARGS if k in args}
    if not given:
        return None
    bad = [k for k, v in given.items() if not isinstance(v, bool)]
    if bad or len(given) != len(FLAG_ARGS):
        missing = [k for k in FLAG_ARGS if k not in given]
        raise InputError(f"'{bad[0]}' must be true or false" if bad else
                         f"names '{next(iter(given))}' but not '{missing[0]}'", field=f"{where}.task_args",
                         fix="give both BFCL model flags: task_args: {fc: true|false, underscore_to_dot: true|false}")
    return ModelFlags(is_fc_model=bool(given["fc"]), underscore_to_dot=bool(given["underscore_to_dot"]))


def infer(rows: dict[str, dict[str, list[tuple[int, dict[str, Any]]]]]) -> tuple[ModelFlags, list[str]]:
    """The flags the results suggest, and why (each reason quotes what was seen)."""
    results = [row["result"] for by_id in rows.values() for found in by_id.values() for _, row in found]
    fc = sum(isinstance(r, list) for r in results) >= sum(isinstance(r, str) for r in results)
    why = [f"fc: {str(fc).lower()} ({sum(isinstance(r, list) for r in results)} of {len(results)} results are "
           "lists of calls, the FC form)"]
    dotted_as_underscore = dotted_kept = 0
    example = ""
    for category, by_id in rows.items():
        _, answers = checker.ground_truth(category)
        for sample_id, found in by_id.items():
            names = {name for answer in answers.get(sample_id, []) for name in answer if "." in name}
            calls = found[0][1]["result"]
            called = {next(iter(c)) for c in calls if isinstance(c, dict) and c} if isinstance(calls, list) else set()
            for name in names:
                if name.replace(".", "_") in called:
                    dotted_as_underscore += 1
                    example = example or f"{sample_id} calls {name.replace('.', '_')} for {name}"
                elif name in called:
                    dotted_kept += 1
    underscore = dotted_as_underscore > dotted_kept
    if dotted_as_underscore or dotted_kept:
        why.append(f"underscore_to_dot: {str(underscore).lower()} ({dotted_as_underscore} dotted ground-truth names "
                   f"called with '_', {dotted_kept} with '.'" + (f"; e.g. {example})" if example else ")"))
    else:
        why.append("underscore_to_dot: false (no call to a dotted ground-truth name in the file to tell)")
    return ModelFlags(is_fc_model=fc, underscore_to_dot=underscore), why


def require(model: str, given: ModelFlags | None, rows: dict[str, dict[str, list[tuple[int, dict[str, Any]]]]],
            file: Path) -> ModelFlags:
    """The flags to score `model` with; an unlisted model without given flags is refused, with a suggestion."""
    if given is not None:
        return given
    known = checker.listed(model)
    if known is not None:
        return known
    suggested, why = infer(rows)
    score_dir = next((p / "score" for p in file.parents if (p / "score").is_dir()), None)
    folder = next((p for p in file.parents if p.parent.name == "result"), file.parent)
    also = f"; or gate BFCL's own score files ({score_dir})" if score_dir is not None else (
        "; or gate BFCL's own score files (`bfcl evaluate`'s score/ folder)")
    raise InputError(
        f"model '{model}' is not in bfcl-eval {checker.version()}'s model list, so its checker's flags are unknown "
        f"(the defaults would score it silently wrong); the file suggests " + "; ".join(why), file=file,
        field="model", fix=f"name the flags on the contract's BFCL task: task_args: {{fc: "
        f"{str(suggested.is_fc_model).lower()}, underscore_to_dot: {str(suggested.underscore_to_dot).lower()}}} and "
        f"import with `rlgate eval CONTRACT --responses {folder}`" + also)
