"""Cluster = sample: paired per-record values averaged to one value per sample before any test.

Epochs of one sample (inspect-ai `epochs`, any harness writing several records per sample, see
rlgate.results.units) share the sample's difficulty, so they are not independent evidence: a
candidate right on 3 more samples of 40, the same in each of 4 epochs, is 3 discordant samples
(one-sided p 0.125), not 12 discordant pairs of 160 (p 0.0002). Each sample's paired records are
averaged (mean for rates and scores; pass@k is already one unbiased value per sample), and the
paired test, interval and MDE then run over samples. A run with one record per sample is returned
unchanged, so single-epoch results are exactly what they were.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlgate.engine.models import PairingReport
from rlgate.results.models import RunResult, TaskResult
from rlgate.results.units import SAMPLE_KEY, unit_of


@dataclass(frozen=True)
class Units:
    """How the paired records of one comparison group into samples."""

    samples: int
    records: int
    epochs_min: int
    epochs_max: int
    agreement_baseline: float | None
    agreement_candidate: float | None

    @property
    def epochs(self) -> str:
        """Records per sample: `4`, or `2-4` where samples differ."""
        return str(self.epochs_max) if self.epochs_min == self.epochs_max else f"{self.epochs_min}-{self.epochs_max}"

    def as_details(self) -> dict[str, Any]:
        """The gate's `details["units"]`: samples × epochs and how often a sample's epochs agree."""
        return {"samples": self.samples, "records": self.records, "epochs_per_sample": self.epochs,
                "agreement_baseline": self.agreement_baseline, "agreement_candidate": self.agreement_candidate}


def unit_codes(task: TaskResult) -> np.ndarray | None:
    """An integer sample code per record, or None when every record is its own sample (the common case)."""
    if not any(SAMPLE_KEY in s.extra for s in task.samples if s.extra) and \
            len({s.doc_id for s in task.samples}) == len(task.samples):  # each record its own id: one pass less
        return None
    codes: dict[Any, int] = {}
    out = np.fromiter((codes.setdefault(unit_of(s), len(codes)) for s in task.samples), dtype=np.int64,
                      count=len(task.samples))
    return None if len(codes) == len(task.samples) else out


def paired_codes(base: TaskResult, cand: TaskResult, baseline_index: np.ndarray, candidate_index: np.ndarray,
                 codes_of: Callable[[TaskResult], np.ndarray | None] = unit_codes) -> np.ndarray | None:
    """The sample of each paired record (baseline's sample, checked against the candidate's), or None.

    A pair whose two records name different samples (ids reused across samples) is an error: averaging
    it into either sample would mix two questions.
    """
    b_codes = codes_of(base)  # `unit_codes`, or a gate's memo of it (`GateContext.codes_of`)
    c_codes = codes_of(cand)
    if b_codes is None and c_codes is None:
        return None
    b_units = [unit_of(base.samples[i]) for i in baseline_index.tolist()]
    c_units = [unit_of(cand.samples[i]) for i in candidate_index.tolist()]
    for b, c in zip(b_units, c_units, strict=True):
        if b != c:
            raise ValueError(f"{base.task}: a paired record is of sample {b!r} in the baseline and {c!r} in the "
                             "candidate; re-run both with the same sample ids")
    codes: dict[Any, int] = {}
    return np.fromiter((codes.setdefault(u, len(codes)) for u in b_units), dtype=np.int64, count=len(b_units))


def _agreement(values: np.ndarray, codes: np.ndarray, sizes: np.ndarray) -> float | None:
    """Share of a sample's epoch pairs that agree (0/1 values; samples with >= 2 epochs), else None."""
    if not bool(np.all((values == 0.0) | (values == 1.0))):
        return None
    ones = np.bincount(codes, weights=values, minlength=sizes.size)
    zeros = sizes - ones
    pairs = sizes * (sizes - 1) / 2
    many = sizes >= 2
    if not many.any():
        return None
    same = ones * (ones - 1) / 2 + zeros * (zeros - 1) / 2
    return float(same[many].sum() / pairs[many].sum())


def sample_means(baseline: np.ndarray, candidate: np.ndarray, codes: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, Units]:
    """Per-sample means of paired per-record values (no NaN), in first-seen sample order."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # samples in the order they were first met
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    dense = rank[inverse]
    sizes = np.bincount(dense, minlength=order.size).astype(float)
    b = np.bincount(dense, weights=baseline, minlength=order.size) / sizes
    c = np.bincount(dense, weights=candidate, minlength=order.size) / sizes
    units = Units(samples=int(order.size), records=int(codes.size), epochs_min=int(sizes.min()),
                  epochs_max=int(sizes.max()), agreement_baseline=_agreement(baseline, dense, sizes),
                  agreement_candidate=_agreement(candidate, dense, sizes))
    return b, c, units


def run_codes(base: RunResult, cand: RunResult, leaves: list[str], pairs: dict[str, tuple[np.ndarray, np.ndarray]],
              codes_of: Callable[[TaskResult], np.ndarray | None] = unit_codes) -> np.ndarray | None:
    """The sample code of every pair across the leaves (as `values.paired_rows` orders them), or None when each
    pair is its own sample. Codes of different leaves never meet (a group's samples stay apart)."""
    per_leaf = [paired_codes(base.tasks[leaf], cand.tasks[leaf], *pairs[leaf], codes_of) for leaf in leaves]
    if all(codes is None for codes in per_leaf):
        return None
    out, offset = [], 0
    for leaf, codes in zip(leaves, per_leaf, strict=True):
        if codes is None:
            codes = np.arange(pairs[leaf][0].size, dtype=np.int64)
        out.append(codes + offset)
        offset += int(codes.max()) + 1 if codes.size else 0
    return np.concatenate(out) if out else np.empty(0, dtype=np.int64)


def one_run_means(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-sample means of one run's per-record values (NaN records left out; a sample with none is NaN), and
    the most records any sample has."""
    ok = ~np.isnan(values)
    size = int(codes.max()) + 1 if codes.size else 0
    counts = np.bincount(codes[ok], minlength=size).astype(float)
    sums = np.bincount(codes[ok], weights=values[ok], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    return means, int(counts.max()) if counts.size else 0


def responses_per_sample(tasks: list[TaskResult]) -> str | None:
    """`16` (or `8-16`) where a record holds several responses (lm-eval `repeats`, n > 1); None for one each.

    Such a record is already one sample: its metric (first / majority answer, pass@k) is one value, so n
    stays the documents; the count is shown beside it."""
    sizes = {len(s.responses) for task in tasks for s in task.samples}
    most = max(sizes, default=0)
    if most <= 1:
        return None
    least = min(sizes)
    return str(most) if least == most else f"{least}-{most}"


def with_units(report: PairingReport, base: TaskResult, cand: TaskResult, baseline_index: np.ndarray,
               candidate_index: np.ndarray, codes_of: Callable[[TaskResult], np.ndarray | None] = unit_codes
               ) -> PairingReport:
    """A task's pairing report with its samples beside the records: samples × epochs where a harness writes
    several records per sample, responses per record where each holds several; unchanged otherwise (and where
    the runs name different samples for a pair, which the gates on the task report as an error)."""
    repeats = responses_per_sample([cand])
    try:
        codes = paired_codes(base, cand, baseline_index, candidate_index, codes_of)
    except ValueError:
        codes = None
    update: dict[str, Any] = {"responses_per_sample": repeats} if repeats is not None else {}
    if codes is not None and codes.size:
        sizes = np.bincount(codes)
        if int(sizes.max()) > 1:
            least, most = int(sizes.min()), int(sizes.max())
            epochs = str(most) if least == most else f"{least}-{most}"
            update |= {"samples": int(sizes.size), "epochs_per_sample": epochs}
    return report.model_copy(update=update) if update else report
