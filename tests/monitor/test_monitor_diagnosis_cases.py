"""The labelled failure set: every published shape gets the root-cause domain its source names."""

from __future__ import annotations

import pytest
from fixtures.diagnosis_cases import CASES, Case, diagnose_case

from rlgate.monitor.findings import FAULT_DOMAINS


def test_the_set_is_large_and_labelled() -> None:
    assert len(CASES) >= 15
    assert len({c.name for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.expected is None or case.expected in FAULT_DOMAINS
        assert len(case.source) > 20
    assert {c.expected for c in CASES} >= set(FAULT_DOMAINS)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_root_cause_domain(case: Case) -> None:
    diagnosis = diagnose_case(case)
    if case.expected is None:
        assert diagnosis is None
        return
    assert diagnosis is not None, f"{case.name}: no diagnosis"
    assert diagnosis.domain == case.expected, diagnosis.summary
    assert diagnosis.candidates[0].domain == case.expected and diagnosis.evidence


def test_truncation_is_configuration_not_reward_and_explains_the_length_correlation() -> None:
    case = next(c for c in CASES if c.name == "configuration_truncation_limit")
    diagnosis = diagnose_case(case)
    assert diagnosis is not None and diagnosis.rule == "truncation_high"
    assert "max_response_length" in diagnosis.summary
    assert "length_reward_correlation" in diagnosis.candidates[0].explains
    assert all(c.domain != "reward" for c in diagnosis.candidates)
