"""The demo's generated data: lm-eval's own tasks read it, and its reference answers score perfectly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rlgate.demo import data as demo_data
from rlgate.demo.build import render_templates, write_contract
from rlgate.harness.vocabulary import load_contract


def test_generation_is_seeded_and_test_and_train_differ() -> None:
    a, b = demo_data.generate(3, gsm8k_test=20), demo_data.generate(3, gsm8k_test=20)
    assert [e.row for e in a.gsm8k_test] == [e.row for e in b.gsm8k_test]
    assert [e.row for e in demo_data.generate(4, gsm8k_test=20).gsm8k_test] != [e.row for e in a.gsm8k_test]
    assert {e.row["category"] for e in a.mmlu_test} == set(demo_data.CATEGORIES)
    assert len({e.row["question_id"] for e in a.mmlu_test + a.mmlu_train}) == len(a.mmlu_test) + len(a.mmlu_train)


def test_gsm8k_answers_are_arithmetic_in_gsm8k_format() -> None:
    for example in demo_data.gsm8k_examples(random.Random(0), 200):
        work, final = example.row["answer"].split("\n#### ")
        expression = work.split(" = ")[0].split()[-3:]
        assert eval(" ".join(expression)) == int(final)


def test_committed_demo_contract_is_the_template(repo_root: Path) -> None:
    contract, suite = render_templates("rlgate-demo/data", "rlgate-demo/checkpoints", "suites/demo.yaml",
                                       "../docs/schema/contract.v1.json")
    assert (repo_root / "contracts" / "demo.yaml").read_text() == contract
    assert (repo_root / "suites" / "demo.yaml").read_text() == suite


def test_reference_answers_score_perfectly_through_lm_eval(tmp_path: Path) -> None:
    """Replaying each document's reference response through lm-eval's gsm8k, mmlu_pro and ifeval scorers."""
    pytest.importorskip("lm_eval")
    from rlgate.orchestrate import evaluate, select_tasks

    generated = demo_data.generate(1, gsm8k_test=30, mmlu_per_category=3, ifeval_test=60)
    generated.write(tmp_path / "data")
    contract = write_contract(tmp_path, tmp_path / "data", tmp_path / "checkpoints")
    resolved = load_contract(contract)
    rows = [{"task": "gsm8k", "doc_id": i, "response": e.response} for i, e in enumerate(generated.gsm8k_test)]
    rows += [{"task": "mmlu_pro", "doc": {"question_id": e.row["question_id"]}, "response": e.response}
             for e in generated.mmlu_test]
    rows += [{"task": "ifeval", "doc": {"key": e.row["key"]}, "response": e.response} for e in generated.ifeval_test]
    responses = tmp_path / "reference.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = evaluate(resolved, select_tasks(resolved, None, release_gate=False), tmp_path / "out",
                   cache_dir=tmp_path / "cache", responses=responses)
    results = json.loads(out.results_file.read_text())["results"]
    assert results["gsm8k"]["exact_match,strict-match"] == 1.0
    assert results["gsm8k"]["exact_match,flexible-extract"] == 1.0
    assert results["mmlu_pro"]["exact_match,custom-extract"] == 1.0
    assert results["ifeval"]["prompt_level_strict_acc,none"] == 1.0
    assert out.manifest.import_report is not None and out.manifest.import_report.matched == len(rows)
    # and a response that ignores the instructions fails lm-eval's checkers
    broken = [dict(r, response="Yes, sure.") if r["task"] == "ifeval" else r for r in rows]
    responses.write_text("".join(json.dumps(r) + "\n" for r in broken))
    again = evaluate(resolved, select_tasks(resolved, None, release_gate=False), tmp_path / "out2",
                     cache_dir=tmp_path / "cache", responses=responses)
    assert json.loads(again.results_file.read_text())["results"]["ifeval"]["prompt_level_strict_acc,none"] < 0.5


def test_demo_without_its_extras_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from rlgate._core.errors import InputError
    from rlgate.demo import run

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "lm_eval" else real(name, *a))
    with pytest.raises(InputError, match="needs lm_eval") as err:
        run.check_requirements()
    assert "[hf,ifeval]" in (err.value.fix or "")
