"""`per_subtask: true`: one more gate per leaf task of a gated group, so a reward model's categories (or a
group's subjects) each get a verdict beside the pooled one.

The leaves are those either run holds under the gated name; each copy reads the parent's metric and filter on
its leaf and keeps its thresholds and test. A leaf's regression gates join the Holm family like any other, so
adding categories never makes the family less strict.
"""

from __future__ import annotations

from typing import TypeVar

from rlgate.contract.models import GateConfig, HardGate, RegressionGate
from rlgate.results.models import MetricKey, RunResult

G = TypeVar("G", RegressionGate, HardGate)


def _leaves(task: str, runs: tuple[RunResult | None, ...]) -> list[str]:
    found = {leaf for run in runs if run is not None for leaf in run.leaves(task)}
    return sorted(found - {task})


def with_subtask_gates(config: GateConfig, *runs: RunResult | None) -> GateConfig:
    """`config` with each per_subtask gate followed by its leaves' copies (unchanged when none asks); a leaf reads
    its group's vocabulary."""
    if not any(g.per_subtask for g in config.regression) and not any(g.per_subtask for g in config.hard):
        return config
    vocabularies = dict(config.vocabularies)

    def expanded(gates: list[G]) -> list[G]:
        out: list[G] = []
        for gate in gates:
            out.append(gate)
            if not gate.per_subtask:
                continue
            key = MetricKey.from_ref(gate.ref, config.default_filter(gate.ref.task))
            base = gate.name or gate.metric
            for leaf in _leaves(key.task, runs):
                out.append(gate.model_copy(update={"metric": f"{leaf}/{key.metric}/{key.filter}",
                                                   "name": f"{base} [{leaf}]", "per_subtask": False}))
                parent = config.vocabulary(key.task)
                if parent is not None and leaf not in vocabularies:
                    vocabularies[leaf] = parent
        return out

    regression, hard = expanded(list(config.regression)), expanded(list(config.hard))
    return config.model_copy(update={"regression": regression, "hard": hard, "vocabularies": vocabularies})
