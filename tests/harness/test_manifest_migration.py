"""Folders written by rlgate 0.1 (run manifest v1, `lm_eval_model`) still read and gate.

`tests/fixtures/manifest_v1/` was written by rlgate 0.1's `rlgate eval --responses` (commit e8a2ea5)
and is committed unchanged but for the contract path, so this test reads a real v1 folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.harness import read_results
from rlgate.results.manifest import MANIFEST_SCHEMA_VERSION, load_manifest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "manifest_v1"


def test_v1_manifest_migrates_on_read() -> None:
    raw = json.loads((FIXTURE / "v1run" / "run_manifest.json").read_text())
    assert raw["schema_version"] == 1 and raw["lm_eval_model"] == "rlgate-replay"
    manifest = load_manifest(FIXTURE / "v1run" / "run_manifest.json")
    assert manifest.schema_version == MANIFEST_SCHEMA_VERSION == 2
    assert manifest.harness == "lm_eval" and manifest.model_spec == {"lm_eval_model": "rlgate-replay"}
    assert manifest.harness_version == raw["library_versions"]["lm_eval"]
    assert manifest.benchmark_versions == {}  # v1 did not record them: nothing to compare, nothing invented


def test_v1_folder_reads_through_the_registry_with_its_manifest() -> None:
    run = read_results(FIXTURE / "v1run")
    assert run.provenance.harness == "lm_eval"
    assert run.provenance.manifest is not None and run.provenance.manifest.schema_version == 2
    assert [s.doc_id for s in run.tasks["gsm8k"].samples] == [0, 1, 2, 3]


def test_v1_folder_gates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "h.sqlite"))
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project)
    result = CliRunner().invoke(app, ["gate", str(project / "c.yaml"), "--baseline", str(project / "v1run"),
                                      "--candidate", str(project / "v1run"), "--out", str(tmp_path / "out")])
    assert result.exit_code in (0, 3), result.output  # same run twice: no gain, so not a release on the primary
    decision = json.loads((tmp_path / "out" / "decision.json").read_text())
    assert decision["gates"][0]["metric"] == "gsm8k/exact_match/flexible-extract"


def test_newer_and_corrupt_manifests_are_located_errors(tmp_path: Path) -> None:
    newer = tmp_path / "run_manifest.json"
    data = json.loads((FIXTURE / "v1run" / "run_manifest.json").read_text())
    newer.write_text(json.dumps({**data, "schema_version": 9}))
    with pytest.raises(InputError, match="newer than this rlgate reads") as info:
        load_manifest(newer)
    assert info.value.file is not None and "run_manifest.json" in str(info.value.file)
    newer.write_text('{"schema_version": 2, "contract": ')
    with pytest.raises(InputError, match="not valid JSON"):
        load_manifest(newer)


def test_unreadable_and_odd_v1_manifests_are_located_errors(tmp_path: Path) -> None:
    manifest = tmp_path / "run_manifest.json"
    data = json.loads((FIXTURE / "v1run" / "run_manifest.json").read_text())
    for text, needle in (('{"schema_version": 2, "x": 1' + "0" * 5000 + "}", "not readable JSON"),
                         ('{"schema_version": 2, "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "not readable JSON"),
                         (json.dumps({**data, "library_versions": [1]}), "library_versions")):
        manifest.write_text(text)
        with pytest.raises(InputError, match=needle) as info:
            load_manifest(manifest)
        assert info.value.file == manifest
