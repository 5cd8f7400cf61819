"""`rlgate contamination`'s use case: the contract's eval documents against training data, and its gate's effect."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlgate._core.files import write_text_atomic
from rlgate.contamination.api import contract_contamination
from rlgate.contamination.index import ContaminationReport, contamination_gates
from rlgate.engine.models import DECISION_ORDER, DecisionName, GateVerdict
from rlgate.harness import read_results
from rlgate.harness.vocabulary import load_contract


@dataclass
class ContaminationOutcome:
    """The overlap report, the contamination gates' verdicts and the worst decision they lead to."""

    report: ContaminationReport
    gates: list[GateVerdict]
    decision: DecisionName
    written: Path | None = None


def contamination(contract: Path, *, train: Sequence[Path] = (), results: Path | None = None,
                  ngram: int | None = None, min_overlap: float | None = None, text_field: str | None = None,
                  out: Path | None = None, progress: Callable[[str, int], None] | None = None) -> ContaminationOutcome:
    """Check the contract's tasks against `train` (default: contamination.train_files); `results` (stored
    results) stand in for tasks without local data_files; contamination.json goes to `out` when given."""
    resolved = load_contract(contract)
    run = read_results(results) if results is not None else None
    report = contract_contamination(resolved, train=train, results=run, ngram=ngram, min_overlap=min_overlap,
                                    text_field=text_field, progress=progress)
    written = write_text_atomic(out / "contamination.json", report.model_dump_json(indent=2) + "\n") \
        if out is not None else None
    gates = contamination_gates(report)
    policy = resolved.gates.decision
    effects: list[DecisionName] = [getattr(policy, g.outcome) if g.outcome != "pass" else "release" for g in gates]
    worst: DecisionName = min(effects, key=DECISION_ORDER.index, default="release")
    return ContaminationOutcome(report, gates, worst, written)
