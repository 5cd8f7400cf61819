"""What a rule reports: the rule, the fault domain, the severity, where and the numbers behind it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["critical", "warning", "info"]
FaultDomain = Literal["configuration", "reward", "data", "environment", "algorithm", "infrastructure"]
Action = Literal["pause", "pause_manual_review", "rollback", "research_only"]

SEVERITY_ORDER: tuple[Severity, ...] = ("critical", "warning", "info")
FAULT_DOMAINS: tuple[FaultDomain, ...] = ("configuration", "reward", "data", "environment", "algorithm",
                                          "infrastructure")


class Finding(BaseModel):
    """One failure signal found in a training log or across gated checkpoints."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    domain: FaultDomain
    severity: Severity
    message: str = Field(description="one line: what happened, with the numbers")
    step_start: int | None = Field(None, description="first step of the window that triggered the rule")
    step_end: int | None = Field(None, description="last step of that window")
    values: dict[str, float | str | None] = Field(default_factory=dict, description="the values that triggered it")
    threshold: dict[str, float | str | None] = Field(default_factory=dict)
    metrics: list[str] = Field(default_factory=list, description="canonical metrics involved (plots mark them)")
    source: str | None = Field(None, description="log file or training run the finding is about")
    action: Action | None = Field(None, description="checkpoint-history rules: what to do with the run")
    rollback_to: str | None = Field(None, description="checkpoint to roll back to, for action 'rollback'")

    @property
    def rank(self) -> int:
        return SEVERITY_ORDER.index(self.severity)


def worst_severity(findings: list[Finding]) -> Severity | None:
    """The most severe level among findings, or None when there are none."""
    if not findings:
        return None
    return min(findings, key=lambda f: f.rank).severity
