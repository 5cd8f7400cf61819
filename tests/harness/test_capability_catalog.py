"""The lm-eval catalog's math-RLVR and code-RL vocabulary, and rlgate's per-response score files (no lm-eval run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.lmeval.catalog import runs_code, task_vocabulary
from rlgate.harness.lmeval.code_tasks import SandboxedCodeEval, hidden_program, public_program
from rlgate.harness.lmeval.scored_responses import ScoredResponses, attach, file_for, read
from rlgate.results.models import SampleRecord, TaskResult


@pytest.mark.parametrize(("task", "metric", "filt"), [
    ("aime24", "exact_match", "none"), ("aime25", "pass@16", "none"), ("aime24_25", "maj@16", "none"),
    ("minerva_math500", "math_verify", "none"), ("minerva_math500", "maj@16", "none"),
    ("humaneval_plus", "pass@1", "create_test"), ("humaneval_plus", "pass@16", "create_test"),
    ("mbpp_plus", "pass_at_1", "none"), ("mbpp_plus", "pass@16", "none")])
def test_the_catalog_knows_each_metric_its_filter_range_and_direction(task: str, metric: str, filt: str) -> None:
    vocabulary = task_vocabulary(task)
    assert vocabulary.closed
    info = vocabulary.metrics[metric]
    assert info.filters == (filt,) and info.higher_is_better and info.value_range == (0.0, 1.0)


def test_code_has_no_majority_vote_and_math_runs_no_code() -> None:
    assert "maj@16" not in task_vocabulary("humaneval_plus").metrics
    assert runs_code("humaneval_plus") and runs_code("mbpp_plus") and not runs_code("aime24")
    assert task_vocabulary("humaneval_plus").default_filter == "create_test"


def test_a_gate_on_a_metric_the_task_lacks_is_refused_with_the_closest(tmp_path: Path) -> None:
    from rlgate.harness.vocabulary import load_contract

    (tmp_path / "s.yaml").write_text("schema_version: 1\nname: s\ntasks:\n  - {task: aime24, split: t}\n")
    (tmp_path / "c.yaml").write_text(
        "schema_version: 1\nname: c\nbaseline: {checkpoint: x}\nsplits: {t: {visibility: nightly}}\n"
        "suites: [s.yaml]\ngates:\n  primary: {metric: aime24/exact_mtach, min_delta: 0}\n")
    with pytest.raises(InputError, match="did you mean 'aime24/exact_match'"):
        load_contract(tmp_path / "c.yaml")


def test_the_evaluator_answers_code_evals_contract_from_cached_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    import rlgate.harness.lmeval.code_tasks as code_tasks
    from rlgate.sandbox import Outcome

    calls: list[list[str]] = []

    def fake(programs: list[str], *args: object, **kwargs: object) -> list[Outcome]:
        calls.append(programs)
        return [Outcome("passed" if "return 1" in p else "failed") for p in programs]

    monkeypatch.setattr(code_tasks, "run_programs", fake)
    evaluator = SandboxedCodeEval()
    scores, results = evaluator.compute(references=["assert f() == 1"], predictions=[["def f(): return 1",
                                                                                      "def f(): return 2"]], k=[1, 2])
    assert scores == {"pass@1": 0.5, "pass@2": 1.0}
    assert [r[1]["passed"] for r in results[0]] == [True, False]
    evaluator.compute(references=["assert f() == 1"], predictions=[["def f(): return 1"]], k=[1])
    assert len(calls) == 1  # the same program is never run twice


def test_public_and_hidden_programs() -> None:
    doc = {"prompt": 'def f(x):\n    """Twice.\n    >>> f(2)\n    4\n    """\n', "test": "def check(c):\n"
           "    assert c(3) == 6\n", "entry_point": "f"}
    code = doc["prompt"] + "    return x * 2\n"
    assert public_program("humaneval_plus", doc, code).endswith("assert (f(2)) == (4)\n")  # type: ignore[union-attr]
    assert hidden_program("humaneval_plus", doc, code) == code + "\n" + doc["test"] + "\ncheck(f)"
    mbpp = {"test_list": ["assert g(1) == 1"], "test": "assert g(2) == 2"}
    assert public_program("mbpp_plus", mbpp, "def g(x): return x") == "def g(x): return x\nassert g(1) == 1"
    assert public_program("humaneval_plus", {"prompt": "no examples"}, "x") is None


def test_stored_verdicts_attach_and_a_wrong_file_is_a_located_error(tmp_path: Path) -> None:
    results = tmp_path / "results_2026-01-01T00-00-00.json"
    scored = ScoredResponses(task="aime24", metric="exact_match",
                             filters={"none": {0: {"answers": ["1", "2"], "correct": [1.0, 0.0]}}})  # type: ignore[dict-item]
    file_for(results, "aime24").write_text(scored.model_dump_json())
    task = TaskResult(task="aime24", samples=[SampleRecord(doc_id=0, doc_hash="h", responses=["a", "b"])])
    attach(task, results)
    assert task.samples[0].extra["per_response"]["none"] == {"answers": ["1", "2"], "correct": [1.0, 0.0]}
    short = TaskResult(task="aime24", samples=[SampleRecord(doc_id=0, doc_hash="h", responses=["a", "b", "c"])])
    with pytest.raises(InputError, match="2 verdicts for 3 responses"):
        attach(short, results)
    file_for(results, "aime24").write_text(json.dumps({"schema_version": 1, "task": "aime24", "metric": "m",
                                                       "filters": {"none": {"0": {"answers": [], "bad": 1}}}}))
    with pytest.raises(InputError, match="per-response scores"):
        read(file_for(results, "aime24"))


def test_the_shipped_code_contract_loads_and_without_its_sandbox_line_is_refused(repo_root: Path,
                                                                                 tmp_path: Path) -> None:
    import shutil

    from rlgate.harness.vocabulary import load_contract

    resolved = load_contract(repo_root / "contracts" / "code_rl.yaml")
    assert resolved.contract.unsafe_code == "sandboxed"
    assert [t.name for t in resolved.tasks] == ["humaneval_plus", "mbpp_plus"]
    shutil.copytree(repo_root / "suites", tmp_path / "suites")
    (tmp_path / "contracts").mkdir()
    text = (repo_root / "contracts" / "code_rl.yaml").read_text(encoding="utf-8")
    (tmp_path / "contracts" / "c.yaml").write_text(text.replace("unsafe_code: sandboxed\n", ""), encoding="utf-8")
    with pytest.raises(InputError, match="executes model-written code") as refused:
        load_contract(tmp_path / "contracts" / "c.yaml")
    assert refused.value.field == "unsafe_code" and "unsafe_code: sandboxed" in (refused.value.fix or "")
    unknown = text.replace("unsafe_code: sandboxed", "unsafe_code: yes-please")
    (tmp_path / "contracts" / "d.yaml").write_text(unknown, encoding="utf-8")
    with pytest.raises(InputError, match="unsafe_code"):
        load_contract(tmp_path / "contracts" / "d.yaml")
