"""The shared decide-and-report path: versions are never compared silently, and every format is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.synthetic_runs import make_run

from rlgate.contract.loader import load_contract
from rlgate.errors import InputError
from rlgate.pipeline import checkpoint_step, decide_and_report

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
    base.provenance.manifest = {"benchmark_versions": {"t": "1"}}
    cand.provenance.manifest = {"benchmark_versions": {"t": "2"}}
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
    from rlgate.pipeline.sources import Contribution

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
