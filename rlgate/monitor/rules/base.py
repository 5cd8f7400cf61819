"""The rule interface: a pure function from a canonical log and the thresholds to findings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from rlgate.monitor.findings import FaultDomain, Finding, Severity
from rlgate.monitor.policy import MonitorPolicy, RuleConfig
from rlgate.monitor.series import Series, TrainingLog
from rlgate.monitor.trend import Windows

Check = Callable[["RuleInput"], list[Finding]]


@dataclass(frozen=True)
class RuleInput:
    """What every rule sees: the log and the whole policy (rules may share each other's thresholds)."""

    log: TrainingLog
    policy: MonitorPolicy

    @property
    def windows(self) -> Windows:
        w = self.policy.window
        return Windows(w.fraction, w.min_points, w.bins)

    def series(self, name: str) -> Series:
        found = self.log.get(name)
        if found is None:  # the registry checks `requires` first; reaching this is a bug in a rule
            raise KeyError(name)
        return found


@dataclass(frozen=True)
class Rule:
    """A named check with the fault domain it diagnoses and the canonical metrics it needs."""

    name: str
    domain: FaultDomain
    summary: str
    check: Check
    requires: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()

    def missing(self, log: TrainingLog) -> list[str]:
        """Metrics this rule needs that the log lacks (`val_score` stands for any held-out score). A series
        without one finite value counts as lacking: rules judge finite points, and non_finite reports it."""
        def usable(series: Series | None) -> bool:
            return series is not None and bool(np.isfinite(series.values).any())

        def has(name: str) -> bool:
            if name == "val_score":
                return any(usable(s) for s in log.val_scores().values())
            return usable(log.get(name))

        gone = [m for m in self.requires if not has(m)]
        if self.any_of and not any(has(m) for m in self.any_of):
            gone.append(" or ".join(self.any_of))
        return gone

    def needs(self, log: TrainingLog) -> list[str]:
        """The missing metrics with example log keys for each (what a user would map or log)."""
        from rlgate.monitor.vocabulary import examples

        out = [examples(m) for m in self.requires if m in self.missing(log)]
        if self.any_of and " or ".join(self.any_of) in self.missing(log):
            out.append(" or ".join(examples(m, 2) for m in self.any_of))
        return out


def make(rule: str, domain: FaultDomain, cfg: RuleConfig, message: str, *, severity: Severity | None = None,
         window: tuple[int, int] | None = None, values: Mapping[str, float | str | None] | None = None,
         threshold: Mapping[str, float | str | None] | None = None, metrics: list[str] | None = None,
         source: str | None = None) -> Finding:
    """A finding with the rule's configured severity unless the rule asks for another (info notes)."""
    return Finding(rule=rule, domain=domain, severity=severity or cfg.severity, message=message,
                   step_start=window[0] if window else None, step_end=window[1] if window else None,
                   values={k: _clean(v) for k, v in (values or {}).items()},
                   threshold={k: _clean(v) for k, v in (threshold or {}).items()},
                   metrics=list(metrics or []), source=source)


def _clean(value: float | str | None) -> float | str | None:
    """Round floats for display and JSON (NaN/Inf become strings so monitor.json stays valid JSON)."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        return float(f"{value:.6g}")
    return value


def fmt(value: float) -> str:
    """Four significant digits; large values (token counts) in full rather than in e-notation."""
    return f"{value:.0f}" if abs(value) >= 1e4 and value == value and abs(value) != float("inf") else f"{value:.4g}"
