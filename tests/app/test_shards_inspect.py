"""Shards of an inspect agent task (`rlgate eval --shard K/N` + `rlgate merge`): the merged logs are the
single-process run's (every sample and epoch once, under the id the whole dataset gives it), the gate decides the
same, and shard logs that cannot be one run are refused naming the log (exit 2). The shipped toolbox task (24
orders) under scripted mockllm policies, two epochs each, in 5 shards (uneven ranges)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")

from rlgate.cli.app import app
from rlgate.demo.agent import write_project
from rlgate.harness import read_results

runner = CliRunner()
N, SAMPLES, EPOCHS = 5, 24, 2
TIMING = {"working_time_s", "time_to_success"}  # wall-clock: differs between any two runs


def _cli(*args: str) -> Any:
    return runner.invoke(app, list(args), env={"RLGATE_HISTORY": ""})


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inspect-shards")
    contract = write_project(root).contract
    data = yaml.safe_load(contract.read_text())
    data["protocol"]["sampling"]["n"] = EPOCHS
    contract.write_text(yaml.safe_dump(data))
    folders: dict[str, Path] = {"root": root, "contract": contract}
    for role in ("baseline", "candidate"):
        folders[role] = root / role
        result = _cli("eval", str(contract), "--checkpoint", f"mockllm/toolbox-{role}", "--out", str(root / role),
                      "--cache", str(root / "cache"))
        assert result.exit_code == 0, result.output
    for k in range(1, N + 1):
        folders[f"s{k}"] = root / f"shard{k}"
        result = _cli("eval", str(contract), "--checkpoint", "mockllm/toolbox-candidate", "--out",
                      str(folders[f"s{k}"]), "--cache", str(root / f"cache{k}"), "--shard", f"{k}/{N}")
        assert result.exit_code == 0, result.output
    folders["merged"] = root / "merged"
    result = _cli("merge", *(str(folders[f"s{k}"]) for k in (3, 1, 5, 2, 4)), "--out", str(folders["merged"]),
                  "--cache", str(root / "cache-merge"))
    assert result.exit_code == 0, result.output
    assert f"merged {N} shards: {SAMPLES * EPOCHS} documents" in result.output
    return folders


def _records(folder: Path) -> list[dict[str, Any]]:
    task = read_results(folder).tasks["toolbox"]
    out = []
    for sample in task.samples:
        record = sample.model_dump(exclude={"trajectory"})
        record["scores"] = {f: {m: v for m, v in table.items() if m not in TIMING}
                            for f, table in record["scores"].items()}
        assert sample.trajectory is not None
        record["trajectory"] = sample.trajectory.model_dump(exclude=TIMING)
        out.append(record)
    return out


def _inspect_results(folder: Path) -> dict[str, Any]:
    """What inspect itself reports in the log: counts, each scorer's metrics, the dataset's ids and the limit."""
    from inspect_ai.log import read_eval_log

    [file] = (folder / "logs").glob("*.eval")
    log = read_eval_log(str(file))
    assert log.results is not None
    return {"total": log.results.total_samples, "completed": log.results.completed_samples,
            "scores": {s.name: {m: v.value for m, v in s.metrics.items()} for s in log.results.scores},
            "ids": log.eval.dataset.sample_ids, "samples": log.eval.dataset.samples, "limit": log.eval.config.limit,
            "epochs": log.eval.config.epochs, "metadata": log.eval.metadata, "status": log.status}


def test_merged_logs_equal_the_single_process_run(runs: dict[str, Path]) -> None:
    one, merged = _records(runs["candidate"]), _records(runs["merged"])
    assert len(merged) == SAMPLES * EPOCHS
    assert one == merged  # every sample and epoch, its scores and its trajectory
    assert _inspect_results(runs["candidate"]) == _inspect_results(runs["merged"])  # recomputed by inspect
    a, b = (json.loads((runs[n] / "run_manifest.json").read_text())["tasks"][0] for n in ("candidate", "merged"))
    for key in ("task", "documents", "requests", "generated", "cached", "tokens_out", "drops", "expected_documents"):
        assert a[key] == b[key], key


def test_the_gate_decides_the_same_on_the_merged_run(runs: dict[str, Path]) -> None:
    decisions = []
    for candidate in ("candidate", "merged"):
        out = runs["root"] / f"gate-{candidate}"
        result = _cli("gate", str(runs["contract"]), "--baseline", str(runs["baseline"]), "--candidate",
                      str(runs[candidate]), "--out", str(out))
        assert result.exit_code == 3, result.output  # research_only: success bought with twice the tokens
        decision = json.loads((out / "decision.json").read_text())
        decisions.append((decision["decision"], [(g["kind"], g["metric"], g["verdict"]) for g in decision["gates"]]))
    assert decisions[0] == decisions[1]


def test_each_shard_runs_its_range_under_the_whole_datasets_ids(runs: dict[str, Path]) -> None:
    seen: list[str] = []
    for k in range(1, N + 1):
        shard = json.loads((runs[f"s{k}"] / "shard.json").read_text())
        start, stop = SAMPLES * (k - 1) // N, SAMPLES * k // N
        assert shard["documents"] == {"toolbox": list(range(start, stop))} and shard["base"] == {"toolbox": SAMPLES}
        ids = [s.doc_id for s in read_results(runs[f"s{k}"]).tasks["toolbox"].samples]
        assert len(ids) == (stop - start) * EPOCHS
        seen += ids
    assert sorted(seen) == sorted(r["doc_id"] for r in _records(runs["candidate"]))


def _copy_shards(runs: dict[str, Path], tmp_path: Path) -> list[Path]:
    copies = []
    for k in range(1, N + 1):
        copies.append(tmp_path / f"s{k}")
        shutil.copytree(runs[f"s{k}"], copies[-1])
    return copies


def _merge_refused(runs: dict[str, Path], shards: list[Path], tmp_path: Path) -> str:
    result = _cli("merge", *map(str, shards), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def test_a_log_of_another_shards_range_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    shards = _copy_shards(runs, tmp_path)
    [own] = (shards[0] / "logs").glob("*.eval")
    [other] = (shards[1] / "logs").glob("*.eval")
    own.unlink()
    shutil.copyfile(other, shards[0] / "logs" / other.name)
    output = _merge_refused(runs, shards, tmp_path)
    assert "rlgate_shard" in output and other.name in output


def _rewrite(log_file: Path, change: Any) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(log_file))
    change(log)
    write_eval_log(log, str(log_file), format="eval")


def test_a_shard_log_missing_a_sample_or_unfinished_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    shards = _copy_shards(runs, tmp_path)
    [log] = (shards[2] / "logs").glob("*.eval")
    _rewrite(log, lambda lg: setattr(lg, "samples", lg.samples[:-1]))
    output = _merge_refused(runs, shards, tmp_path)
    assert log.name in output and "each once" in output
    _rewrite(log, lambda lg: setattr(lg, "status", "error"))
    assert "ended 'error'" in _merge_refused(runs, shards, tmp_path)


def test_a_shard_that_holds_no_sample_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    result = _cli("eval", str(runs["contract"]), "--checkpoint", "mockllm/toolbox-candidate", "--out",
                  str(tmp_path / "s"), "--cache", str(tmp_path / "cache"), "--shard", f"1/{SAMPLES + 1}")
    assert result.exit_code == 2, result.output
    assert "holds no sample" in result.output


def test_the_merge_runs_nothing_so_needs_no_sandbox(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandboxed task's shards run where Docker is; the machine that joins their logs needs none."""
    from rlgate._core.errors import InputError
    from rlgate.app.shards import checkpoint_of
    from rlgate.harness.inspect import InspectHarness, catalog
    from rlgate.harness.vocabulary import load_contract
    from rlgate.results.shard import read_shard

    monkeypatch.setattr(catalog, "missing", lambda task: ["Docker (the daemon does not answer)"])
    resolved = load_contract(runs["contract"])
    checkpoint = checkpoint_of(read_shard(runs["s1"]))
    args = (resolved, resolved.tasks, runs["root"] / "plan", runs["root"] / "cache")
    with pytest.raises(InputError, match="cannot run here"):
        InspectHarness().plan(*args, checkpoint=checkpoint)
    assert InspectHarness().plan(*args, checkpoint=checkpoint, cached_only=True).cached_only
