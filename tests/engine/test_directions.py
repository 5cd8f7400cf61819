"""Directions come from the harness or the contract, never from a results file (issue 32), on the real Abel folders.

Abel-7B is 6.7 points below Abel-13B on GSM8K: as candidate against 13B it blocks with primary_regression. A
results file that says `higher_is_better: {gsm8k: {exact_match: false}}` once turned that drop into a gain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures.faults import copy_folder, edit_results
from fixtures.lmeval_builders import cached_folder
from fixtures.synthetic_runs import make_run

from rlgate._core.errors import InputError
from rlgate.contract.loader import load_contract
from rlgate.contract.models import GateConfig, PrimaryGate
from rlgate.engine import decide
from rlgate.harness.lmeval.folder import read_lmeval_folder

pytest.importorskip("lm_eval")
CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"


def _lower_is_better(doc: dict[str, Any]) -> None:
    doc["higher_is_better"]["gsm8k"]["exact_match"] = False


@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    folders = {m: cached_folder(root, "gsm8k_abel", shared_data, m) for m in ("7b", "13b")}
    edited = copy_folder(folders["7b"], tmp_path_factory.mktemp("edited") / "7b")
    edit_results(edited, _lower_is_better)
    return {**folders, "7b_edited": edited}


def test_a_results_file_flipping_the_direction_is_refused_and_never_releases(abel: dict[str, Path]) -> None:
    contract = load_contract(CONTRACTS / "abel_gsm8k.yaml")
    base, cand = read_lmeval_folder(abel["13b"]), read_lmeval_folder(abel["7b_edited"])
    assert cand.tasks["gsm8k"].higher_is_better["exact_match"] is False  # the file's own flag, as written
    with pytest.raises(InputError) as info:
        decide(contract.gates, base, cand, seed=7, contract_name=contract.name)
    assert "gsm8k: results file higher_is_better.exact_match True (baseline) vs False (candidate)" in str(info.value)
    # allowed by the contract, the difference is recorded and the harness's direction decides: the drop blocks
    decision = decide(contract.gates, base, cand, seed=7, contract_name=contract.name, allow_protocol_mismatch=True)
    primary = next(g for g in decision.gates if g.kind == "primary")
    assert decision.decision == "block" and primary.outcome == "primary_regression" and primary.higher_is_better
    assert primary.delta == pytest.approx(-0.0675, abs=0.001)
    assert any("the candidate results file says exact_match is lower is better for gsm8k; the harness says higher "
               "is better" in w for w in decision.warnings), decision.warnings


def test_the_unedited_pair_blocks_and_raises_no_direction_warning(abel: dict[str, Path]) -> None:
    contract = load_contract(CONTRACTS / "abel_gsm8k.yaml")
    decision = decide(contract.gates, read_lmeval_folder(abel["13b"]), read_lmeval_folder(abel["7b"]), seed=7,
                      contract_name=contract.name)
    primary = next(g for g in decision.gates if g.kind == "primary")
    assert decision.decision == "block" and primary.outcome == "primary_regression"
    assert decision.protocol_differences == [] and not any("higher_is_better" in w for w in decision.warnings)


def test_both_files_flipped_alike_are_only_warned_and_the_harness_direction_decides(
        abel: dict[str, Path], tmp_path: Path) -> None:
    contract = load_contract(CONTRACTS / "abel_gsm8k.yaml")
    base_folder = copy_folder(abel["13b"], tmp_path / "13b")
    edit_results(base_folder, _lower_is_better)
    decision = decide(contract.gates, read_lmeval_folder(base_folder), read_lmeval_folder(abel["7b_edited"]), seed=7,
                      contract_name=contract.name)
    assert decision.decision == "block" and decision.protocol_differences == []
    assert {w.split(" results file")[0] for w in decision.warnings if "is ignored" in w} == {"the baseline",
                                                                                           "the candidate"}


def test_the_contract_direction_wins_and_a_disagreeing_file_is_named() -> None:
    base = make_run({"t": {"errors": [1.0, 1.0, 0.0, 1.0] * 25}})
    cand = make_run({"t": {"errors": [0.0, 0.0, 0.0, 1.0] * 25}})
    for run in (base, cand):
        run.tasks["t"].higher_is_better["errors"] = True  # both files: more errors are better
    config = GateConfig(primary=PrimaryGate(metric="t/errors", min_delta=0.0, higher_is_better=False),
                        bootstrap_resamples=200)
    decision = decide(config, base, cand, seed=0, contract_name="x")
    assert decision.gates[0].verdict == "pass" and decision.gates[0].higher_is_better is False
    assert sum("the contract says lower is better" in w for w in decision.warnings) == 2
