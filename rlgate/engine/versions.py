"""Benchmark versions: runs on different suite or private-task versions are never compared silently.

Beside `protocol.py` because it answers the same question (are these two runs comparable?) from the
run manifests' `benchmark_versions` (task -> 'suite@version[/task@version]'), which every harness
records. A version one run recorded and the other did not (a baseline lm-eval wrote itself, without
rlgate's manifest) is unknown, never a match: it is a difference like any other. Pure: two RunResults
in, a VersionCheck (or an InputError) out.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rlgate._core.errors import InputError
from rlgate.results.models import RunResult

MANIFEST_KEY = "benchmark_versions"


class VersionCheck(BaseModel):
    """Suite and private-task versions of both runs; different versions are never compared silently."""

    model_config = ConfigDict(extra="forbid")

    baseline: dict[str, str] = Field(default_factory=dict)
    candidate: dict[str, str] = Field(default_factory=dict)
    differences: list[str] = Field(default_factory=list)
    allowed: bool = False


#: how a version one run did not record reads in a difference
NOT_RECORDED = "not recorded (no run manifest)"


def recorded_versions(run: RunResult) -> dict[str, str]:
    """The versions a run's manifest recorded (empty for runs rlgate did not produce)."""
    manifest = run.provenance.manifest
    return dict(manifest.benchmark_versions) if manifest is not None else {}


def _differences(baseline: RunResult, candidate: RunResult, base: dict[str, str], cand: dict[str, str]) -> list[str]:
    """Tasks whose versions differ, or that one run recorded and the other (which holds the task) did not."""
    out = []
    for task in sorted(set(base) | set(cand)):
        if task in base and task in cand:
            if base[task] != cand[task]:
                out.append(f"{task}: baseline {base[task]}, candidate {cand[task]}")
        elif task in base and candidate.has(task):
            out.append(f"{task}: baseline {base[task]}, candidate {NOT_RECORDED}")
        elif task in cand and baseline.has(task):
            out.append(f"{task}: baseline {NOT_RECORDED}, candidate {cand[task]}")
    return out


def check_versions(baseline: RunResult, candidate: RunResult, allow: bool = False) -> VersionCheck:
    """Compare recorded versions; different (or one-sided) versions raise InputError unless `allow` (then they
    are listed)."""
    base, cand = recorded_versions(baseline), recorded_versions(candidate)
    differences = _differences(baseline, candidate, base, cand)
    if differences and not allow:
        raise InputError(
            "the runs were made on different benchmark versions (or one run's version is unknown) and are not "
            "comparable as they are: " + "; ".join(differences),
            field=MANIFEST_KEY,
            fix="re-run the baseline on the candidate's suite version (with rlgate, whose run manifest records it), "
            "or pass --allow-version-mismatch (and score an anchor set to see whether difficulty changed)",
        )
    return VersionCheck(baseline=base, candidate=cand, differences=differences, allowed=bool(differences))
