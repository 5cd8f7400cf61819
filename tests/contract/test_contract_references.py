"""`baseline:` as one reference or as named references (sft, previous_release, reference) and `suite_health:`:
each form validated as written, so an error names the key that is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contract.models import Baseline, Reference
from rlgate.harness.vocabulary import load_contract

SUITE = "schema_version: 1\nname: s\ntasks:\n  - {task: gsm8k, split: test_public}\n"


def _contract(tmp_path: Path, baseline: str, extra: str = "") -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE)
    for name in ("base", "prev", "ref"):
        (tmp_path / name).mkdir(exist_ok=True)
    path = tmp_path / "c.yaml"
    path.write_text(f"schema_version: 1\nname: t\nbaseline:\n{baseline}"
                    "splits:\n  test_public: {visibility: nightly}\nsuites: [suite.yaml]\n"
                    "gates:\n  primary: {metric: gsm8k/exact_match/flexible-extract}\n" + extra)
    return path


def test_single_baseline_is_unchanged(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path, "  results: base\n"))
    assert isinstance(rc.contract.baseline, Baseline) and rc.contract.references == {}
    assert rc.baseline_results == tmp_path / "base" and rc.reference_results == {}
    assert rc.contract.health is None  # one baseline and no suite_health: no check, reports unchanged


def test_named_references_resolve_in_order_and_the_first_gated_one_is_main(tmp_path: Path) -> None:
    rc = load_contract(_contract(tmp_path, "  reference: {results: ref, role: reported}\n  sft: {checkpoint: org/sft}\n"
                                 "  previous_release: {results: prev}\n"))
    assert list(rc.contract.references) == ["reference", "sft", "previous_release"]
    assert rc.contract.main_baseline == Reference(checkpoint="org/sft")
    assert rc.baseline_results is None  # the main one is evaluated from its checkpoint by `rlgate check`
    assert rc.reference_results == {"reference": tmp_path / "ref", "previous_release": tmp_path / "prev"}
    assert rc.contract.health is not None and rc.contract.health.band == (0.4, 0.8)


@pytest.mark.parametrize(("baseline", "extra", "message", "line"), [
    ("  sft: {result: base}\n", "", "baseline.sft.result: unknown key 'result'", 4),
    ("  result: base\n", "", "baseline.result: unknown key 'result'", 4),
    ("  sft: {results: base, role: reported}\n", "", "every reference is role: reported", 4),
    ("  sft: {results: base}\n  prev: {checkpoint: org/prev}\n", "", "reference 'prev' has no results", 5),
    ("  'my ref': {results: base}\n", "", "reference name 'my ref'", 4),
    ("  results: base\n", "suite_health: {band: [0.8, 0.4]}\n", "give [low, high] with 0 <= low < high <= 1", 10),
])
def test_bad_references_are_one_located_error(tmp_path: Path, baseline: str, extra: str, message: str,
                                              line: int) -> None:
    with pytest.raises(InputError) as caught:
        load_contract(_contract(tmp_path, baseline, extra))
    assert message in str(caught.value) and caught.value.line == line
