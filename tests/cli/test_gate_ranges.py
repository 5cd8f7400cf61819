"""A score means what its harness says: values outside the metric's range are corrupt, aggregates are checked.

Built from the real Abel GSM8K folders (skipped where ../shared/data is absent), as issue 32 tried them:
the baseline against itself with exact_match written as 1.05 for its correct answers (+3 points, released
before), or as -0.1 for its wrong ones (+4 points); and a results file whose aggregate disagrees with its
samples. The same faults on a small generated folder run everywhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.faults import copy_folder, samples_file
from fixtures.lmeval_builders import build_synthetic_folder, cached_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
runner = CliRunner()
pytest.importorskip("lm_eval")


def _gate(contract: Path, candidate: Path, baseline: Path, out: Path) -> tuple[int, str, dict[str, Any]]:
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(candidate), "--baseline", str(baseline),
                                 "--out", str(out)])
    decision = json.loads((out / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, result.output, decision


def _rescore(folder: Path, old: float, new: float) -> list[int]:
    """exact_match written as `new` wherever it was `old` (every filter); returns the documents changed."""
    path = samples_file(folder)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    changed = set()
    for row in rows:
        if row["exact_match"] == old:
            row["exact_match"] = new
            changed.add(row["doc_id"])
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return sorted(changed)


def _set_aggregate(folder: Path, key: str, value: float) -> None:
    results = next(folder.rglob("results_*.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    data["results"]["gsm8k"][key] = value
    results.write_text(json.dumps(data), encoding="utf-8")


def _out_of_range_blocks(contract: Path, base: Path, tmp_path: Path, old: float, new: float) -> dict[str, Any]:
    cand = copy_folder(base, tmp_path / "cand")
    changed = _rescore(cand, old, new)
    assert changed
    code, output, decision = _gate(contract, cand, base, tmp_path / "out")
    assert code == 1, output
    assert decision["decision"] == "block"
    exact = [g for g in decision["gates"] if g["metric"].startswith("gsm8k/exact_match/")]
    assert exact and all(g["verdict"] == "error" for g in exact)
    for gate in exact:
        assert "out-of-range score" in gate["reason"] and f"({new:g})" in gate["reason"]
    assert {c["problem"] for c in decision["corrupt"]} == {"out_of_range"}
    assert {c["doc_id"] for c in decision["corrupt"]} == set(changed)
    return decision


# --------------------------------------------------------------------------- generated folders (run everywhere)
@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    base = build_synthetic_folder(root / "base", "org/base", {"gsm8k": [i % 2 == 0 for i in range(120)]})
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", root / "suite.yaml")
    gates = {"primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.02},
             "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.05}]}
    contract = {"schema_version": 1, "name": "tiny", "baseline": {"checkpoint": "org/base"},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"], "gates": gates}
    (root / "c.yaml").write_text(yaml.safe_dump(contract))
    (root / "allow.yaml").write_text(yaml.safe_dump({**contract, "gates": {**gates, "allow_corrupt": 200}}))
    return {"base": base, "contract": root / "c.yaml", "allow": root / "allow.yaml"}


@pytest.mark.parametrize(("old", "new"), [(1.0, 1.05), (0.0, -0.1)])
def test_tiny_scores_outside_zero_one_are_corrupt(tiny: dict[str, Path], tmp_path: Path, old: float,
                                                  new: float) -> None:
    _out_of_range_blocks(tiny["contract"], tiny["base"], tmp_path, old, new)


def test_tiny_allow_corrupt_excludes_out_of_range_documents(tiny: dict[str, Path], tmp_path: Path) -> None:
    cand = copy_folder(tiny["base"], tmp_path / "cand")
    changed = _rescore(cand, 1.0, 1.05)
    code, output, decision = _gate(tiny["allow"], cand, tiny["base"], tmp_path / "out")
    primary = decision["gates"][0]
    assert primary["details"]["corrupt_excluded"] == len(changed) and primary["verdict"] != "pass", output
    assert code != 0 and decision["decision"] != "release"  # what is left is the baseline's wrong answers


def test_tiny_aggregate_that_is_not_the_samples_mean_warns_with_both_numbers(tiny: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    cand = copy_folder(tiny["base"], tmp_path / "cand")
    _set_aggregate(cand, "exact_match,flexible-extract", 0.9)
    code, output, decision = _gate(tiny["contract"], cand, tiny["base"], tmp_path / "out")
    warning = next(w for w in decision["warnings"] if "results file reports" in w)
    assert warning.startswith("candidate gsm8k: the results file reports exact_match/flexible-extract = 0.9, but its "
                              "120 per-sample values average 0.5;")
    assert decision["gates"][0]["delta"] == 0.0 and code == 3, output  # the samples win: no gain, research_only
    assert not [w for w in decision["warnings"] if "strict-match =" in w]


def test_tiny_honest_pair_has_no_aggregate_warning(tiny: dict[str, Path], tmp_path: Path) -> None:
    _, _, decision = _gate(tiny["contract"], tiny["base"], tiny["base"], tmp_path / "out")
    assert not [w for w in decision["warnings"] if "results file reports" in w]
    assert decision["corrupt"] == []


# --------------------------------------------------------------------------- the real Abel folders
@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    return {m: cached_folder(root, "gsm8k_abel", shared_data, m) for m in ("7b",)}


def test_abel_baseline_against_itself_with_correct_answers_at_1_05_blocks(abel: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    decision = _out_of_range_blocks(CONTRACTS / "abel_gsm8k.yaml", abel["7b"], tmp_path, 1.0, 1.05)
    assert len({c["doc_id"] for c in decision["corrupt"]}) >= 780  # Abel-7B solves 59.7 % of 1,319


def test_abel_baseline_against_itself_with_wrong_answers_at_minus_0_1_blocks(abel: dict[str, Path],
                                                                             tmp_path: Path) -> None:
    decision = _out_of_range_blocks(CONTRACTS / "abel_gsm8k.yaml", abel["7b"], tmp_path, 0.0, -0.1)
    assert "-0.1" in decision["corrupt"][0]["value"]


def test_abel_edited_aggregate_warns_and_the_samples_decide(abel: dict[str, Path], tmp_path: Path) -> None:
    cand = copy_folder(abel["7b"], tmp_path / "cand")
    _set_aggregate(cand, "exact_match,flexible-extract", 0.75)
    code, output, decision = _gate(CONTRACTS / "abel_gsm8k.yaml", cand, abel["7b"], tmp_path / "out")
    warning = next(w for w in decision["warnings"] if "results file reports" in w)
    assert "exact_match/flexible-extract = 0.75" in warning and "1319 per-sample values average 0.59" in warning
    assert decision["decision"] != "release" and code != 0, output
