"""The shared decide-and-report path: versions are never compared silently, and every format is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures.synthetic_runs import make_manifest, make_run

from rlgate._core.errors import InputError
from rlgate.app.decide import decide_and_report
from rlgate.app.record import checkpoint_step
from rlgate.harness.vocabulary import load_contract

CONTRACT = """schema_version: 1
name: pipe
baseline: {checkpoint: base}
splits: {test_public: {visibility: nightly}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: t, split: test_public, path: t.yaml}]}
gates:
  primary: {metric: t/acc, min_delta: 0.0}
"""


def _contract(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "t.yaml").write_text("task: t\n", encoding="utf-8")
    path = tmp_path / "c.yaml"
    path.write_text(CONTRACT + extra, encoding="utf-8")
    return path


def test_runs_on_different_benchmark_versions_are_refused(tmp_path: Path) -> None:
    resolved = load_contract(_contract(tmp_path))
    base = make_run({"t": {"acc": [0.0, 1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 0.0, 1.0]}})
    base.provenance.manifest = make_manifest(benchmark_versions={"t": "1"})
    cand.provenance.manifest = make_manifest(benchmark_versions={"t": "2"})
    with pytest.raises(InputError) as info:
        decide_and_report(resolved, base, cand, tmp_path / "out")
    assert "t: baseline 1, candidate 2" in str(info.value)
    assert "allow_protocol_mismatch: true" in str(info.value)
    assert not (tmp_path / "out" / "decision.json").exists()

    allowed = load_contract(_contract(tmp_path, "allow_protocol_mismatch: true\n"))
    outcome = decide_and_report(allowed, base, cand, tmp_path / "out")
    assert any("benchmark version differs: t: baseline 1, candidate 2" in w for w in outcome.decision.warnings)
    assert {"decision", "html", "markdown", "junit"} <= set(outcome.reports)


def test_checkpoint_step_from_common_names() -> None:
    assert checkpoint_step("runs/x/checkpoint-250") == 250
    assert checkpoint_step("/ckpt/global_step_100/actor/huggingface") == 100
    assert checkpoint_step("Qwen/Qwen2.5-1.5B") is None
    assert checkpoint_step(None) is None


def test_unknown_history_scheme_is_bad_input_before_anything_is_written(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLGATE_HISTORY", "redis://cache:6379/0")
    resolved = load_contract(_contract(tmp_path))
    run = make_run({"t": {"acc": [0.0, 1.0, 1.0, 1.0]}})
    with pytest.raises(InputError) as info:
        decide_and_report(resolved, run, run, tmp_path / "out")
    assert "redis://" in info.value.message and "RLGATE_HISTORY" in str(info.value.field)
    assert not (tmp_path / "out" / "decision.json").exists()


PRIVATE_MONITORED = """schema_version: 1
name: pipe
baseline: {checkpoint: base}
splits: {test_private: {visibility: release_gate_only, consult_budget: 1}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: t, split: test_private, path: t.yaml}]}
gates:
  primary: {metric: t/acc, min_delta: 0.0}
monitor: {training_run: grpo-7, logs: [train.csv]}
"""


def test_postgres_history_records_and_never_shows_the_password(tmp_path: Path, pg_url: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from urllib.parse import urlsplit

    from rlgate.store.open import open_history

    password = str(urlsplit(pg_url).password)
    monkeypatch.setenv("RLGATE_HISTORY", pg_url)
    (tmp_path / "t.yaml").write_text("task: t\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text(PRIVATE_MONITORED, encoding="utf-8")
    (tmp_path / "train.csv").write_text("step,reward_mean\n" + "".join(f"{i},{i / 100}\n" for i in range(1, 40)))
    resolved = load_contract(tmp_path / "c.yaml")
    base = make_run({"t": {"acc": [0.0, 1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 0.0, 1.0]}})
    for step in (100, 200):
        outcome = decide_and_report(resolved, base, cand, tmp_path / f"out{step}", checkpoint=f"ckpt/checkpoint-{step}")
    assert outcome.decision.extensions["history"] == pg_url.replace(f":{password}@", ":***@")
    assert any("consulted 2 times" in w for w in outcome.decision.warnings)  # budget 1, seen across decisions
    for written in (tmp_path / "out200").rglob("*"):
        if written.is_file():
            assert password not in written.read_text(encoding="utf-8", errors="replace"), written
    store = open_history(pg_url)
    assert [(r.step, r.contract) for r in store.history("grpo-7")] == [(100, "pipe"), (200, "pipe")]
    assert store.consultations("grpo-7") == {"t": 2}


def test_sources_run_with_the_collector_on_and_the_gate_with_it_paused(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A source may run an LLM judge for minutes: it keeps the collector; the engine and reports pause it."""
    import gc

    import rlgate.engine.decision as engine
    from rlgate.app.sources import Contribution

    seen: dict[str, bool] = {}

    class Probe:
        name = "probe"

        def applies(self, resolved: object) -> bool:
            return True

        def contribute(self, given: object) -> Contribution:
            seen["source"] = gc.isenabled()
            return Contribution()

    real_decide = engine.decide

    def decide(*args: object, **kwargs: object) -> object:
        seen["engine"] = gc.isenabled()
        return real_decide(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "decide", decide)
    resolved = load_contract(_contract(tmp_path))
    run = make_run({"t": {"acc": [0.0, 1.0, 1.0, 1.0]}})
    decide_and_report(resolved, run, run, tmp_path / "out", sources=[Probe()])
    assert seen == {"source": True, "engine": False}
    assert gc.isenabled()


# --------------------------------------------------------------------------- lm-eval folders missing data
@pytest.fixture(scope="module")
def gsm8k_pair(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A clean lm-eval baseline / candidate pair (120 GSM8K-format documents) and a contract gating it."""
    pytest.importorskip("lm_eval")
    import shutil

    import yaml
    from fixtures.lmeval_builders import build_synthetic_folder

    root = tmp_path_factory.mktemp("pair")
    base = build_synthetic_folder(root / "base", "org/base", {"gsm8k": [i % 2 == 0 for i in range(120)]})
    cand = build_synthetic_folder(root / "cand", "org/cand", {"gsm8k": [i % 5 != 0 for i in range(120)]})
    shutil.copy(Path(__file__).parents[1] / "fixtures" / "contracts" / "gsm8k_suite.yaml", root / "suite.yaml")
    gates = {"hard": [{"metric": "gsm8k/exact_match/flexible-extract", "min": 0.5}],
             "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.05}]}
    contract = {"schema_version": 1, "name": "pair", "baseline": {"checkpoint": "org/base"},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"], "gates": gates}
    (root / "c.yaml").write_text(yaml.safe_dump(contract), encoding="utf-8")
    return {"base": base, "cand": cand, "contract": root / "c.yaml"}


def _gate_folders(pair: dict[str, Path], candidate: Path, out: Path) -> list[tuple[str, str]]:
    from rlgate.harness.lmeval.folder import read_lmeval_folder

    outcome = decide_and_report(load_contract(pair["contract"]), read_lmeval_folder(pair["base"]),
                                read_lmeval_folder(candidate), out, record=False)
    return [(outcome.decision.decision, g.verdict) for g in outcome.decision.gates] + [
        ("reason", g.reason) for g in outcome.decision.gates]


def _edit_samples(folder: Path, dest: Path, edit: Any) -> Path:
    import json
    import shutil

    from fixtures.faults import samples_file

    shutil.copytree(folder, dest)
    path = samples_file(dest)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in edit(rows)), encoding="utf-8")
    return dest


def test_clean_lmeval_pair_releases(gsm8k_pair: dict[str, Path], tmp_path: Path) -> None:
    assert _gate_folders(gsm8k_pair, gsm8k_pair["cand"], tmp_path / "out")[:2] == [("release", "pass")] * 2


def test_sample_lines_without_the_metric_never_release(gsm8k_pair: dict[str, Path], tmp_path: Path) -> None:
    """Lines that list exact_match but do not write it: the gates are nodata, not computed over the rest."""
    def drop(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            if row["doc_id"] % 3 == 0:
                del row["exact_match"]
        return rows

    cand = _edit_samples(gsm8k_pair["cand"], tmp_path / "cand", drop)
    found = _gate_folders(gsm8k_pair, cand, tmp_path / "out")
    assert found[:2] == [("block", "nodata")] * 2
    assert "the candidate run has no exact_match/flexible-extract value for 40 of 120 documents" in found[2][1]


def test_samples_file_shorter_than_n_samples_never_releases(gsm8k_pair: dict[str, Path], tmp_path: Path) -> None:
    """results.json says 120 documents were evaluated; the samples file holds 40 (cut): nodata, not a release."""
    cand = _edit_samples(gsm8k_pair["cand"], tmp_path / "cand", lambda rows: [r for r in rows if r["doc_id"] < 40])
    found = _gate_folders(gsm8k_pair, cand, tmp_path / "out")
    assert found[:2] == [("block", "nodata")] * 2
    assert "the candidate run answered 40 of 120 documents of gsm8k" in found[2][1]
    assert "missing e.g. gsm8k:40, gsm8k:41, gsm8k:42" in found[2][1]


def test_regating_a_checkpoint_without_a_step_in_its_name_keeps_its_place(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints named without a step get the next free position; gating one again must not move it behind the
    checkpoints gated after it (the cross-checkpoint rules read the history in that order)."""
    from rlgate.store.open import open_history

    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "h.sqlite"))
    contract = _contract(tmp_path, "monitor: {training_run: run-1}\n")
    resolved = load_contract(contract)
    base = make_run({"t": {"acc": [0.0, 1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 0.0, 1.0]}})
    for i, name in enumerate(["models/alpha", "models/beta", "models/alpha"]):
        decide_and_report(resolved, base, cand, tmp_path / f"out{i}", checkpoint=name)
    store = open_history(tmp_path / "h.sqlite")
    assert [(r.step, r.checkpoint) for r in store.history("run-1")] == [(0, "models/alpha"), (1, "models/beta")]


def test_one_checkpoint_spelled_with_a_trailing_slash_is_recorded_once(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`rlgate check --checkpoint ckpt/step_10/` passes the text as typed, `rlgate gate --candidate` a Path: both
    name one checkpoint, which the history must hold once (else the rules compare it with itself)."""
    from rlgate.store.open import open_history

    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "h.sqlite"))
    resolved = load_contract(_contract(tmp_path, "monitor: {training_run: run-1}\n"))
    base = make_run({"t": {"acc": [0.0, 1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 0.0, 1.0]}})
    for i, name in enumerate(["ckpt/step_9", "ckpt/step_10/", "./ckpt/step_10", "ckpt/step_10"]):
        decide_and_report(resolved, base, cand, tmp_path / f"out{i}", checkpoint=name)
    store = open_history(tmp_path / "h.sqlite")
    assert [(r.step, r.checkpoint) for r in store.history("run-1")] == [(9, "ckpt/step_9"), (10, "ckpt/step_10")]


def test_gate_frees_the_runs_before_it_writes_the_reports(gsm8k_pair: dict[str, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The reports are written from the report model alone: `rlgate gate` lets go of both runs' records first
    (at 10^6 documents they are ~1 GB, and the writing was the gate's peak), and decides as deciding and
    writing in one step (`decide_and_report`) does."""
    import weakref

    import rlgate.app.gate as gate_module
    import rlgate.report.io as report_io

    read: list[weakref.ref[Any]] = []
    real_read, real_write = gate_module.read_results, report_io.write_model

    def reading(*args: Any, **kwargs: Any) -> Any:
        run = real_read(*args, **kwargs)
        read.extend([weakref.ref(run), weakref.ref(run.tasks["gsm8k"].samples[0])])
        return run

    alive: list[bool] = []

    def writing(*args: Any, **kwargs: Any) -> Any:
        alive.extend(ref() is not None for ref in read)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(gate_module, "read_results", reading)
    monkeypatch.setattr(report_io, "write_model", writing)
    outcome = gate_module.gate(gsm8k_pair["contract"], gsm8k_pair["cand"], tmp_path / "out",
                               baseline=gsm8k_pair["base"])
    assert len(read) == 4 and alive == [False] * 4
    gates = outcome.decision.gates
    assert [(outcome.decision.decision, g.verdict) for g in gates] + [("reason", g.reason) for g in gates] == \
        _gate_folders(gsm8k_pair, gsm8k_pair["cand"], tmp_path / "together")
    assert {"model", "decision", "html", "markdown", "junit", "summary"} <= set(outcome.reports)
