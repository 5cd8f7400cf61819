"""Steps logged twice are a conflict: warned with counts, and the contract chooses first, last or refuse
(default refuse: one located problem, the monitor gate `error`), never a silent pick; an unreadable log
through `rlgate gate` is the monitor gate's `error` with every other output written; run metadata naming
another model is warned; keys that look canonical are suggested, never applied."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures.synthetic_runs import make_run
from typer.testing import CliRunner

from rlgate.app.decide import decide_and_report
from rlgate.cli.app import app
from rlgate.contract.loader import load_contract
from rlgate.monitor.api import run_monitor
from rlgate.monitor.duplicates import resolve
from rlgate.monitor.notes import same_model
from rlgate.monitor.readers import read_log

runner = CliRunner()


def _relogged(tmp_path: Path) -> Path:
    """A collapse (reward falling to 0) logged first, then a healthy tail re-logged over the same steps."""
    rows = [{"step": i, "reward": 0.5 - 0.005 * i} for i in range(100)]
    rows += [{"step": i, "reward": 0.5 + 0.002 * (i - 50)} for i in range(50, 100)]
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_relogged_tail_is_refused_by_default_with_the_line_and_the_counts(tmp_path: Path) -> None:
    path = _relogged(tmp_path)
    log = resolve(read_log(path))
    assert len(log.problems) == 1
    problem = log.problems[0]
    assert problem.line == 101 and "step 50 of 'reward' is logged twice with different values" in problem.message
    assert "50 step(s) logged more than once, in 1 key(s)" in problem.message
    assert problem.fix is not None and "monitor.duplicate_steps" in problem.fix
    result = runner.invoke(app, ["monitor", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and f"{path}:101:" in result.output and "duplicate_steps" in result.output


def test_last_and_first_choose_and_still_warn(tmp_path: Path) -> None:
    path = _relogged(tmp_path)
    last = resolve(read_log(path), "last")
    first = resolve(read_log(path), "first")
    assert last.problems == [] and first.problems == []
    assert last.get("reward_mean").values[-1] > 0.5 > first.get("reward_mean").values[-1]
    assert "kept the last logging" in last.warnings[0] and "kept the first logging" in first.warnings[0]
    result = runner.invoke(app, ["monitor", str(path), "--duplicate-steps", "first", "--out", str(tmp_path / "o")])
    assert "kept the first logging" in result.output
    bad = runner.invoke(app, ["monitor", str(path), "--duplicate-steps", "newest", "--out", str(tmp_path / "o")])
    assert bad.exit_code == 2 and "refuse, last, first" in bad.output


def test_identical_relogging_is_only_warned(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    rows = [{"step": i, "reward": 0.1 * i} for i in range(5)] + [{"step": 4, "reward": 0.4}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    log = resolve(read_log(path))
    assert log.problems == [] and log.warnings == [
        "1 step(s) logged more than once, in 1 key(s); every repeated logging holds the same values"]


CONTRACT = """schema_version: 1
name: mon
baseline: {checkpoint: base}
splits: {test_public: {visibility: nightly}}
suites:
  - {schema_version: 1, name: s, tasks: [{task: t, split: test_public, path: t.yaml}]}
gates:
  primary: {metric: t/acc, min_delta: 0.0}
monitor: {logs: [run/metrics.jsonl]}
"""


def _gate(tmp_path: Path, log_text: str, model: str = "Qwen/Qwen3-0.6B") -> dict[str, object]:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "t.yaml").write_text("task: t\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text(CONTRACT, encoding="utf-8")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text(log_text, encoding="utf-8")
    (tmp_path / "run" / "config.json").write_text(json.dumps({"model_name": model}), encoding="utf-8")
    base = make_run({"t": {"acc": [0.0, 1.0, 0.0, 1.0]}})
    cand = make_run({"t": {"acc": [1.0, 1.0, 0.0, 1.0]}})
    cand.provenance.model, cand.provenance.model_args = "hf", "pretrained=/ckpt/qwen3-0.6b-grpo/step-40"
    outcome = decide_and_report(load_contract(tmp_path / "c.yaml"), base, cand, tmp_path / "out")
    assert {"decision", "html", "markdown", "junit"} <= set(outcome.reports)
    return json.loads((tmp_path / "out" / "decision.json").read_text(encoding="utf-8"))


def test_an_unreadable_monitor_log_is_the_gates_error_and_every_output_is_written(tmp_path: Path) -> None:
    decision = _gate(tmp_path, '{"step": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    gates = [g for g in decision["gates"] if g["name"] == "monitor:read"]  # type: ignore[index, union-attr]
    assert len(gates) == 1 and gates[0]["verdict"] == "error"
    assert "metrics.jsonl:1:" in gates[0]["reason"] and "nested deeper" in gates[0]["reason"]
    assert decision["decision"] != "release"


def test_a_log_naming_another_model_is_warned(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"step": i, "reward/total": 0.01 * i}) + "\n" for i in range(30))
    same = _gate(tmp_path / "a", rows)
    other = _gate(tmp_path / "b", rows, model="openai/gpt-oss-20b")
    assert not any("another model" in w for w in same["warnings"])  # type: ignore[union-attr]
    assert any("names model 'openai/gpt-oss-20b'" in w and "another model's run" in w
               for w in other["warnings"])  # type: ignore[union-attr]
    assert same_model("Qwen/Qwen3-0.6B", "hf,pretrained=/ckpt/qwen3-0.6b-grpo/step-40")
    assert not same_model("meta-llama/Llama-3.1-8B", "hf,pretrained=Qwen/Qwen2.5-7B")


def test_a_trained_checkpoint_is_matched_by_its_config_or_by_living_in_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "global_step_40").mkdir(parents=True)
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": i, "reward/total": 0.01 * i}) + "\n"
                                               for i in range(30)), encoding="utf-8")
    (run / "config.json").write_text(json.dumps({"model_name": "Qwen/Qwen3-0.6B"}), encoding="utf-8")
    elsewhere = tmp_path / "ckpts" / "step-40"
    elsewhere.mkdir(parents=True)
    (elsewhere / "config.json").write_text(json.dumps({"_name_or_path": "Qwen/Qwen3-0.6B"}), encoding="utf-8")
    stranger = tmp_path / "ckpts" / "other"
    stranger.mkdir()
    (stranger / "config.json").write_text(json.dumps({"_name_or_path": "google/gemma-2-2b"}), encoding="utf-8")

    def warned(checkpoint: Path) -> bool:
        log = run_monitor([run / "metrics.jsonl"], plots=False, checkpoint=f"hf,pretrained={checkpoint}").logs[0]
        return any("another model's run" in w for w in log.warnings)

    assert not warned(run / "global_step_40") and not warned(elsewhere) and warned(stranger)


def test_keys_that_look_canonical_are_suggested_not_applied(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": i, "reward/pass@1": 0.01 * i, "test/gsm8k/accuracy": 0.3,
                                        "optimizer/grad_norm": 0.2}) + "\n" for i in range(30)), encoding="utf-8")
    report = run_monitor([path], plots=False)
    log = report.logs[0]
    assert "reward_mean" not in {m.name for m in log.metrics}
    note = next(w for w in log.warnings if w.startswith("these keys look like"))
    assert "reward/pass@1 -> reward_mean" in note and "test/gsm8k/accuracy -> val_score/<dataset>" in note
    assert "optimizer/grad_norm -> grad_norm" in note and "--map reward_mean=reward/pass@1" in note


def test_the_contract_chooses_the_policy(tmp_path: Path) -> None:
    from rlgate.monitor.api import monitor_contract

    _relogged(tmp_path)
    (tmp_path / "t.yaml").write_text("task: t\n", encoding="utf-8")
    for policy, problems in (("", 1), ("duplicate_steps: last, ", 0), ("duplicate_steps: first, ", 0)):
        (tmp_path / "c.yaml").write_text(CONTRACT.replace("monitor: {logs: [run/metrics.jsonl]}",
                                                          "monitor: {" + policy + "logs: [metrics.jsonl]}"))
        report = monitor_contract(load_contract(tmp_path / "c.yaml"))
        assert len(report.problems) == problems, policy
    (tmp_path / "c.yaml").write_text(CONTRACT.replace("monitor: {logs: [run/metrics.jsonl]}",
                                                      "monitor: {duplicate_steps: newest, logs: [metrics.jsonl]}"))
    result = runner.invoke(app, ["monitor", "--contract", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "duplicate_steps" in result.output and "Traceback" not in result.output
