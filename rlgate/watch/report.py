"""The watcher's own report of one step, beside the check's reports in `RUN_DIR/rlgate/step_N/`.

`watch.json` (versioned pydantic model) and `watch.md` say what the step decided for the run (the
control action and every reason), which splits were consulted, and which cross-checkpoint rules ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlgate._core.files import write_text_atomic
from rlgate.monitor.findings import Finding
from rlgate.monitor.rules import RuleStatus
from rlgate.watch.control import ControlAction, ControlSignal

WATCH_REPORT_VERSION = 1


class WatchStepReport(BaseModel):
    """One gated step: its decision, what it asks of the run, and the signal the run now has."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    training_run: str
    contract: str
    step: int
    checkpoint: str
    decision: str
    summary: str
    splits: list[str] = Field(default_factory=list, description="the splits gated at this step")
    private_note: str = ""
    action: ControlAction = Field(description="what this step's rules ask for")
    reasons: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list, description="cross-checkpoint findings, this step "
                                    "included")
    history_rules: list[RuleStatus] = Field(default_factory=list)
    control: ControlSignal = Field(description="the run's signal after this step (a stopping one is kept)")


def write_step_report(out: Path, report: WatchStepReport) -> Path:
    """watch.json and a short watch.md in the step's folder."""
    lines = [f"# rlgate watch: step {report.step} of training run `{report.training_run}`", "",
             f"- checkpoint: `{report.checkpoint}`",
             f"- gated splits: {', '.join(report.splits) or 'none'}" + (f" ({report.private_note})"
                                                                        if report.private_note else ""),
             f"- decision: **{report.decision}**: {report.summary}",
             f"- this step asks: **{report.action}**",
             f"- the run's control signal: **{report.control.action}**"
             + (f" (set at step {report.control.step})" if report.control.step != report.step else ""), ""]
    if report.reasons:
        lines += ["## Why", "", *(f"- {reason}" for reason in report.reasons), ""]
    ran = [s for s in report.history_rules if s.evaluated]
    lines += ["## Cross-checkpoint rules", "",
              *(f"- {s.rule}: " + (f"ran, {s.findings} finding(s)" if s.evaluated else f"not run: {s.reason or ''}")
                for s in report.history_rules), ""]
    if not ran:
        lines += ["(no cross-checkpoint rule could run yet)", ""]
    write_text_atomic(out / "watch.md", "\n".join(lines))
    return write_text_atomic(out / "watch.json", report.model_dump_json(indent=2) + "\n")
