"""Benchmark versions and anchor sets; private samples withheld by what run manifests record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from badcase_helpers import one_task_run
from fixtures.private_contract import private_contract
from fixtures.synthetic_runs import make_manifest

from rlgate._core.errors import InputError
from rlgate.badcases.versioning import anchor_shifts, load_anchor_set
from rlgate.contract.loader import ResolvedContract
from rlgate.engine.private import private_leaf_tasks
from rlgate.engine.versions import MANIFEST_KEY, check_versions
from rlgate.results.models import RunResult, SampleRecord


@pytest.fixture()
def resolved(tmp_path: Path) -> ResolvedContract:
    return private_contract(tmp_path)


def _versioned(versions: dict[str, str]) -> RunResult:
    run = one_task_run("m", "gsm8k", [])
    run.provenance.manifest = make_manifest(benchmark_versions=versions)
    return run


def test_runs_on_different_benchmark_versions_are_never_compared_silently(resolved: ResolvedContract) -> None:
    recorded = resolved.benchmark_versions()
    assert recorded == {"gsm8k": "core@3", "mmlu_pro": "core@3/mmlu_pro@2024-06"}
    same = check_versions(_versioned(recorded), _versioned(recorded))
    assert same.differences == [] and not same.allowed
    newer = dict(recorded, mmlu_pro="core@3/mmlu_pro@2024-09")
    with pytest.raises(InputError, match=r"different benchmark versions.*mmlu_pro: baseline core@3/mmlu_pro@2024-06"):
        check_versions(_versioned(recorded), _versioned(newer))
    allowed = check_versions(_versioned(recorded), _versioned(newer), allow=True)
    assert allowed.allowed and len(allowed.differences) == 1
    # a baseline without a manifest (lm-eval's own folder) has no known version: a difference, never a match
    unversioned = one_task_run("a", "gsm8k", [])
    with pytest.raises(InputError, match=r"gsm8k: baseline not recorded \(no run manifest\), candidate core@3"):
        check_versions(unversioned, _versioned(recorded))
    # mmlu_pro is not in the baseline at all (coverage's business, not a version's)
    assert check_versions(unversioned, _versioned(recorded), allow=True).differences == [
        "gsm8k: baseline not recorded (no run manifest), candidate core@3"]
    assert check_versions(_versioned(recorded), unversioned, allow=True).differences == [
        "gsm8k: baseline core@3, candidate not recorded (no run manifest)"]


def _scored(task: str, correct: list[bool], prefix: str) -> list[SampleRecord]:
    return [SampleRecord(doc_id=i, doc_hash=f"{prefix}{i}", filtered={"none": "x"},
                         scores={"none": {"acc": float(ok)}}) for i, ok in enumerate(correct)]


def test_anchor_set_flags_a_difficulty_change(tmp_path: Path) -> None:
    anchors = [True] * 70 + [False] * 30  # the same 100 anchor documents in both versions
    old = one_task_run("m", "arc", _scored("arc", anchors, "a") + [
        s.model_copy(update={"doc_id": s.doc_id + 100}) for s in _scored("arc", [True] * 70 + [False] * 30, "old")])
    harder = one_task_run("m", "arc", _scored("arc", anchors, "a") + [
        s.model_copy(update={"doc_id": s.doc_id + 100}) for s in _scored("arc", [True] * 35 + [False] * 65, "new")])
    file = tmp_path / "anchors.json"
    file.write_text(json.dumps({"schema_version": 1, "tasks": {"arc": [f"a{i}" for i in range(100)]}}))
    anchor_set = load_anchor_set(file)
    [shift] = anchor_shifts(old, harder, anchor_set)
    assert shift.flagged and shift.anchor_delta == 0 and shift.difficulty_shift == pytest.approx(-0.35)
    assert "harder" in shift.text
    [stable] = anchor_shifts(old, old, anchor_set)
    assert not stable.flagged and stable.difficulty_shift == 0


def test_bad_anchor_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_anchor_set(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"tasks": ')
    with pytest.raises(InputError, match="not valid JSON"):
        load_anchor_set(tmp_path / "bad.json")
    (tmp_path / "empty.json").write_text('{"tasks": {}}')
    with pytest.raises(InputError):
        load_anchor_set(tmp_path / "empty.json")


def test_manifest_fields_let_badcases_withhold_private_samples_without_a_contract(
        resolved: ResolvedContract) -> None:
    from rlgate.badcases.checks import _manifest_visibility

    # what a harness records in every run manifest (RunManifest.benchmark_versions / task_visibility)
    fields = {MANIFEST_KEY: resolved.benchmark_versions(),
              "task_visibility": {t.name: t.visibility for t in resolved.tasks}}
    assert fields["task_visibility"] == {"gsm8k": "iteration", "mmlu_pro": "release_gate_only"}
    run = one_task_run("m", "mmlu_pro_law", [])
    run.groups = {"mmlu_pro": ["mmlu_pro_law"]}
    run.provenance.manifest = make_manifest(benchmark_versions=fields[MANIFEST_KEY],
                                            task_visibility=fields["task_visibility"])
    assert private_leaf_tasks(None, [run], _manifest_visibility([run, None])) == {"mmlu_pro", "mmlu_pro_law"}
    assert check_versions(run, run).baseline == fields[MANIFEST_KEY]


def test_an_anchor_set_that_is_a_folder_or_binary_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe{}")
    for name in ("folder.json", "binary.json"):
        with pytest.raises(InputError) as info:
            load_anchor_set(tmp_path / name)
        assert str(info.value.file) == str(tmp_path / name) and info.value.fix
