"""A gate source from another package, registered only through the `rlgate.plugins` entry point
(`gate_source.<name>`), joins every decision: its verdict decides beside the contract's gates and its report
is attached to decision.json under its name, with no code in rlgate."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_synthetic_folder
from fixtures.plugins import installed
from typer.testing import CliRunner

from rlgate.app.sources import GATE_SOURCES, default_sources
from rlgate.cli.app import app

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"

PLUGIN = '''
"""A licence check: a candidate whose model name says `unlicensed` is blocked."""
from pydantic import BaseModel

from rlgate.app.sources import Contribution
from rlgate.engine.models import GateVerdict


class LicenceReport(BaseModel):
    schema_version: int = 1
    model: str
    licensed: bool


class LicenceSource:
    name = "licence"

    def applies(self, resolved):
        return True

    def contribute(self, given):
        model = given.candidate.provenance.model or ""
        ok = "unlicensed" not in model
        verdict = GateVerdict(name="licence", kind="hard", metric="licence", verdict="pass" if ok else "fail",
                              outcome="pass" if ok else "hard_fail", effect="release",
                              reason="licensed" if ok else f"fail: {model} has no licence")
        return Contribution([verdict], LicenceReport(model=model, licensed=ok))
'''


@pytest.fixture
def licence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with installed(tmp_path / "site", "rlgate_licence", PLUGIN, {"gate_source.licence": "rlgate_licence:LicenceSource"},
                   monkeypatch, GATE_SOURCES):
        yield tmp_path


def _gate(root: Path, candidate_model: str) -> tuple[int, str, dict]:
    pytest.importorskip("lm_eval")
    build_synthetic_folder(root / "base", "org/base", {"gsm8k": [True] * 60 + [False] * 40})
    cand = build_synthetic_folder(root / "cand", candidate_model, {"gsm8k": [True] * 61 + [False] * 39})
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", root / "suite.yaml")
    (root / "c.yaml").write_text(
        "schema_version: 1\nname: tiny\nbaseline:\n  results: base\nsplits:\n  test_public: {visibility: nightly}\n"
        "suites: [suite.yaml]\ngates:\n  regression: [{metric: gsm8k/exact_match/flexible-extract, max_drop: 0.1}]\n")
    result = CliRunner().invoke(app, ["gate", str(root / "c.yaml"), "--candidate", str(cand), "--out",
                                      str(root / "out")], env={"RLGATE_HISTORY": str(root / "h.sqlite")})
    decision = json.loads((root / "out" / "decision.json").read_text()) if result.exit_code != 2 else {}
    return result.exit_code, result.output, decision


def test_the_entry_point_source_is_registered_only_there(licence: Path) -> None:
    assert "licence" not in GATE_SOURCES.entries and "licence" in GATE_SOURCES.names()
    assert [source.name for source in default_sources()] == ["monitor", "contamination", "judge", "licence"]


def test_the_entry_point_source_decides_end_to_end(licence: Path) -> None:
    code, output, decision = _gate(licence / "ok", "org/licensed")
    assert code == 0, output
    assert [g["name"] for g in decision["gates"]][-1] == "licence"
    assert decision["extensions"]["licence"] == {"schema_version": 1, "model": "org/licensed", "licensed": True}
    code, output, decision = _gate(licence / "bad", "org/unlicensed")
    assert code == 1 and decision["decision"] == "block", output
    assert decision["deciding_gates"] == ["licence"] and "org/unlicensed has no licence" in decision["summary"]


def test_without_the_package_only_the_built_in_sources_decide() -> None:
    assert [source.name for source in default_sources()] == ["monitor", "contamination", "judge"]
