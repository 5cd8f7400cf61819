"""The judge policy of every task as text lines, for `rlgate validate`."""

from __future__ import annotations

from rlgate._core.errors import InputError
from rlgate.contract.judge_policy import JudgeSpec, resolve_judge
from rlgate.contract.loader import ResolvedContract, find_relative


def _check_files(rc: ResolvedContract, task: str, spec: JudgeSpec) -> None:
    """The files a judge policy names must exist, like every other reference in a contract."""
    named = []
    if spec.calibration is not None:
        named.append(("judge.calibration.anchors", spec.calibration.anchors, "anchor set"))
    if spec.model is not None and spec.model.path:
        named.append(("judge.model.path", spec.model.path, "judge model folder"))
    for field, relative, what in named:
        if find_relative(rc.path, relative) is None:
            raise InputError(f"task {task}: {what} '{relative}' does not exist", file=rc.path, field=field,
                             fix="fix the path; it is relative to the contract file or to the project root")


def judge_policy_lines(rc: ResolvedContract) -> list[str]:
    """One line per task; raises InputError when a task's policy is incomplete or names a missing file."""
    specs = {t.name: resolve_judge(rc.contract.judge, t.entry.judge, task=t.name, file=rc.path) for t in rc.tasks}
    if not any(specs.values()):
        return ["judge     none: every task is scored by its rule metrics"]
    lines = ["judge policy per task:"]
    for task, spec in specs.items():
        if spec is not None:
            _check_files(rc, task, spec)
        lines.append(f"  {task:<14} {spec.summary() if spec else 'none (rule metrics only)'}")
    return lines
