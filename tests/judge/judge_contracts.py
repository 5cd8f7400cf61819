"""Contracts and runs for the judge tests (no deepeval needed)."""

from __future__ import annotations

from pathlib import Path

from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult


def sample(doc_id: int, answer: str, *, score: float | None = None, filtered: str | None = None,
           question: str | None = None) -> SampleRecord:
    """A sample with one response and, optionally, a rule score under gsm8k-like metric/filter names."""
    scores = {"flexible-extract": {"exact_match": score}} if score is not None else {}
    return SampleRecord(doc_id=doc_id, doc_hash=f"h{doc_id}", prompt=question or f"question {doc_id}",
                        responses=[answer], filtered={"flexible-extract": filtered or answer}, scores=scores)


def run(task: str, samples: list[SampleRecord], source: str = "run") -> RunResult:
    return RunResult(provenance=RunProvenance(source=source),
                     tasks={task: TaskResult(task=task, n_samples=len(samples), samples=samples)})


def write_contract(folder: Path, judge_yaml: str, gates_yaml: str, task_judge: str = "",
                   extra_tasks: str = "") -> Path:
    """A contract with one open-ended task `chat` (and optional others) and the given judge section."""
    text = f"""schema_version: 1
name: judged
baseline: {{results: baseline_results}}
splits:
  test_private: {{visibility: release_gate_only}}
suites:
  - schema_version: 1
    name: open_ended
    tasks:
      - task: chat
        split: test_private
{task_judge}{extra_tasks}gates:
{gates_yaml}
{judge_yaml}
"""
    (folder / "baseline_results").mkdir(exist_ok=True)
    path = folder / "contract.yaml"
    path.write_text(text, encoding="utf-8")
    return path
