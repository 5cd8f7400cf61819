"""Which way is better: the harness's vocabulary or the contract says, never a results file.

A results file can carry its own `higher_is_better` (lm-eval writes one per metric); an edited file
could turn a drop into a gain. So the direction of a gated metric is the gate's own setting, else what
the harness that owns the metric says (`metric_direction`). A file whose flag disagrees is named in a
warning and ignored; two runs whose files disagree with each other are an input difference (refused
unless allow_protocol_mismatch, like a protocol difference), since their scores were not written under
one definition.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlgate.contract.metrics import MetricRef
from rlgate.contract.models import GateConfig
from rlgate.contract.vocabulary import neutral_metric
from rlgate.results.models import RunResult


def metric_direction(config: GateConfig, ref: MetricRef) -> bool:
    """Higher is better? As the task's harness says (`Harness.vocabulary`, which the loader puts on the gates);
    a task whose vocabulary was not checked (gates built in code) by rlgate's convention for the metric's name."""
    vocabulary = config.vocabulary(ref.task)
    info = vocabulary.metric(ref.metric) if vocabulary is not None else neutral_metric(ref.metric)
    return info.higher_is_better


def direction(config: GateConfig, ref: MetricRef, override: bool | None) -> bool:
    """The gate's direction: its contract setting, else the harness's."""
    return override if override is not None else metric_direction(config, ref)


def _word(flag: bool) -> str:
    return "higher is better" if flag else "lower is better"


def _recorded(run: RunResult, ref: MetricRef) -> dict[str, bool]:
    """leaf -> the results file's own higher_is_better for the metric, where it wrote one."""
    out = {}
    for leaf in run.leaves(ref.task):
        flag = run.tasks[leaf].higher_is_better.get(ref.metric)
        if flag is not None:
            out[leaf] = flag
    return out


def direction_findings(config: GateConfig, gated: Iterable[tuple[MetricRef, bool | None]],
                       baseline: RunResult | None, candidate: RunResult) -> tuple[list[str], list[str]]:
    """(warnings, input differences) for the gated metrics: a file flag that disagrees with the direction used,
    and leaves whose two files disagree with each other."""
    warnings: list[str] = []
    differences: list[str] = []
    seen: set[tuple[str, str]] = set()
    for ref, override in gated:
        if (ref.task, ref.metric) in seen:
            continue
        seen.add((ref.task, ref.metric))
        used = direction(config, ref, override)
        source = "the contract" if override is not None else "the harness"
        flags = {role: _recorded(run, ref) for role, run in (("baseline", baseline), ("candidate", candidate))
                 if run is not None}
        for role, recorded in flags.items():
            wrong = sorted(leaf for leaf, flag in recorded.items() if flag != used)
            if wrong:
                warnings.append(
                    f"the {role} results file says {ref.metric} is {_word(not used)} for {', '.join(wrong[:3])}"
                    + (f" and {len(wrong) - 3} more" if len(wrong) > 3 else "")
                    + f"; {source} says {_word(used)}, which the gate uses (the file's higher_is_better is ignored)")
        base, cand = flags.get("baseline", {}), flags.get("candidate", {})
        for leaf in sorted(set(base) & set(cand)):
            if base[leaf] != cand[leaf]:
                differences.append(f"{leaf}: results file higher_is_better.{ref.metric} {base[leaf]} (baseline) vs "
                                   f"{cand[leaf]} (candidate): the runs' files do not define the metric alike")
    return warnings, differences
