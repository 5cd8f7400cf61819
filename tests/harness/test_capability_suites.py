"""The math-RLVR and code-RL suites end to end on imported responses: lm-eval loads its own aime24, aime25,
minerva_math500, humaneval_plus and mbpp_plus on the vendored documents, rlgate scores every response, and the gate
decides. Import fidelity: each per-response verdict is what lm-eval's own scorer gives that response (its
process_results for math; for code, the program lm-eval builds, run without rlgate's sandbox), and lm-eval's own
per-sample score is the first response's verdict (the mean of all for humaneval_plus's pass@1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.capability import DATA, N, write_contract, write_responses
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.engine.values import run_values
from rlgate.harness.lmeval import LmEvalHarness
from rlgate.results.models import MetricKey, RunResult
from rlgate.sandbox import SandboxUnavailable, available

pytest.importorskip("lm_eval")
pytest.importorskip("math_verify", reason="minerva_math500 needs rlgate's math extra")
try:
    available()
except SandboxUnavailable as exc:  # pragma: no cover - machines without namespaces
    pytest.skip(f"no sandbox on this machine: {exc}", allow_module_level=True)

runner = CliRunner()


def _eval(contract: Path, responses: Path, out: Path, cache: Path) -> None:
    result = runner.invoke(app, ["eval", str(contract), "--responses", str(responses), "--out", str(out),
                                 "--cache", str(cache)])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("capability")
    contract = write_contract(root)
    out = {"contract": contract}
    for role in ("baseline", "candidate"):
        _eval(contract, write_responses(root / f"{role}.jsonl", role), root / role, root / "cache")
        out[role] = root / role
    return out


def _read(folder: Path) -> RunResult:
    return LmEvalHarness().read(folder)


def _value(run: RunResult, task: str, metric: str, filt: str = "none") -> float:
    found = run_values(run, MetricKey(task=task, metric=metric, filter=filt))
    assert found is not None and found.aggregate is not None
    return found.aggregate


@pytest.mark.parametrize("task", ["aime24", "minerva_math500"])
def test_math_verdicts_are_lm_evals_process_results_on_each_response(runs: dict[str, Path], task: str) -> None:
    if task == "aime24":
        from lm_eval.tasks.aime import utils
    else:
        from lm_eval.tasks.minerva_math import utils
    for role in ("baseline", "candidate"):
        run = _read(runs[role])
        samples = run.tasks[task].samples
        assert len(samples) == 5 and all(len(s.responses) == N for s in samples)
        for sample in samples:
            per = sample.extra["per_response"]["none"]
            own = [float(utils.process_results(sample.doc, [r])["exact_match"]) for r in sample.responses]
            assert per["correct"] == own
            assert sample.scores["none"]["exact_match"] == own[0]  # lm-eval scores the first response
        expected = sum(sum(s.extra["per_response"]["none"]["correct"]) / N for s in samples) / len(samples)
        assert _value(run, task, "pass@1") == pytest.approx(expected)


def test_avg_at_16_maj_and_pass_at_k_follow_the_responses(runs: dict[str, Path]) -> None:
    base, cand = _read(runs["baseline"]), _read(runs["candidate"])
    assert (_value(base, "aime24", "pass@1"), _value(cand, "aime24", "pass@1")) == (0.25, 0.75)
    assert (_value(base, "aime24", "maj@4"), _value(cand, "aime24", "maj@4")) == (0.0, 1.0)
    assert _value(base, "aime24", "pass@4") == 1.0 and _value(base, "aime24", "pass@2") == pytest.approx(0.5)
    assert _value(cand, "aime25", "pass@1") == 0.5 and _value(base, "aime25", "pass@1") == 0.5


def _plain_run(program: str) -> float:
    """The program as lm-eval's code_eval runs it, but in a plain subprocess (the test's own, independent check)."""
    try:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=3)
    except subprocess.TimeoutExpired:
        return 0.0
    return 1.0 if done.returncode == 0 else 0.0


@pytest.mark.parametrize(("task", "filt", "metric"), [("humaneval_plus", "create_test", "pass@1"),
                                                       ("mbpp_plus", "none", "pass_at_1")])
def test_code_verdicts_match_running_lm_evals_programs(runs: dict[str, Path], task: str, filt: str,
                                                        metric: str) -> None:
    for role in ("baseline", "candidate"):
        run = _read(runs[role])
        for sample in run.tasks[task].samples:
            prefix = sample.doc["prompt"] if task == "humaneval_plus" else ""
            own = [_plain_run(prefix + r + "\n" + str(sample.target)) for r in sample.responses]
            assert sample.extra["per_response"][filt]["correct"] == own
            lm_eval_score = sample.scores[filt][metric]  # lm-eval's own metric (its executor: the sandbox)
            assert lm_eval_score == pytest.approx(sum(own) / N if task == "humaneval_plus" else own[0])


def test_code_checks_name_overfitting_timeouts_and_syntax_errors(runs: dict[str, Path]) -> None:
    base = _read(runs["baseline"])
    checks = base.tasks["humaneval_plus"].samples[0].extra["code"]["create_test"]
    assert checks["outcomes"] == ["passed", "failed", "timeout", "syntax_error"]
    assert checks["public"][:2] == [True, True] and checks["hidden"][:2] == [True, False]
    mbpp = base.tasks["mbpp_plus"].samples[0]
    assert mbpp.scores["none"]["pass_at_1"] == 1.0  # lm-eval runs only the asserts the prompt lists...
    assert mbpp.extra["code"]["none"]["hidden"][0] is False  # ...and the hidden tests fail


def test_the_suites_gate_end_to_end_with_honest_mde(runs: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, ["gate", str(runs["contract"]), "--baseline", str(runs["baseline"]),
                                 "--candidate", str(runs["candidate"]), "--out", str(tmp_path / "gate")])
    assert result.exit_code in (0, 1, 3), result.output
    decision = json.loads((tmp_path / "gate" / "decision.json").read_text())
    gates = {g["metric"]: g for g in decision["gates"]}
    primary = gates["aime24/pass@1/none"]
    assert (primary["baseline"], primary["candidate"]) == (0.25, 0.75)
    assert primary["n"] == 5  # the problem is the unit: 5 problems, not 20 responses
    assert gates["humaneval_plus/pass@1/create_test"]["candidate"] == pytest.approx(0.5)
    assert gates["aime24/maj@4/none"]["candidate"] == 1.0
    small = gates["aime25/pass@1/none"]
    assert small["mde"] > 0.05
    report = (tmp_path / "gate" / "report.md").read_text()
    assert "too small to show" in report


def test_code_badcases_name_the_overfit_programs(runs: dict[str, Path]) -> None:
    from rlgate.badcases.actions import ActionContext, code_rule
    from rlgate.badcases.code_families import CodeClassifier
    from rlgate.badcases.models import ClusterStat
    from rlgate.badcases.taxonomy import ClassifyOptions

    classifier = CodeClassifier()
    base = _read(runs["baseline"])
    assert classifier.claims("mbpp_plus") and classifier.claims("humaneval_plus") and not classifier.claims("gsm8k")
    outcomes = [classifier.classify("mbpp_plus", s, ClassifyOptions()) for s in base.tasks["mbpp_plus"].samples]
    assert all([f.cls for f in o.failures] == ["code_public_pass_hidden_fail"] for o in outcomes)
    assert not any(o.correct for o in outcomes)  # lm-eval's pass_at_1 says right; the hidden tests say not
    cluster = ClusterStat(cluster="code_public_pass_hidden_fail", failure_class="code_public_pass_hidden_fail",
                          family="code", kind="knowledge", candidate_count=3, grew=True)
    action = code_rule(cluster, ActionContext())
    assert action is not None and action.action.startswith("add hidden and variant tests")


def test_a_code_suite_without_unsafe_code_sandboxed_is_refused_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rlgate.sandbox.process as sandbox

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("model code ran")

    monkeypatch.setattr(sandbox, "run_programs", never)
    monkeypatch.setattr(sandbox, "run_program", never)
    contract = write_contract(tmp_path, sandboxed=False)
    responses = write_responses(tmp_path / "r.jsonl", "baseline")
    for args in (["validate", str(contract)],
                 ["eval", str(contract), "--responses", str(responses), "--out", str(tmp_path / "o")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "executes model-written code" in result.output and "unsafe_code: sandboxed" in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_aime_24_and_25_pool_as_one_capability(tmp_path: Path) -> None:
    tasks = [{"task": "aime24_25", "split": "test_public",
              "data_files": {"aime24/train": str(DATA / "aime24.jsonl"), "aime25/test": str(DATA / "aime25.jsonl")}}]
    gates = {"primary": {"metric": "aime24_25/pass@1", "min_delta": 0.0},
             "diagnostics": [{"metric": "aime24_25/maj@4", "min": 0.0}]}
    contract = write_contract(tmp_path, tasks=tasks, gates=gates)
    rows = [r for r in (json.loads(line) for line in write_responses(tmp_path / "all.jsonl", "candidate")
                        .read_text().splitlines()) if r["task"] in ("aime24", "aime25")]
    responses = tmp_path / "aime.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _eval(contract, responses, tmp_path / "out", tmp_path / "cache")
    run = _read(tmp_path / "out")
    assert sorted(run.leaves("aime24_25")) == ["aime24", "aime25"]
    pooled = run_values(run, MetricKey(task="aime24_25", metric="pass@1", filter="none"))
    assert pooled is not None and pooled.n == 10
    assert pooled.aggregate == pytest.approx((0.75 * 5 + 0.5 * 5) / 10)
