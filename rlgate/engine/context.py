"""What gate evaluation reads: both runs, their pairing, settings, and per-metric caches.

Every gate on the same metric sees the same comparison (computed once, with an RNG derived from
the decision seed and the metric name, so adding or reordering gates never changes a number).
"""

from __future__ import annotations

import difflib
import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from rlgate.contract.metrics import MetricRef, is_bounded
from rlgate.contract.models import GateConfig
from rlgate.engine import fmt
from rlgate.engine.compare import Comparison, compare_paired, compare_unpaired
from rlgate.engine.directions import direction
from rlgate.engine.models import PairingReport
from rlgate.engine.pairing import PairedTask
from rlgate.engine.units import one_run_means, responses_per_sample, run_codes, sample_means, unit_codes
from rlgate.engine.values import ColumnCache, Values, is_binary, paired_rows, run_values
from rlgate.results.models import MetricKey, RunResult, TaskResult


class NoData(Exception):
    """The metric cannot be found or has no usable values: the gate is `nodata`."""


@dataclass
class GateContext:
    config: GateConfig
    baseline: RunResult | None
    candidate: RunResult
    seed: int
    paired: dict[str, PairedTask] = field(default_factory=dict)
    one_sided: dict[str, PairingReport] = field(default_factory=dict)
    _comparisons: dict[MetricKey, Comparison] = field(default_factory=dict)
    _values: dict[tuple[str, MetricKey], Values | None] = field(default_factory=dict)
    columns: ColumnCache = field(default_factory=ColumnCache)
    #: id(task) -> (the task, its sample codes): worked out once per task, not once per gate and role
    _unit_codes: dict[int, tuple[TaskResult, np.ndarray | None]] = field(default_factory=dict)

    @property
    def level(self) -> float:
        """Two-sided confidence level of every delta interval: 1 - alpha."""
        return 1.0 - self.config.alpha

    def rng(self, key: MetricKey) -> np.random.Generator:
        return np.random.default_rng([self.seed & 0xFFFFFFFF, zlib.crc32(str(key).encode())])

    def values(self, role: str, key: MetricKey) -> Values:
        """All samples' values (or the reported aggregate) of one run; NoData when absent."""
        run = self.candidate if role == "candidate" else self.baseline
        if run is None:
            raise NoData("no baseline results (give --baseline or baseline.results in the contract)")
        cache_key = (role, key)
        if cache_key not in self._values:
            self._values[cache_key] = run_values(run, key, self.columns)
        found = self._values[cache_key]
        if found is None:
            raise NoData(f"the {role} run has no task '{key.task}'")
        if found.aggregate is None:
            raise NoData(f"the {role} run does not report {key.metric}/{key.filter} for {key.task}"
                         + (_hint(key) or _reported(run, key)))
        if not math.isfinite(found.aggregate):  # a reported NaN / inf aggregate (no samples to check)
            raise ValueError(f"the {role} run reports a non-finite {key.metric}/{key.filter} for {key.task} "
                             f"({found.aggregate}); its results file is corrupt")
        return found

    def sample_values(self, role: str, key: MetricKey) -> tuple[np.ndarray, int]:
        """One run's per-sample values (records of a sample averaged) and the records per sample (1: unchanged)."""
        found = self.values(role, key)
        assert found.values is not None
        run = self.candidate if role == "candidate" else self.baseline
        assert run is not None
        tasks = [run.tasks[leaf] for leaf in run.leaves(key.task)]
        codes = [self.codes_of(task) for task in tasks]
        if all(c is None for c in codes):
            return found.values, 1
        parts, most, start = [], 1, 0
        for task, code in zip(tasks, codes, strict=True):
            part = found.values[start:start + len(task.samples)]
            start += len(task.samples)
            if code is None:
                parts.append(part)
                continue
            means, size = one_run_means(part, code)
            parts.append(means)
            most = max(most, size)
        return np.concatenate(parts), most

    def codes_of(self, task: TaskResult) -> np.ndarray | None:
        """`unit_codes(task)`, once per task (the task is held beside its codes, so its id stays its own)."""
        found = self._unit_codes.get(id(task))
        if found is None:
            found = self._unit_codes[id(task)] = (task, unit_codes(task))
        return found[1]

    def direction(self, ref: MetricRef, override: bool | None) -> bool:
        """Higher is better? The gate's override, else the harness's (rlgate.engine.directions); never a results
        file's own flag."""
        return direction(self.config, ref, override)

    def unit(self, key: MetricKey) -> fmt.Unit:
        """How this metric's numbers read: a harness-declared range makes it a plain scale, not a fraction."""
        declared = self.candidate.metric_range(key.task, key.metric)
        if declared is None and self.baseline is not None:
            declared = self.baseline.metric_range(key.task, key.metric)
        if declared is not None:
            return fmt.Unit(fraction=declared.low == 0 and declared.high == 1)
        return fmt.Unit(fraction=is_bounded(key.metric))

    def leaves(self, key: MetricKey) -> list[str]:
        assert self.baseline is not None
        return [leaf for leaf in self.candidate.leaves(key.task) if leaf in self.baseline.tasks]

    def unpaired(self, key: MetricKey) -> int:
        """Documents of this metric's task(s) without a partner, including subtasks one run lacks."""
        missing = sum(r.only_baseline + r.only_candidate for leaf, r in self.one_sided.items()
                      if leaf in self.candidate.leaves(key.task)
                      or (self.baseline is not None and leaf in self.baseline.leaves(key.task)))
        return missing + sum(self._unpaired_of(leaf) for leaf in self.leaves(key))

    def _unpaired_of(self, leaf: str) -> int:
        task = self.paired.get(leaf)
        if task is None:
            return 0
        r = task.report
        return r.only_baseline + r.only_candidate + r.document_mismatch

    def compare(self, key: MetricKey) -> Comparison:
        """Candidate vs baseline on one metric (cached); NoData when it cannot be formed."""
        if key in self._comparisons:
            return self._comparisons[key]
        if self.baseline is None:
            raise NoData("no baseline results (give --baseline or baseline.results in the contract)")
        base_v = self.values("baseline", key)
        cand_v = self.values("candidate", key)
        leaves = self.leaves(key)
        if base_v.values is not None and cand_v.values is not None and all(leaf in self.paired for leaf in leaves):
            pairs = {leaf: (self.paired[leaf].baseline_index, self.paired[leaf].candidate_index) for leaf in leaves}
            b, c, ok = paired_rows(self.baseline, self.candidate, key, leaves, pairs, self.columns)
            missing = int((~ok).sum())
            b, c = b[ok], c[ok]
            if b.size == 0:
                raise NoData(f"no document of {key.task} is paired between baseline and candidate")
            codes = run_codes(self.baseline, self.candidate, leaves, pairs, self.codes_of)
            units = None
            if codes is not None:  # several records per sample: one value per sample before any test
                b, c, units = sample_means(b, c, codes[ok])
                if units.epochs_max == 1:
                    units = None
            result = compare_paired(b, c, binary=is_binary(b, c), level=self.level,
                                    resamples=self.config.bootstrap_resamples, rng=self.rng(key),
                                    clustered=units is not None)
            result.details["pairs_missing_value"] = missing
            if units is not None:
                result.details["units"] = units.as_details()
            else:
                repeats = responses_per_sample([self.candidate.tasks[leaf] for leaf in leaves])
                if repeats is not None:
                    result.details["units"] = {"samples": int(b.size), "responses_per_sample": repeats}
        else:
            hint = self.config.samples_hint(key.task)
            if not self.config.allow_unpaired:
                lacking = " and ".join(role for role, found in (("baseline", base_v), ("candidate", cand_v))
                                       if found.values is None) or "one run (some subtask)"
                raise NoData(f"{key.metric}/{key.filter} of {key.task} has no per-sample values in the {lacking} "
                             f"run: {hint} for a paired test (or set allow_unpaired: true in the contract for an "
                             "unpaired test on the aggregates; the decision is then at most research_only)")
            if base_v.stderr is None or cand_v.stderr is None:
                raise NoData(f"{key.task} has no per-sample results in one run and no stderr to compare "
                             f"aggregates; {self.config.samples_hint(key.task)}")
            for role, found in (("baseline", base_v), ("candidate", cand_v)):
                if found.stderr is not None and not math.isfinite(found.stderr):  # would make every p NaN / 0.5
                    raise ValueError(f"the {role} run reports a non-finite stderr of {key.metric}/{key.filter} for "
                                     f"{key.task} ({found.stderr}); its results file is corrupt")
            result = compare_unpaired(base_v.aggregate or 0.0, base_v.stderr, cand_v.aggregate or 0.0,
                                      cand_v.stderr, min(base_v.n, cand_v.n), level=self.level,
                                      needs=self.config.samples_option(key.task))
        self._comparisons[key] = result
        return result


def _reported(run: RunResult, key: MetricKey) -> str:
    """What the task does report, so a misspelled gate metric is fixed from the reason, not by opening the files."""
    leaves = run.leaves(key.task)
    task = run.tasks.get(key.task) or (run.tasks[leaves[0]] if leaves else None)
    names = sorted(f"{m}/{f}" for f, metrics in (task.metrics if task else {}).items()
                   for m, v in metrics.items() if v is not None)
    if not names:
        return ""
    close = difflib.get_close_matches(f"{key.metric}/{key.filter}", names, n=1, cutoff=0.6)
    mean = f"did you mean {key.task}/{close[0]}? " if close else ""
    shown = ", ".join(f"{key.task}/{n}" for n in names[:8]) + (", ..." if len(names) > 8 else "")
    return f" ({mean}it reports {shown})"


def _hint(key: MetricKey) -> str:
    if key.metric == "truncation_rate":
        return " (truncation is only knowable when the run recorded token counts or truncation flags)"
    if key.metric.startswith(("pass@", "maj@")):
        return " (needs n > 1 responses per document and a regex filter rlgate can replay)"
    return ""
