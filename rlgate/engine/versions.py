"""Benchmark versions: runs on different suite or private-task versions are never compared silently.

Beside `protocol.py` because it answers the same question (are these two runs comparable?) from the
run manifests' `benchmark_versions` (task -> 'suite@version[/task@version]'), which every harness
records. Pure: two RunResults in, a VersionCheck (or an InputError) out.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rlgate.defaults import empty_list
from rlgate.errors import InputError
from rlgate.results.models import RunResult

MANIFEST_KEY = "benchmark_versions"


class VersionCheck(BaseModel):
    """Suite and private-task versions of both runs; different versions are never compared silently."""

    model_config = ConfigDict(extra="forbid")

    baseline: dict[str, str] = Field(default_factory=dict)
    candidate: dict[str, str] = Field(default_factory=dict)
    differences: list[str] = Field(default_factory=empty_list)
    allowed: bool = False


def recorded_versions(run: RunResult) -> dict[str, str]:
    """The versions a run's manifest recorded (empty for runs rlgate did not produce)."""
    manifest = run.provenance.manifest or {}
    versions = manifest.get(MANIFEST_KEY) or {}
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


def check_versions(baseline: RunResult, candidate: RunResult, allow: bool = False) -> VersionCheck:
    """Compare recorded versions; different versions raise InputError unless `allow` (then they are listed)."""
    base, cand = recorded_versions(baseline), recorded_versions(candidate)
    differences = [f"{task}: baseline {base[task]}, candidate {cand[task]}"
                   for task in sorted(set(base) & set(cand)) if base[task] != cand[task]]
    if differences and not allow:
        raise InputError(
            "the runs were made on different benchmark versions and are not comparable as they are: "
            + "; ".join(differences),
            field=MANIFEST_KEY,
            fix="re-run the baseline on the candidate's suite version, or pass --allow-version-mismatch "
            "(and score an anchor set to see whether difficulty changed)",
        )
    return VersionCheck(baseline=base, candidate=cand, differences=differences, allowed=bool(differences))
