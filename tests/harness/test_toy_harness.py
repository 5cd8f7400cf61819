"""A second harness gates end to end through `rlgate gate` with no change outside its own package.

The toy harness (tests/fixtures/toy_harness) reads `{id, score}` JSONL on a 0-10 scale with string and int
ids; the contract declares the metric's range, so a max_drop of 1.5 points is valid (it would be
refused for a fraction).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fixtures.toy_harness import ToyHarness
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.harness import register_harness, unregister_harness

runner = CliRunner()


@pytest.fixture(autouse=True)
def toy_registered() -> Iterator[None]:
    register_harness("toy", ToyHarness)
    yield
    unregister_harness("toy")


def _contract(tmp_path: Path, max_drop: float = 1.5) -> Path:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "essays", "baseline": {"checkpoint": "b"},
        "splits": {"public": {"visibility": "nightly"}},
        "suites": [{"schema_version": 1, "name": "essays", "tasks": [
            {"task": "essay", "harness": "toy", "split": "public", "metric_ranges": {"score": [0, 10]}}]}],
        "gates": {"regression": [{"metric": "essay/score", "max_drop": max_drop}],
                  "hard": [{"metric": "essay/score", "min": 4}]}}))
    return tmp_path / "c.yaml"


def _scores(path: Path, scores: list[float]) -> Path:
    ids: list[int | str] = [f"essay-{i}" if i % 2 else i for i in range(len(scores))]
    path.write_text("".join(json.dumps({"id": i, "score": s}) + "\n" for i, s in zip(ids, scores, strict=True)))
    return path


def _gate(tmp_path: Path, contract: Path, base: Path, cand: Path) -> tuple[int, str, dict]:
    result = runner.invoke(app, ["gate", str(contract), "--baseline", str(base), "--candidate", str(cand),
                                 "--out", str(tmp_path / "out")], env={"RLGATE_HISTORY": str(tmp_path / "h.sqlite")})
    decision = json.loads((tmp_path / "out" / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, result.output, decision


def test_toy_harness_releases_a_candidate_within_its_declared_range(tmp_path: Path) -> None:
    base = _scores(tmp_path / "toy_base.jsonl", [6, 7, 5, 8, 6, 7, 6, 5, 7, 6] * 8)
    cand = _scores(tmp_path / "toy_cand.jsonl", [6, 7, 6, 8, 6, 7, 7, 5, 7, 6] * 8)
    code, output, decision = _gate(tmp_path, _contract(tmp_path), base, cand)
    assert code == 0, output
    assert decision["decision"] == "release"
    regression = next(g for g in decision["gates"] if g["kind"] == "regression")
    assert regression["n"] == 80 and regression["delta"] == pytest.approx(0.2)
    assert "20.00" not in regression["reason"]  # a 0-10 score is not shown as a percentage


def test_toy_harness_blocks_a_drop_beyond_max_drop(tmp_path: Path) -> None:
    base = _scores(tmp_path / "toy_base.jsonl", [6, 7, 5, 8, 6, 7, 6, 5, 7, 6] * 8)
    cand = _scores(tmp_path / "toy_cand.jsonl", [3, 4, 3, 5, 4, 4, 3, 3, 4, 4] * 8)
    code, output, decision = _gate(tmp_path, _contract(tmp_path), base, cand)
    assert code == 1, output
    assert decision["decision"] == "block"
    assert {g["kind"] for g in decision["gates"] if g["verdict"] == "fail"} == {"regression", "hard"}


def test_threshold_outside_the_declared_range_is_a_located_error(tmp_path: Path) -> None:
    base = _scores(tmp_path / "toy_base.jsonl", [6, 7])
    code, output, _ = _gate(tmp_path, _contract(tmp_path, max_drop=12), base, base)
    assert code == 2 and "max_drop=12.0 is out of range" in output and "c.yaml" in output


def test_threshold_outside_the_harness_declared_range_is_an_error_gate(tmp_path: Path) -> None:
    """The contract says 0-10 but the run's harness declares 0-5: a min of 8 cannot be judged, never passes."""
    from rlgate.engine.decision import decide
    from rlgate.harness.vocabulary import load_contract
    from rlgate.results.models import MetricRange

    contract = _contract(tmp_path)
    contract.write_text(contract.read_text().replace("min: 4", "min: 8"))
    run = ToyHarness().read(_scores(tmp_path / "toy_a.jsonl", [2, 3, 1, 4]))
    run.tasks["essay"].metric_ranges["score"] = MetricRange(low=0, high=5)
    decision = decide(load_contract(contract).gates, run, run, seed=0, contract_name="essays")
    hard = next(g for g in decision.gates if g.kind == "hard")
    assert hard.verdict == "error" and "min=8 does not fit score's range [0, 5]" in hard.reason
    assert decision.decision != "release"


def test_toy_harness_corrupt_scores_and_duplicates_follow_rlgate_rules(tmp_path: Path) -> None:
    """NaN / inf scores from any harness fail their gates closed; repeated ids collapse or are refused."""
    scores = [6, 7, 5, 8, 6, 7, 6, 5, 7, 6] * 8
    base = _scores(tmp_path / "toy_base.jsonl", scores)
    cand = _scores(tmp_path / "toy_cand.jsonl", [float("nan"), float("inf"), *scores[2:]])
    code, output, decision = _gate(tmp_path, _contract(tmp_path), base, cand)
    assert code == 1, output
    assert decision["decision"] == "block" and {g["verdict"] for g in decision["gates"]} == {"error"}
    assert [(c["run"], c["doc_id"], c["value"]) for c in decision["corrupt"]] == [
        ("candidate", 0, "NaN"), ("candidate", "essay-1", "Infinity")]
    assert "2 corrupt documents in essay/score/none" in decision["gates"][0]["reason"]
    lines = base.read_text().splitlines()
    dup = tmp_path / "toy_dup.jsonl"
    dup.write_text("\n".join([*lines, lines[0], lines[1]]) + "\n")
    code, output, decision = _gate(tmp_path, _contract(tmp_path), base, dup)
    assert code == 0 and "candidate essay: 2 identical duplicate sample lines collapsed" in output
    dup.write_text("\n".join([*lines, json.dumps({"id": 0, "score": 1})]) + "\n")
    code, output, _ = _gate(tmp_path, _contract(tmp_path), base, dup)
    assert code == 2 and f"{dup}:1 and {dup}:81" in " ".join(output.split())


def test_sequential_looks_are_refused_before_a_harness_that_cannot_generate_in_looks_plans(tmp_path: Path) -> None:
    """protocol.sequential needs a harness with `generates_in_looks`; the refusal comes before `plan` runs."""
    from rlgate._core.errors import InputError
    from rlgate.harness.vocabulary import load_contract
    from rlgate.orchestrate import evaluate

    resolved = load_contract(_contract(tmp_path))
    with pytest.raises(InputError) as err:  # the toy harness's plan would raise "only reads stored scores"
        evaluate(resolved, resolved.tasks, tmp_path / "out", cache_dir=tmp_path / "cache", sequential_look=1)
    assert err.value.field == "protocol.sequential" and "toy harness runs every sample" in str(err.value)
