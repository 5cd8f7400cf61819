"""Policy resolution, rule-first decisions, pointwise mode, calibration and drift, deepeval's environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from judge_contracts import run, sample, write_contract
from judge_helpers import QualityJudge

from rlgate._core.errors import InputError
from rlgate.contract.judge_policy import JudgeSpec, resolve_judge
from rlgate.harness.vocabulary import load_contract
from rlgate.judge.api import judge_for_decision, run_judge
from rlgate.judge.calibration import load_anchors
from rlgate.judge.gate import judge_gate_verdicts
from rlgate.judge.geval import GEvalJudge
from rlgate.judge.history import StoreJudgeHistory
from rlgate.judge.runner import judge_task
from rlgate.store.history import CheckpointHistory

MODEL = {"base_url": "http://127.0.0.1:9/v1", "model": "j"}
STEPS = ["Compare the responses.", "Prefer the better one."]


def test_task_override_replaces_only_the_fields_it_sets() -> None:
    default = JudgeSpec.model_validate({"type": "rule_then_llm_judge", "model": MODEL, "seed": 3,
                                        "tie_policy": "exclude"})
    override = JudgeSpec.model_validate({"samples": 2, "type": "llm"})
    merged = resolve_judge(default, override)
    assert merged is not None
    assert (merged.type, merged.samples, merged.seed, merged.tie_policy) == ("llm", 2, 3, "exclude")
    assert resolve_judge(None, None) is None
    with pytest.raises(InputError, match="needs a judge model"):
        resolve_judge(None, JudgeSpec(type="llm"), task="chat")
    with pytest.raises(ValueError, match="not both"):
        JudgeSpec.model_validate({"type": "llm", "model": {**MODEL, "path": "x"}})


def _rule_runs() -> tuple:
    cand = [sample(0, "Q3 answer 42", score=1.0, filtered="42"),           # rule: win (1 vs 0)
            sample(1, "Q1 answer 7", score=0.0, filtered="7"),             # rule: tie (0 vs 0)
            sample(2, "Q3 rambling", score=0.0, filtered="[invalid]"),     # rule cannot decide -> LLM
            sample(3, "Q1 no score")]                                      # no rule score -> LLM
    base = [sample(0, "Q1 answer 41", score=0.0, filtered="41"),
            sample(1, "Q2 answer 8", score=0.0, filtered="8"),
            sample(2, "Q1 answer 5", score=0.0, filtered="5"),
            sample(3, "Q3 no score")]
    return run("chat", cand).tasks["chat"], run("chat", base).tasks["chat"]


def test_rule_first_calls_the_llm_only_where_the_rule_cannot_decide() -> None:
    spec = JudgeSpec.model_validate({"type": "rule_then_llm_judge", "model": MODEL, "evaluation_steps": STEPS,
                                     "rule_metric": "exact_match/flexible-extract"})
    judge = QualityJudge()
    report = judge_task("chat", spec, *_rule_runs(), lambda: GEvalJudge(spec, judge, None))
    assert [(i.decided_by, i.outcome) for i in report.items] == [
        ("rule", "win"), ("rule", "tie"), ("llm", "win"), ("llm", "loss")]
    assert "[invalid]" in report.items[2].reason and "no exact_match" in report.items[3].reason
    assert report.items[0].calls == [] and report.items[0].rule == {"candidate": 1.0, "baseline": 0.0}
    assert len(judge.seen) == 2  # only docs 2 and 3 reached the judge
    assert report.decided_by == {"rule": 2, "llm": 2, "undecided": 0}


def test_rule_only_never_builds_a_judge() -> None:
    spec = JudgeSpec.model_validate({"type": "rule", "rule_metric": "exact_match/flexible-extract"})

    def no_judge() -> GEvalJudge:
        raise AssertionError("the rule policy must not build an LLM judge")

    report = judge_task("chat", spec, *_rule_runs(), no_judge)
    assert [i.outcome for i in report.items] == ["win", "tie", "undecided", "undecided"]
    assert report.win_rate is not None and report.win_rate.win_rate == pytest.approx(0.75)  # (1 + 0.5) / 2
    assert report.judge_model is None


def test_pointwise_scores_each_answer_and_compares_them(tmp_path: Path) -> None:
    judge = "judge:\n  type: llm\n  mode: pointwise\n  model: {base_url: 'http://127.0.0.1:9/v1', model: j}\n"
    rc = load_contract(write_contract(tmp_path, judge + "  evaluation_steps: [Score it]\n",
                                      "  hard:\n    - {metric: chat/judge_win_rate, min: 0.5}"))
    cand = [sample(0, "Q4 good"), sample(1, "Q2 fine"), sample(2, "Q1 poor")]
    base = [sample(0, "Q2 fine"), sample(1, "Q2 fine"), sample(2, "Q3 ok")]
    report = run_judge(rc, run("chat", cand), run("chat", base), tmp_path / "run", llm=QualityJudge())
    task = report.tasks["chat"]
    assert [(i.candidate_score, i.baseline_score, i.outcome) for i in task.items] == [
        (0.8, 0.4, "win"), (0.4, 0.4, "tie"), (0.2, 0.6, "loss")]
    assert task.mean_candidate_score == pytest.approx(1.4 / 3)
    [verdict] = judge_gate_verdicts(report, rc.gates)
    assert verdict.verdict == "pass" and verdict.candidate == pytest.approx(0.5)


def _anchors(path: Path, labels: list[str]) -> Path:
    pairs = [("Q3 a", "Q1 b"), ("Q1 a", "Q3 b"), ("Q2 a", "Q2 b"), ("Q3 a", "Q2 b")]  # judge says A, B, tie, A
    path.write_text("".join(json.dumps({"id": i, "question": "q", "response_a": a, "response_b": b, "label": lab})
                            + "\n" for i, ((a, b), lab) in enumerate(zip(pairs, labels, strict=True))))
    return path


def test_calibration_agreement_kappa_and_drift(tmp_path: Path) -> None:
    judge = ("judge:\n  type: llm\n  model: {base_url: 'http://127.0.0.1:9/v1', model: j}\n"
             "  evaluation_steps: [Compare]\n  calibration: {anchors: anchors.jsonl, min_agreement: 0.7}\n")
    rc = load_contract(write_contract(tmp_path, judge, "  hard:\n    - {metric: chat/judge_win_rate, min: 0.0}"))
    runs = (run("chat", [sample(0, "Q3 x")]), run("chat", [sample(0, "Q1 y")]))
    history = StoreJudgeHistory(CheckpointHistory(tmp_path / "history.sqlite"))
    _anchors(tmp_path / "anchors.jsonl", ["A", "B", "tie", "A"])
    first = run_judge(rc, *runs, tmp_path / "r1", history=history, llm=QualityJudge()).tasks["chat"].calibration
    assert first is not None and (first.accuracy, first.kappa, first.below_floor, first.drift) == (1.0, 1.0, False,
                                                                                                    False)
    # humans now disagree on the last anchor: observed 3/4; human A .5 B .25 tie .25, judge A .25 B .5 tie .25
    # -> expected .5*.25 + .25*.5 + .25*.25 = .3125; kappa = (.75 - .3125) / (1 - .3125) = 0.636364
    _anchors(tmp_path / "anchors.jsonl", ["A", "B", "tie", "B"])
    report = run_judge(rc, *runs, tmp_path / "r2", history=history, llm=QualityJudge())
    second = report.tasks["chat"].calibration
    assert second is not None and second.accuracy == 0.75 and second.kappa == pytest.approx(0.636364, abs=1e-6)
    assert not second.below_floor and second.previous_accuracy == 1.0
    _anchors(tmp_path / "anchors.jsonl", ["B", "A", "tie", "B"])
    report = run_judge(rc, *runs, tmp_path / "r3", history=history, llm=QualityJudge())
    third = report.tasks["chat"].calibration
    assert third is not None and third.accuracy == 0.25 and third.below_floor and third.drift
    assert third.previous_accuracy == 0.75 and "DRIFT" in third.message
    [verdict] = judge_gate_verdicts(report, rc.gates)
    assert verdict.verdict == "error" and "calibration floor" in verdict.reason  # fails closed


def test_bad_anchor_rows_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"question": "q", "response_a": "a", "response_b": "b", "label": "A"}\n{"question": \n')
    with pytest.raises(InputError) as err:
        load_anchors(path, "pairwise")
    assert err.value.line == 2
    path.write_text('{"question": "q", "response_a": "a", "response_b": "b", "label": "maybe"}\n')
    with pytest.raises(InputError, match="label 'maybe'"):
        load_anchors(path, "pairwise")


def test_deepeval_environment_is_set_before_import(tmp_path: Path) -> None:
    code = ("import sys, os\nimport rlgate.contract.models, rlgate.judge, rlgate.judge.api\n"
            "assert 'deepeval' not in sys.modules, 'judge policy imports must stay light'\n"
            "from rlgate.judge.deepeval_env import prepare_deepeval\n"
            f"print(prepare_deepeval(__import__('pathlib').Path({str(tmp_path / 'dv')!r})))\n"
            "print(os.environ['DEEPEVAL_TELEMETRY_OPT_OUT'], os.environ['DEEPEVAL_DISABLE_DOTENV'])\n"
            "from deepeval.config.settings import get_settings\n"
            "print(bool(get_settings().DEEPEVAL_TELEMETRY_OPT_OUT))\n")
    (tmp_path / ".env").write_text("RLGATE_DOTENV_PROBE=loaded\n")
    out = subprocess.run([sys.executable, "-c", code + "print(os.environ.get('RLGATE_DOTENV_PROBE'))\n"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    folder, flags, opt_out, probe = out.stdout.split("\n")[:4]
    assert Path(folder) == (tmp_path / "dv").resolve() and flags == "1 1" and opt_out == "True"
    assert probe == "None"  # deepeval did not load the .env in the working folder
    assert not (tmp_path / ".deepeval").exists()


def test_judge_for_decision_changes_nothing_without_a_judge(tmp_path: Path) -> None:
    rc = load_contract(write_contract(tmp_path, "", "  hard:\n    - {metric: chat/exact_match, min: 0.5}"))
    wired = judge_for_decision(rc, run("chat", [sample(0, "a")]), None, tmp_path / "run")
    assert wired.gates is rc.gates and wired.extra_gates == [] and wired.extension is None
    assert not (tmp_path / "run").exists()
