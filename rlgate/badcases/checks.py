"""Contract-level glue for badcases: the badcase report of a gate/check output folder, and of a decision.

Kept here so the CLI only parses arguments, and so `rlgate badcases`, `rlgate gate` and `rlgate check`
build the same report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from rlgate._core.errors import InputError
from rlgate.badcases.models import BadcaseReport
from rlgate.badcases.taxonomy import ClassifyOptions

if TYPE_CHECKING:
    from rlgate.contract.loader import ResolvedContract
    from rlgate.engine.models import Decision
    from rlgate.results.models import RunResult


@dataclass
class RunFolder:
    """What `rlgate badcases OUT_DIR` found: the decision (if any) and the runs it refers to."""

    decision: Decision | None
    candidate: Path
    baseline: Path | None
    contract: Path | None


def _existing(source: str, out_dir: Path) -> Path | None:
    for path in (Path(source), out_dir / source):
        if path.exists():
            return path
    return None


def locate_runs(out_dir: Path) -> RunFolder:
    """Runs named by OUT_DIR/decision.json's inputs, else OUT_DIR/candidate and OUT_DIR/baseline."""
    from rlgate.engine.models import Decision

    if not out_dir.is_dir():
        raise InputError("run folder does not exist", file=str(out_dir),
                         fix="pass the --out folder of rlgate gate/check")
    decision = None
    file = out_dir / "decision.json"
    if file.is_file():
        try:
            decision = Decision.model_validate(json.loads(file.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise InputError(f"not a readable decision: {str(exc).splitlines()[0]}", file=str(file)) from None
    found: dict[str, Path] = {}
    if decision is not None:
        for ref in decision.inputs:
            path = _existing(ref.source, out_dir)
            if path is not None:
                found[ref.role] = path
    for role in ("candidate", "baseline"):
        if role not in found and (out_dir / role).is_dir():
            found[role] = out_dir / role
    if "candidate" not in found:
        looked = "decision.json's inputs and " if decision is not None else ""
        raise InputError(f"no candidate run found (looked at {looked}{out_dir / 'candidate'})", file=str(out_dir),
                         fix="point at the --out folder of `rlgate gate`/`rlgate check`, or put the lm-eval output "
                         "folders in OUT_DIR/candidate and OUT_DIR/baseline")
    contract = None
    if decision is not None:
        for name in (str(decision.extensions.get("contract_path", "")), decision.contract):
            if name and Path(name).suffix in (".yaml", ".yml") and Path(name).is_file():
                contract = Path(name)
                break
    return RunFolder(decision, found["candidate"], found.get("baseline"), contract)


@dataclass
class FolderBadcases:
    """The badcase report of a run folder, with what it was built from."""

    report: BadcaseReport
    decision: Decision | None
    candidate: RunResult
    baseline: RunResult | None
    private_tasks: frozenset[str]
    options: ClassifyOptions
    folder: RunFolder


def _manifest_visibility(runs: Sequence[RunResult | None]) -> dict[str, str]:
    out: dict[str, str] = {}
    for run in runs:
        manifest = run.provenance.manifest if run is not None else None
        if manifest is not None:
            out.update(manifest.task_visibility)
    return out


def folder_badcases(out_dir: Path, *, contract: Path | None = None, allow_version_mismatch: bool = False,
                    anchors: Path | None = None, max_examples: int = 3) -> FolderBadcases:
    """Read the runs of a gate/check output folder and build their badcase report.

    Which tasks are private comes from the contract (--contract, or the one the decision names), else
    from the runs' manifests; with neither, the command refuses rather than risk showing private samples.
    """
    from rlgate.badcases.discipline import private_leaf_tasks
    from rlgate.badcases.report import build_badcase_report, classify_options
    from rlgate.badcases.versioning import anchor_shifts, load_anchor_set
    from rlgate.engine.versions import check_versions
    from rlgate.harness import read_results
    from rlgate.harness.vocabulary import load_contract

    folder = locate_runs(out_dir)
    candidate = read_results(folder.candidate)
    baseline = read_results(folder.baseline) if folder.baseline is not None else None
    contract_path = contract or folder.contract
    resolved = load_contract(contract_path) if contract_path is not None else None
    visibility = _manifest_visibility([candidate, baseline])
    if resolved is None and not visibility:
        raise InputError("cannot tell which tasks are release_gate_only (no contract and no run manifest says)",
                         file=str(out_dir), fix="pass --contract CONTRACT.yaml, the contract the runs were gated under")
    private = private_leaf_tasks(resolved, [candidate, baseline], visibility)
    options = classify_options(resolved)
    versions = check_versions(baseline, candidate, allow_version_mismatch) if baseline is not None else None
    shifts = (anchor_shifts(baseline, candidate, load_anchor_set(anchors), options=options)
              if anchors is not None and baseline is not None else [])
    alpha = resolved.gates.alpha if resolved is not None else (folder.decision.alpha if folder.decision else 0.05)
    report = build_badcase_report(candidate, baseline, private_tasks=private, options=options, alpha=alpha,
                                  max_examples=max_examples, versions=versions, anchors=shifts,
                                  gates=folder.decision.gates if folder.decision else None)
    if anchors is not None and baseline is None:
        report.warnings.append("--anchors needs a baseline run: anchor check skipped")
    return FolderBadcases(report, folder.decision, candidate, baseline, private, options, folder)


def decision_with_badcases(decision: Decision, candidate: RunResult, baseline: RunResult | None,
                           resolved: ResolvedContract | None, max_examples: int = 3) -> Decision:
    """For `rlgate gate` / `rlgate check`: the decision with badcase_top, clusters and next actions attached.

    Private (release_gate_only) tasks are counted but never sampled.
    """
    from rlgate.badcases.discipline import private_leaf_tasks
    from rlgate.badcases.report import attach_badcases, build_badcase_report, classify_options

    private = private_leaf_tasks(resolved, [candidate, baseline])
    report = build_badcase_report(candidate, baseline, private_tasks=private, options=classify_options(resolved),
                                  alpha=decision.alpha, max_examples=max_examples, gates=decision.gates)
    return attach_badcases(decision, report)
