"""Scoring definitions, harness versions and unrecorded task versions are part of the protocol (issue 32).

The real case: Abel-7B's own GSM8K responses re-scored with `regexes_to_ignore: ["(?s).*"]` in the metric_list,
under the same task name, version, filter names and generation kwargs, read 59.7 % -> 100 % with no protocol
difference; the changed definition is now a protocol difference that names the first differing field.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_gsm8k_abel_folder, cached_folder
from fixtures.synthetic_runs import make_run

from rlgate._core.errors import InputError
from rlgate.contract.loader import load_contract
from rlgate.contract.models import GateConfig, RegressionGate
from rlgate.engine import decide
from rlgate.engine.protocol import first_difference
from rlgate.harness.lmeval.folder import read_lmeval_folder

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"


def _config() -> GateConfig:
    return GateConfig(regression=[RegressionGate(metric="t/acc", max_drop=0.0)], bootstrap_resamples=200)


def test_a_changed_metric_definition_under_the_same_names_is_refused(
        tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> None:
    pytest.importorskip("lm_eval")
    root = tmp_path_factory.getbasetemp()
    base = read_lmeval_folder(cached_folder(root, "gsm8k_abel", shared_data, "7b"))
    rescored = read_lmeval_folder(build_gsm8k_abel_folder(shared_data, "7b", tmp_path_factory.mktemp("rescored"),
                                                          metric_changes={"regexes_to_ignore": ["(?s).*"]}))
    b, c = base.tasks["gsm8k"], rescored.tasks["gsm8k"]
    assert (b.protocol.version, b.protocol.filters, b.protocol.generation_kwargs) == \
        (c.protocol.version, c.protocol.filters, c.protocol.generation_kwargs)  # every name the same
    assert b.value("exact_match", "flexible-extract") == pytest.approx(0.597, abs=0.002)
    assert c.value("exact_match", "flexible-extract") == 1.0
    contract = load_contract(CONTRACTS / "abel_gsm8k.yaml")
    with pytest.raises(InputError) as info:
        decide(contract.gates, base, rescored, seed=7, contract_name=contract.name)
    assert ("gsm8k: scoring definition metric_list[0].regexes_to_ignore [',', '\\\\$', '(?s).*#### ', '\\\\.$'] "
            "(baseline) vs ['(?s).*'] (candidate): the runs score responses differently") in str(info.value)
    allowed = decide(contract.gates, base, rescored, seed=7, contract_name=contract.name,
                     allow_protocol_mismatch=True)
    assert len(allowed.protocol_differences) == 1
    # the same definition on both sides (7B against 13B) is no difference
    other = read_lmeval_folder(cached_folder(root, "gsm8k_abel", shared_data, "13b"))
    assert decide(contract.gates, base, other, seed=7, contract_name=contract.name).protocol_differences == []


def test_first_difference_names_the_path_and_both_values() -> None:
    base = {"metric_list": [{"metric": "exact_match", "ignore_case": True}], "doc_to_target": "{{answer}}"}
    assert first_difference(base, base) is None
    changed = {"metric_list": [{"metric": "exact_match", "ignore_case": False}], "doc_to_target": "{{answer}}"}
    assert first_difference(base, changed) == ("metric_list[0].ignore_case", True, False)
    assert first_difference(base, {**base, "process_results": "def f(): ..."})[0] == "process_results"  # type: ignore[index]
    assert first_difference([1, 2], [1, 2, 3]) == ("", [1, 2], [1, 2, 3])


def test_an_inspect_scorer_argument_difference_is_refused() -> None:
    base, cand = make_run({"t": {"acc": [1.0, 0.0]}}), make_run({"t": {"acc": [1.0, 1.0]}})
    base.tasks["t"].protocol.scoring = {"scorers": [{"name": "match", "options": {"location": "end"}}]}
    cand.tasks["t"].protocol.scoring = {"scorers": [{"name": "match", "options": {"location": "any"}}]}
    with pytest.raises(InputError, match=r"t: scoring definition scorers\[0\]\.options\.location 'end' \(baseline\) "
                                         r"vs 'any' \(candidate\)"):
        decide(_config(), base, cand, seed=0, contract_name="x")


def test_a_major_or_minor_harness_version_difference_is_a_protocol_difference() -> None:
    base, cand = make_run({"t": {"acc": [1.0, 0.0]}}), make_run({"t": {"acc": [1.0, 1.0]}})
    for run, version in ((base, "0.3.0"), (cand, "0.4.13")):
        run.provenance.harness, run.provenance.harness_version = "lm_eval", version
    with pytest.raises(InputError, match=r"run: lm_eval version 0\.3\.0 \(baseline\) vs 0\.4\.13 \(candidate\)"):
        decide(_config(), base, cand, seed=0, contract_name="x")
    base.provenance.harness_version = "0.4.9"  # a patch release scores alike
    assert decide(_config(), base, cand, seed=0, contract_name="x").protocol_differences == []


def test_a_task_version_one_run_did_not_record_is_a_difference_not_a_match() -> None:
    base, cand = make_run({"t": {"acc": [1.0, 0.0]}}), make_run({"t": {"acc": [1.0, 1.0]}})
    base.tasks["t"].protocol.version, cand.tasks["t"].protocol.version = None, "3.0"
    with pytest.raises(InputError, match=r"t: task version unset \(baseline\) vs '3\.0' \(candidate\) \(not recorded "
                                         r"by one run\)"):
        decide(_config(), base, cand, seed=0, contract_name="x")
    base.tasks["t"].protocol.version = "3.0"
    assert decide(_config(), base, cand, seed=0, contract_name="x").protocol_differences == []
