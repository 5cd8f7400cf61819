"""`rlgate gate`'s use case: decide on stored results of any registered harness (no model is run).

The results are read by the harness their run manifest names (or the one that recognises them), and the
decision is `rlgate.app.decide`'s, the same one `rlgate check` ends in.
"""

from __future__ import annotations

from pathlib import Path

from rlgate.app.decide import DecidedGate, GateOutcome, decide_runs, other_references, write_decided
from rlgate.contract.loader import ResolvedContract
from rlgate.harness import read_results
from rlgate.harness.vocabulary import load_contract
from rlgate.results.shared_values import SharedValues


def gate(contract: Path, candidate: Path, out: Path, *, baseline: Path | None = None, seed: int = 0,
         harness: str | None = None, sequential: bool = False) -> GateOutcome:
    """Gate `candidate` against `baseline` (default: the contract's baseline.results) and write every report.

    Without a baseline the comparative gates are nodata (never release); hard gates still apply. The runs
    are read and decided on in `_decided`, so they are freed before the reports are written.
    """
    resolved = load_contract(contract)
    return write_decided(_decided(resolved, candidate, out, baseline=baseline, seed=seed, harness=harness,
                                  sequential=sequential), out)


def _decided(resolved: ResolvedContract, candidate: Path, out: Path, *, baseline: Path | None, seed: int,
             harness: str | None, sequential: bool) -> DecidedGate:
    """Read both runs and decide; the runs live only in this frame, so they are freed when it returns."""
    baseline_dir = baseline or resolved.baseline_results
    shared = SharedValues()  # the candidate's documents, prompts and answers equal to the baseline's: one object
    base_run = read_results(baseline_dir, harness=harness, shared=shared) if baseline_dir is not None else None
    cand_run = read_results(candidate, harness=harness, shared=shared)
    same = baseline_dir is not None and Path(baseline_dir).resolve() == Path(candidate).resolve()
    notes = [f"the baseline and the candidate are the same results ({candidate}): every comparison is a run "
             "against itself"] if same else []
    return decide_runs(resolved, base_run, cand_run, out, seed=seed, checkpoint=str(candidate),
                       sequential=sequential, warnings=notes, references=other_references(resolved, harness))
