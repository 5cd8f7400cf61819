"""A toy harness, as a second harness would be written: one package, one `register_harness` line.

It reads a JSONL of `{"id": ..., "score": ...}` (ids int or str, scores on a 0-10 scale, e.g. an
essay rubric) and knows nothing else; everything from reading to the decision is rlgate's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rlgate.contract.loader import ResolvedContract, ResolvedTask
from rlgate.errors import InputError
from rlgate.harness.base import RunOutcome, RunPlan
from rlgate.results.models import MetricRange, RunProvenance, RunResult, SampleRecord, TaskResult

TASK, METRIC = "essay", "score"


class ToyHarness:
    name = "toy"

    def version(self) -> str | None:
        return "0.0.1"

    def can_read(self, path: Path) -> bool:
        return path.is_file() and path.suffix == ".jsonl" and path.name.startswith("toy_")

    def read(self, path: Path, *, samples: bool = True) -> RunResult:
        records: list[SampleRecord] = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                row = json.loads(line)
                doc_id, score = row["id"], float(row["score"])
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"not a {{id, score}} line ({exc})", file=path, line=number,
                                 fix="write one JSON object with 'id' and a numeric 'score' per line") from None
            digest = hashlib.sha256(str(doc_id).encode()).hexdigest()[:16]
            records.append(SampleRecord(doc_id=doc_id, doc_hash=digest, scores={"none": {METRIC: score}}))
        mean = sum(r.scores["none"][METRIC] for r in records) / len(records)  # type: ignore[misc]
        task = TaskResult(task=TASK, metrics={"none": {METRIC: mean}}, n_samples=len(records),
                          metric_ranges={METRIC: MetricRange(low=0, high=10)},
                          samples=records if samples else [])
        return RunResult(provenance=RunProvenance(source=str(path), harness=self.name,
                                                  harness_version=self.version()), tasks={TASK: task})

    def plan(self, contract: ResolvedContract, tasks: list[ResolvedTask], out_dir: Path, cache_dir: Path,
             **options: object) -> RunPlan:
        raise InputError("the toy harness only reads stored scores", fix="use rlgate gate")

    def run(self, plan: RunPlan) -> RunOutcome:
        raise InputError("the toy harness only reads stored scores", fix="use rlgate gate")
