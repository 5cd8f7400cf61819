"""The contract's gate kinds, in one ordered table: everything else that lists the gates derives from it.

A gate kind is a field of `GateSettings` / `GateConfig` (one gate or a list), the name its verdicts carry
(`GateVerdict.kind`), the decision-policy key its failure maps to, and the engine function that judges one
gate of it. The loader's merge, the engine's order and dispatch, `rlgate validate`'s summary, the judge's
gates, badcase filters and the trend report's order all read this table, so a new kind is one entry here
(beside its gate model, its field and its evaluator). tests/test_architecture.py fails on a hand-written
list of the kinds anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlgate.contract.models import AnyGate


@dataclass(frozen=True)
class GateKindSpec:
    """One kind of contract gate."""

    kind: str  # what its verdicts are called (GateVerdict.kind) and how tables name it
    field: str  # the GateSettings / GateConfig field that holds it
    many: bool  # a list of gates, or at most one
    decisive: bool  # can show the candidate fit to release (a diagnostic alone never releases)
    candidate_only: bool  # judged on the candidate's own values: coverage counts the candidate's documents only
    fail_key: str  # the decision-policy key a plain failure maps to
    threshold: str | None  # the threshold key its minimum detectable effect is held against (underpowered)
    evaluator: str  # "module:attr" of the engine's judge of one gate: (gate, ctx, name) -> verdict
    family_finish: str | None = None  # a multiplicity-adjusted family: `evaluator` prepares, this finishes

    def gates(self, holder: Any) -> list[AnyGate]:
        """This kind's gates in a GateSettings / GateConfig (an unset field: none)."""
        value = getattr(holder, self.field)
        if value is None:
            return []
        return list(value) if self.many else [value]


GATE_KINDS: tuple[GateKindSpec, ...] = (
    GateKindSpec("primary", "primary", many=False, decisive=True, candidate_only=False, fail_key="primary_fail",
                 threshold="min_delta", evaluator="rlgate.engine.gates:evaluate_primary"),
    GateKindSpec("hard", "hard", many=True, decisive=True, candidate_only=True, fail_key="hard_fail",
                 threshold=None, evaluator="rlgate.engine.gates:evaluate_hard"),
    GateKindSpec("regression", "regression", many=True, decisive=True, candidate_only=False,
                 fail_key="regression_fail", threshold="max_drop", evaluator="rlgate.engine.gates:prepare_regression",
                 family_finish="rlgate.engine.gates:finish_regression"),
    GateKindSpec("diagnostic", "diagnostics", many=True, decisive=False, candidate_only=False,
                 fail_key="diagnostic_fail", threshold=None, evaluator="rlgate.engine.gates:evaluate_diagnostic"),
)
#: kind -> its entry
BY_KIND: dict[str, GateKindSpec] = {spec.kind: spec for spec in GATE_KINDS}
#: the contract's gate kinds, in order
CONTRACT_KINDS: tuple[str, ...] = tuple(spec.kind for spec in GATE_KINDS)
#: kinds of the verdicts gate sources add beside the contract's gates (the judge's take its gates' kinds)
SOURCE_KINDS: tuple[str, ...] = ("monitor", "contamination")
#: every GateVerdict.kind
VERDICT_KINDS: tuple[str, ...] = (*CONTRACT_KINDS, *SOURCE_KINDS)
#: the decisive kinds, for messages: "primary, hard or regression"
DECISIVE_KINDS: tuple[str, ...] = tuple(spec.kind for spec in GATE_KINDS if spec.decisive)


def listed(holder: Any) -> Iterator[tuple[GateKindSpec, AnyGate]]:
    """Every gate of a GateSettings / GateConfig with its kind, in the table's order."""
    for spec in GATE_KINDS:
        for gate in spec.gates(holder):
            yield spec, gate


def all_gates(holder: Any) -> list[AnyGate]:
    """Every gate of a GateSettings / GateConfig, in the table's order."""
    return [gate for _, gate in listed(holder)]


def keeping(holder: Any, keep: Callable[[GateKindSpec, Any], bool]) -> dict[str, Any]:
    """Field updates (for `model_copy(update=...)`) that keep only the gates `keep(spec, gate)` accepts."""
    update: dict[str, Any] = {}
    for spec in GATE_KINDS:
        kept = [gate for gate in spec.gates(holder) if keep(spec, gate)]
        update[spec.field] = kept if spec.many else (kept[0] if kept else None)
    return update


def or_list(kinds: tuple[str, ...]) -> str:
    """`primary, hard or regression`."""
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"
