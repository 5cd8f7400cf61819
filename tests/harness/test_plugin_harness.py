"""A harness from another package, registered only through the `rlgate.plugins` entry point, gates end to end.

The package is written into a temporary folder with its own dist-info (METADATA + entry_points.txt), as
`pip install` would leave it, and put on sys.path: rlgate has no line of code naming it. It is read-only
(the port's default `plan` / `run` refuse) and answers its own vocabulary (a closed one: `pass_rate`, a
fraction), so a gate on another metric is refused at load with the closest match and per-sample values
outside [0, 1] are corrupt.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.badcases.classify import classify_run, reload_plugins
from rlgate.cli.app import app
from rlgate.harness import read_results
from rlgate.harness.registry import HARNESSES, REGISTRY, get_harness

runner = CliRunner()

PLUGIN = '''
"""A third-party read-only harness: `{"id": ..., "passed": 0 or 1}` lines in a file named *.passes.jsonl."""
import hashlib
import json
from pathlib import Path

from rlgate.contract.vocabulary import MetricInfo, TaskVocabulary
from rlgate.harness import Harness
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult


class FlakyCases:
    """A badcase classifier from the same package: every failed case is a flaky test."""

    family = "cases"

    def claims(self, task):
        return task == "cases"

    def classify(self, task, sample, options):
        from rlgate.badcases.taxonomy import Failure, SampleOutcome

        right = sample.scores["none"].get("pass_rate") == 1
        return SampleOutcome(task=task, family=self.family, doc_id=sample.doc_id, doc_hash=sample.doc_hash,
                             correct=right, failures=() if right else (Failure("flaky_case", "other"),))


class PassesHarness(Harness):
    name = "passes"
    samples_hint = "write one line per case"

    def version(self):
        return "1.2.3"

    def can_read(self, path):
        return path.is_file() and path.name.endswith(".passes.jsonl")

    def vocabulary_of(self, name):
        return TaskVocabulary(harness=self.name, closed=True, samples_hint=self.samples_hint,
                              metrics={"pass_rate": MetricInfo(kind="fraction")})

    def read(self, path, *, samples=True):
        records = []
        for line in path.read_text().splitlines():
            row = json.loads(line)
            records.append(SampleRecord(doc_id=row["id"], doc_hash=hashlib.sha256(str(row["id"]).encode()).hexdigest(),
                                        scores={"none": {"pass_rate": row["passed"]}}))
        mean = sum(r.scores["none"]["pass_rate"] for r in records) / len(records)
        task = TaskResult(task="cases", metrics={"none": {"pass_rate": mean}}, n_samples=len(records),
                          samples=records)
        return RunResult(provenance=RunProvenance(source=str(path), harness=self.name, harness_version="1.2.3"),
                         tasks={"cases": task})
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    (site / "rlgate_passes").mkdir(parents=True)
    (site / "rlgate_passes" / "__init__.py").write_text(PLUGIN)
    info = site / "rlgate_passes-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rlgate-passes\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[rlgate.plugins]\nharness.passes = rlgate_passes:PassesHarness\n"
                                           "badcase_classifier.flaky = rlgate_passes:FlakyCases\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    REGISTRY.refresh()
    reload_plugins()
    yield tmp_path
    sys.modules.pop("rlgate_passes", None)
    monkeypatch.undo()
    REGISTRY.refresh()
    reload_plugins()


def _contract(root: Path, metric: str) -> Path:
    (root / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "cases", "baseline": {"checkpoint": "b"},
        "splits": {"public": {"visibility": "nightly"}},
        "suites": [{"schema_version": 1, "name": "cases", "tasks": [
            {"task": "cases", "harness": "passes", "split": "public"}]}],
        "gates": {"primary": {"metric": metric, "min_delta": 0.05}}}))
    return root / "c.yaml"


def _passes(path: Path, passed: list[float]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "passed": p}) + "\n" for i, p in enumerate(passed)))
    return path


def _gate(root: Path, contract: Path, base: Path, cand: Path) -> tuple[int, str, dict]:
    result = runner.invoke(app, ["gate", str(contract), "--baseline", str(base), "--candidate", str(cand),
                                 "--out", str(root / "out")], env={"RLGATE_HISTORY": str(root / "h.sqlite")})
    decision = json.loads((root / "out" / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, result.output, decision


def test_the_entry_point_harness_is_found_without_code_in_rlgate(plugin: Path) -> None:
    assert "passes" not in HARNESSES  # registered only through the entry point
    assert "passes" in REGISTRY.names()
    harness = get_harness("passes")
    assert harness.name == "passes" and harness.version() == "1.2.3" and not harness.scores_checked


def test_the_entry_point_harness_gates_end_to_end(plugin: Path) -> None:
    base = _passes(plugin / "base.passes.jsonl", [1, 0] * 100)
    cand = _passes(plugin / "cand.passes.jsonl", [1, 1, 1, 0] * 50)
    code, output, decision = _gate(plugin, _contract(plugin, "cases/pass_rate"), base, cand)
    assert code == 0, output
    assert decision["decision"] == "release"
    assert decision["gates"][0]["delta"] == pytest.approx(0.25) and decision["gates"][0]["n"] == 200


def test_its_vocabulary_refuses_another_metric_and_its_range_makes_2_corrupt(plugin: Path) -> None:
    base = _passes(plugin / "base.passes.jsonl", [1, 0] * 100)
    code, output, _ = _gate(plugin, _contract(plugin, "cases/pass_rte"), base, base)
    assert code == 2 and "task 'cases' has no metric 'pass_rte'" in output and "cases/pass_rate" in output
    cand = _passes(plugin / "cand.passes.jsonl", [2, 1] * 100)
    code, output, decision = _gate(plugin, _contract(plugin, "cases/pass_rate"), base, cand)
    assert code == 1 and decision["decision"] == "block", output
    assert decision["gates"][0]["verdict"] == "error" and "out-of-range score" in decision["gates"][0]["reason"]


def test_a_read_only_harness_refuses_to_run(plugin: Path) -> None:
    responses = _passes(plugin / "base.passes.jsonl", [1, 0])
    result = runner.invoke(app, ["eval", str(_contract(plugin, "cases/pass_rate")), "--responses", str(responses),
                                 "--out", str(plugin / "run")])
    assert result.exit_code == 2
    assert "the passes harness only reads stored results" in result.output


def test_a_badcase_classifier_from_the_same_entry_point_group_classifies_its_task(plugin: Path) -> None:
    run = read_results(_passes(plugin / "base.passes.jsonl", [1, 0, 1]))
    outcomes = classify_run(run)
    assert [o.failures[0].cls if o.failures else None for o in outcomes.values()] == [None, "flaky_case", None]


def test_a_harness_without_shards_refuses_to_shard_or_merge(plugin: Path) -> None:
    from rlgate._core.errors import InputError
    from rlgate.app.runs import evaluate
    from rlgate.harness.vocabulary import load_contract

    resolved = load_contract(_contract(plugin, "cases/pass_rate"))
    for option, refusal in (({"shard": (1, 2)}, "does not run shards"), ({"cached_only": True}, "from the cache")):
        with pytest.raises(InputError, match=refusal):
            evaluate(resolved, resolved.tasks, plugin / "run", cache_dir=plugin / "cache", **option)  # type: ignore[arg-type]
    harness = get_harness("passes")
    assert not harness.runs_shards and not harness.answers_from_cache
    with pytest.raises(InputError, match="does not merge shards"):
        harness.merge(None, [])  # type: ignore[arg-type]
