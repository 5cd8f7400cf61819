"""Corrupt scores in the engine: listed, counted per gate, and failing the gate closed unless tolerated.

A document whose score is NaN, infinite or of the wrong type has no value for that metric, so
leaving it out of the pairing would quietly shrink n and could turn a block into a release. A
gate reading such a metric is `error`, naming the count and the first documents; `allow_corrupt`
(per gate, or `gates.allow_corrupt` for all) tolerates up to N, which are then excluded and
reported in the gate's details, the warnings and decision.json.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

import numpy as np

from rlgate.contract.models import DiagnosticGate, GateConfig, HardGate
from rlgate.engine.models import CorruptDocument, GateVerdict, PairingReport
from rlgate.engine.values import ColumnCache
from rlgate.results.integrity import classify, shown
from rlgate.results.models import CorruptScore, DocId, MetricKey, RunResult, TaskResult, doc_order

Role = Literal["baseline", "candidate"]
_SHOWN = 5
_FIX = "re-score those samples, or set allow_corrupt to exclude them"
_KINDS = {"non_finite": "non-finite score", "wrong_type": "wrong-type score", "out_of_range": "out-of-range score"}


class CorruptData(Exception):
    """The gate's metric has more corrupt documents than the contract allows: the gate is `error`."""

    def __init__(self, message: str, count: int) -> None:
        super().__init__(message)
        self.count = count


def collect(run: RunResult | None, role: Role, keys: list[MetricKey], cache: ColumnCache) -> list[CorruptDocument]:
    """Every corrupt score of a run: those its reader listed, and stray non-finite ones in the gated metrics."""
    if run is None:
        return []
    found: dict[tuple[str, DocId, str, str], CorruptDocument] = {}
    for name, task in run.tasks.items():
        items = list(task.corrupt)
        for key in keys:
            if name in run.leaves(key.task):
                items += _strays(task, key.metric, key.filter, cache)
        for item in items:
            found.setdefault((name, item.doc_id, item.filter, item.metric), CorruptDocument(
                run=role, task=name, doc_id=item.doc_id, metric=item.metric, filter=item.filter,
                problem=item.problem, value=item.value, where=item.where))
    return sorted(found.values(), key=lambda c: (c.task, doc_order(c.doc_id), c.filter, c.metric))


def _strays(task: TaskResult, metric: str, filt: str, cache: ColumnCache) -> list[CorruptScore]:
    """NaN / inf scores still inside the samples (a result built without a reader's quarantine).

    The column cache already holds the metric's values: a fully finite column (the usual case)
    costs nothing more; only a column with gaps is walked sample by sample.
    """
    if not task.samples:
        return []
    try:
        values, _ = cache.values(task, metric, filt)
        if values.size and bool(np.isfinite(values).all()):
            return []
    except Exception:  # a metric that cannot be computed errs in its own gate; walk the raw scores
        pass
    out: list[CorruptScore] = []
    for sample in task.samples:
        raw = sample.scores.get(filt, {}).get(metric)
        problem = classify(raw)[1] if raw is not None else None
        if problem is not None:
            out.append(CorruptScore(doc_id=sample.doc_id, metric=metric, filter=filt, problem=problem,
                                    value=shown(raw)))
    return out


def roles_read(gate: object) -> tuple[Role, ...]:
    """The runs whose per-sample values a gate uses: hard gates and absolute diagnostics read the candidate only."""
    if isinstance(gate, HardGate):
        return ("candidate",)
    if isinstance(gate, DiagnosticGate) and gate.max_relative_increase is None and gate.max_relative_decrease is None:
        return ("candidate",)
    return ("baseline", "candidate")


def for_gate(key: MetricKey, roles: tuple[Role, ...], corrupt: list[CorruptDocument],
             baseline: RunResult | None, candidate: RunResult) -> list[CorruptDocument]:
    """The corrupt documents of the gate's metric and filter in the runs (and leaf tasks) it reads."""
    runs = {"baseline": baseline, "candidate": candidate}
    leaves = {role: set(run.leaves(key.task)) for role, run in runs.items() if run is not None and role in roles}
    return [c for c in corrupt if c.metric == key.metric and c.filter == key.filter and c.task in leaves.get(c.run, ())]


def allowed(gate: object, config: GateConfig) -> int:
    own = getattr(gate, "allow_corrupt", None)
    return config.allow_corrupt if own is None else int(own)


def listing(items: list[CorruptDocument]) -> str:
    """`candidate gsm8k doc 4 (NaN), ...` for the first few, and how many more."""
    shown = [f"{c.run} {c.task} doc {c.doc_id} ({c.value})" for c in items[:_SHOWN]]
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(shown) + more


def _counts(items: list[CorruptDocument]) -> str:
    by_run: dict[str, int] = defaultdict(int)
    for c in items:
        by_run[c.run] += 1
    kinds = sorted({_KINDS[c.problem] for c in items})
    return ", ".join(f"{role} {n}" for role, n in sorted(by_run.items())) + "; " + " and ".join(kinds)


def check(key: MetricKey, items: list[CorruptDocument], limit: int) -> None:
    """Raise CorruptData when the gate's metric has more corrupt documents than `limit`."""
    if len(items) > limit:
        raise CorruptData(f"{len(items)} corrupt document{'s' if len(items) != 1 else ''} in {key} "
                          f"({_counts(items)}; allow_corrupt {limit}): {listing(items)}; {_FIX}", len(items))


def mark_excluded(verdict: GateVerdict, items: list[CorruptDocument], limit: int) -> str:
    """Note tolerated corrupt documents on a computed verdict; returns the decision warning."""
    documents = f"{len(items)} corrupt document{'s' if len(items) != 1 else ''}"
    verdict.details["corrupt_excluded"] = len(items)
    verdict.details["corrupt_documents"] = [f"{c.run} {c.task} doc {c.doc_id} ({c.filter})" for c in items]
    verdict.reason += f"; {documents} excluded (allow_corrupt {limit})"
    return f"{verdict.name}: {documents} of {verdict.metric} excluded under allow_corrupt {limit}: {listing(items)}"


def run_warnings(corrupt: list[CorruptDocument], baseline: RunResult | None, candidate: RunResult) -> list[str]:
    """One warning per run and task with corrupt scores, and one per task whose duplicate lines were collapsed."""
    out: list[str] = []
    grouped: dict[tuple[str, str], list[CorruptDocument]] = defaultdict(list)
    for c in corrupt:
        grouped[(c.run, c.task)].append(c)
    for (role, task), items in grouped.items():
        by_doc: dict[int | str, list[str]] = defaultdict(list)
        for c in items:
            by_doc[c.doc_id].append(f"{c.metric}/{c.filter} {c.value}")
        docs = [f"doc {d} ({', '.join(parts)})" for d, parts in list(by_doc.items())[:_SHOWN]]
        more = f" and {len(by_doc) - _SHOWN} more" if len(by_doc) > _SHOWN else ""
        out.append(f"{role} {task}: {len(by_doc)} document{'s' if len(by_doc) != 1 else ''} with corrupt scores "
                   f"({len(items)} values): {', '.join(docs)}{more}; all listed in decision.json 'corrupt'")
    for role, run in (("baseline", baseline), ("candidate", candidate)):
        if run is None:
            continue
        for name, result in run.tasks.items():
            if result.duplicate_lines:
                out.append(f"{role} {name}: {result.duplicate_lines} identical duplicate sample "
                           f"line{'s' if result.duplicate_lines != 1 else ''} collapsed ({run.provenance.source})")
    return out


def count_in_pairing(report: PairingReport, corrupt: list[CorruptDocument]) -> PairingReport:
    """The pairing report with the task's corrupt documents counted per run."""
    base = {c.doc_id for c in corrupt if c.task == report.task and c.run == "baseline"}
    cand = {c.doc_id for c in corrupt if c.task == report.task and c.run == "candidate"}
    if not base and not cand:
        return report
    return report.model_copy(update={"corrupt_baseline": len(base), "corrupt_candidate": len(cand)})
