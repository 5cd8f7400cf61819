"""VLM metrics through lm-eval's own ChartQA functions, MathVista rule extraction, MMMU parse failures."""

from __future__ import annotations

import pytest

from rlgate.harness.lmeval.task_files.mathvista import utils as mathvista
from rlgate.harness.lmeval.vlm_metrics import (
    RELAXED,
    add_abilities,
    add_vlm_metrics,
    chartqa_final_answer,
    mmmu_parsed,
)
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult

pytest.importorskip("lm_eval")


def _chart(doc_id: int, response: str, relaxed: float, exact: float, origin: int) -> SampleRecord:
    return SampleRecord(doc_id=doc_id, doc_hash=str(doc_id), responses=[response], target="35",
                        doc={"query": "q", "label": ["35"], "human_or_machine": origin},
                        scores={"none": {"relaxed_accuracy": relaxed, "exact_match": exact}})


def test_chartqa_parse_failures_and_relaxed_alias() -> None:
    task = TaskResult(task="chartqa", samples=[
        _chart(0, "Final Answer: 35", 1.0, 1.0, 0), _chart(1, "it is 35", 0.0, 0.0, 1),
        _chart(2, "Final Answer: 36", 1.0, 0.0, 1)])
    add_vlm_metrics(task)
    assert task.metrics["none"]["answer_parse_failure_rate"] == pytest.approx(1 / 3)
    assert task.metrics["none"][RELAXED] == pytest.approx(2 / 3)
    run = RunResult(provenance=RunProvenance(source="t"), tasks={"chartqa": task})
    add_abilities(run)
    assert run.group_metrics["chartqa::human"]["none"][RELAXED] == 1.0
    assert run.group_metrics["chartqa::augmented"]["none"][RELAXED] == 0.5


def test_chartqa_answer_is_what_lmeval_reads() -> None:
    assert chartqa_final_answer("reasoning...\nFinal Answer: **42**") == "42"
    assert chartqa_final_answer("no marker") == ""


@pytest.mark.parametrize(("response", "doc", "expected"), [
    ("Final Answer: (B)", {"question_type": "multi_choice", "choices": ["North", "South"]}, "South"),
    ("Final Answer: North", {"question_type": "multi_choice", "choices": ["North", "South"]}, "North"),
    ("Final Answer: both", {"question_type": "multi_choice", "choices": ["North", "South"]}, "[invalid]"),
    ("the sum is 1,205 so Final Answer: 1,205", {"answer_type": "integer"}, "1205"),
    ("Final Answer: 12.345", {"answer_type": "float", "precision": 1}, "12.3"),
    ("I cannot tell", {"answer_type": "integer"}, "[invalid]"),
])
def test_mathvista_rule_extraction(response: str, doc: dict[str, object], expected: str) -> None:
    assert mathvista.extract(response, doc) == expected


def test_mathvista_scoring() -> None:
    assert mathvista.process_results({"answer": "12.3", "answer_type": "float"}, ["12.3"]) == {"acc": 1.0}
    assert mathvista.process_results({"answer": "North", "answer_type": "text"}, ["north"]) == {"acc": 1.0}
    assert mathvista.process_results({"answer": "7", "answer_type": "integer"}, ["[invalid]"]) == {"acc": 0.0}


def test_mmmu_parse_rules() -> None:
    doc = {"question_type": "multiple-choice", "options": "['10', '20', '30', '40']"}
    assert mmmu_parsed("(B)", doc) and mmmu_parsed("B", doc)
    assert not mmmu_parsed("no idea", doc)


def test_image_protocol_difference_is_a_protocol_mismatch() -> None:
    from fixtures.synthetic_runs import make_manifest

    from rlgate.engine.protocol import run_differences

    def run(side: int) -> RunResult:
        manifest = make_manifest(protocol={"image": {"image_resolution": side, "max_pixels": None,
                                                     "preserve_aspect_ratio": True, "images_per_prompt": 1}})
        return RunResult(provenance=RunProvenance(source="x", manifest=manifest), tasks={})

    assert run_differences(run(448), run(448)) == []
    diff = run_differences(run(448), run(896))
    assert diff == ["run: image protocol.image_resolution 448 (baseline) vs 896 (candidate)"]
