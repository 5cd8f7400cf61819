"""Threshold policy: the YAML file equals the built-in defaults; overrides are checked key by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contract.models import MonitorSpec
from rlgate.monitor.api import resolve_policy
from rlgate.monitor.policy import MonitorPolicy, apply_overrides, default_policy_path, load_policy_file


def test_default_file_matches_the_built_in_defaults(repo_root: Path) -> None:
    path = repo_root / "gates" / "monitor_default.yaml"
    assert default_policy_path() == path
    loaded = load_policy_file(path)
    assert loaded.model_dump(exclude={"description"}) == MonitorPolicy().model_dump(exclude={"description"})
    text = path.read_text()
    for source in ("verl docs", "Spinning Up", "0.015", "target_kl"):
        assert source in text


def test_overrides_change_single_thresholds() -> None:
    policy = apply_overrides(MonitorPolicy(), {"truncation_high": {"max": 0.2}, "primary_below_best": {"max_drop": 2}})
    assert policy.rules.truncation_high.max == 0.2
    assert policy.history.primary_below_best.max_drop == 2.0
    assert policy.rules.length_blowup.max_ratio == 2.0


@pytest.mark.parametrize(("overrides", "field", "fix"), [
    ({"truncation_hgh": {"max": 0.2}}, "monitor.overrides.truncation_hgh", "did you mean 'truncation_high'?"),
    ({"truncation_high": {"maximum": 0.2}}, "monitor.overrides.truncation_high.maximum", "did you mean 'max'?"),
    ({"truncation_high": 0.2}, "monitor.overrides.truncation_high", "e.g. truncation_high: {enabled: false}"),
])
def test_bad_overrides_name_the_field_and_the_fix(overrides: dict, field: str, fix: str) -> None:
    with pytest.raises(InputError) as raised:
        apply_overrides(MonitorPolicy(), overrides, origin="contract.yaml")
    assert raised.value.field == field and raised.value.fix == fix


def test_bad_override_type_is_an_input_error() -> None:
    with pytest.raises(InputError) as raised:
        apply_overrides(MonitorPolicy(), {"length_blowup": {"severity": "fatal"}})
    assert raised.value.field == "monitor.overrides.length_blowup.severity"
    assert "fatal" in raised.value.message


def test_partial_policy_file_inherits_and_errors_are_located(tmp_path: Path) -> None:
    good = tmp_path / "strict.yaml"
    good.write_text("schema_version: 1\nname: strict\nrules:\n  length_blowup:\n    max_ratio: 1.5\n")
    policy, name = resolve_policy(MonitorSpec(policy="strict.yaml", overrides={"kl_spike": {"factor": 4}}), tmp_path)
    assert policy.rules.length_blowup.max_ratio == 1.5 and policy.rules.kl_spike.factor == 4.0
    assert policy.rules.truncation_high.max == 0.1 and name.endswith("+ contract overrides")
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\nrules:\n  length_blowup:\n    max_ration: 1.5\n")
    with pytest.raises(InputError) as raised:
        load_policy_file(bad)
    assert (raised.value.line, raised.value.fix) == (4, "did you mean 'max_ratio'?")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "nan"])
def test_a_nan_or_inf_threshold_is_an_input_error(value: object) -> None:
    """A nan threshold compares false both ways: the rule would never fire."""
    with pytest.raises(InputError) as raised:
        apply_overrides(MonitorPolicy(), {"truncation_high": {"max": value}}, origin="contract.yaml")
    assert raised.value.field == "monitor.overrides.truncation_high.max"
    assert "finite number" in raised.value.message and raised.value.fix


def test_a_nan_threshold_in_a_policy_file_is_located(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\nrules:\n  truncation_high:\n    max: .nan\n")
    with pytest.raises(InputError) as raised:
        load_policy_file(bad)
    assert raised.value.line == 4 and "finite number" in raised.value.message


def test_a_gate_policy_or_contract_given_as_monitor_policy_says_what_it_is(repo_root: Path) -> None:
    with pytest.raises(InputError) as info:
        load_policy_file(repo_root / "gates" / "release_default.yaml")
    assert str(info.value) == (
        f"{repo_root}/gates/release_default.yaml:2:1: this file is a gate policy (it has alpha, power, "
        "bootstrap_resamples, decision), not a monitor policy\n  fix: monitor.policy takes a monitor threshold file "
        "such as gates/monitor_default.yaml (window, rules, history); a gate policy belongs under gates.use")
