"""The judge policy of every task as text lines, for `rlgate validate`."""

from __future__ import annotations

from rlgate.contract.loader import ResolvedContract
from rlgate.judge.policy import resolve_judge


def judge_policy_lines(rc: ResolvedContract) -> list[str]:
    """One line per task; raises InputError when a task's resolved policy is incomplete."""
    specs = {t.name: resolve_judge(rc.contract.judge, t.entry.judge, task=t.name, file=rc.path) for t in rc.tasks}
    if not any(specs.values()):
        return ["judge     none: every task is scored by its rule metrics"]
    lines = ["judge policy per task:"]
    for task, spec in specs.items():
        lines.append(f"  {task:<14} {spec.summary() if spec else 'none (rule metrics only)'}")
    return lines
