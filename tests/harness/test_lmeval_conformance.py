"""The fixture builder and the adapter against lm-eval itself.

A replay model answers a local copy of lm-eval's gsm8k task with Abel-7B's real responses through
`lm_eval.simple_evaluate` and lm-eval's EvaluationTracker; the folder it writes must equal the
builder's, and the adapter must read both the same. The per-response replay used for pass@k /
maj@k must agree with lm-eval's own filter and metric classes.
"""

from __future__ import annotations

import gzip
import json
import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures.lmeval_builders import (
    ABEL_PROMPT,
    TaskOutput,
    build_gsm8k_abel_folder,
    dump_config,
    lm_eval_task_yaml,
    score_task,
    write_lmeval_folder,
)
from fixtures.real_data import require_by_reference

from rlgate.engine.values import leaf_values
from rlgate.harness.lmeval.folder import read_lmeval_folder
from rlgate.harness.lmeval.per_response import exact_match, regex_extract

lm_eval = pytest.importorskip("lm_eval")
N_DOCS = 8


def _abel_rows(shared_data: Path, model: str) -> list[dict[str, Any]]:
    with gzip.open(require_by_reference(shared_data / "outputs" / "gsm8k_abel" / f"{model}.jsonl.gz"), "rt",
                   encoding="utf-8") as f:
        return sorted((json.loads(line) for line in f), key=lambda r: r["id"])


def _run_real_lm_eval(root: Path, shared_data: Path) -> Path:
    from lm_eval.api.model import LM
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    tasks = root / "tasks"
    tasks.mkdir(parents=True)
    docs = [json.loads(line) for line in (shared_data / "gsm8k" / "test.jsonl").read_text().splitlines()[:N_DOCS]]
    (tasks / "test.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    raw = lm_eval_task_yaml("gsm8k/gsm8k.yaml")
    files = {"test": str(tasks / "test.jsonl"), "train": str(tasks / "test.jsonl")}
    raw.update(dataset_path="json", dataset_kwargs={"data_files": files}, num_fewshot=0,
               doc_to_text=ABEL_PROMPT.replace("{question}", "{{question}}"))
    raw.pop("dataset_name")
    (tasks / "gsm8k.yaml").write_text(yaml.safe_dump(raw))
    rows = _abel_rows(shared_data, "7b")

    class Replay(LM):  # type: ignore[misc]
        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            return [rows[r.doc_id]["response"] for r in requests]

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

    manager = TaskManager(include_path=str(tasks), include_defaults=False)
    results = lm_eval.simple_evaluate(model=Replay(), tasks=["gsm8k"], task_manager=manager, log_samples=True)
    tracker = EvaluationTracker(output_path=str(root / "real"))
    tracker.general_config_tracker.log_experiment_args(
        model_source="vllm", model_args="pretrained=GAIR/Abel-7B-001", system_instruction=None,
        chat_template=None, fewshot_as_multiturn=False)
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for name, task_samples in samples.items():
        tracker.save_results_samples(task_name=name, samples=task_samples)
    return next((root / "real").glob("*/results_*.json")).parent


@pytest.mark.slow
def test_builder_writes_what_lm_eval_writes(tmp_path: Path, shared_data: Path) -> None:
    real = _run_real_lm_eval(tmp_path, shared_data)
    mine = build_gsm8k_abel_folder(shared_data, "7b", tmp_path / "mine", limit=N_DOCS)
    a = json.loads(next(real.glob("results_*.json")).read_text())
    b = json.loads(next(mine.glob("results_*.json")).read_text())
    assert set(a) == set(b)
    assert a["results"] == b["results"] and a["task_hashes"] == b["task_hashes"]
    assert a["n-samples"] == b["n-samples"] or a["n-samples"]["gsm8k"]["effective"] == N_DOCS
    real_lines = [json.loads(x) for x in next(real.glob("samples_*.jsonl")).read_text().splitlines()]
    mine_lines = [json.loads(x) for x in next(mine.glob("samples_*.jsonl")).read_text().splitlines()]
    assert real_lines == mine_lines
    run_a, run_b = read_lmeval_folder(real), read_lmeval_folder(mine)
    ta, tb = run_a.tasks["gsm8k"], run_b.tasks["gsm8k"]
    assert ta.samples == tb.samples and ta.metrics == tb.metrics
    assert ta.protocol.generation_kwargs == tb.protocol.generation_kwargs
    assert ta.protocol.filters == tb.protocol.filters and ta.protocol.version == tb.protocol.version


def test_per_response_replay_matches_lm_eval_classes(shared_data: Path) -> None:
    from lm_eval.api.metrics import exact_match_hf_evaluate
    from lm_eval.filters.extraction import RegexFilter

    raw = lm_eval_task_yaml("gsm8k/gsm8k.yaml")
    metric = {k: v for k, v in raw["metric_list"][0].items() if k not in ("metric", "aggregation", "higher_is_better")}
    docs = [json.loads(line) for line in (shared_data / "gsm8k" / "test.jsonl").read_text().splitlines()]
    rows = _abel_rows(shared_data, "13b")[:300]
    for filter_config in raw["filter_list"]:
        step = filter_config["filter"][0]
        lm = RegexFilter(regex_pattern=step["regex_pattern"], group_select=step.get("group_select", 0))
        theirs = [x[0] for x in lm.apply([[r["response"]] for r in rows], [])]
        ours = [regex_extract(r["response"], re.compile(step["regex_pattern"]), step.get("group_select", 0))
                for r in rows]
        assert ours == theirs
        for answer, row in zip(ours, rows, strict=True):
            target = docs[row["id"]]["answer"]
            expected = exact_match_hf_evaluate(predictions=[answer], references=[target], **metric)["exact_match"]
            assert exact_match(answer, target, **metric) == bool(expected)


def test_pass_at_k_from_n_responses(tmp_path: Path, shared_data: Path) -> None:
    """Three responses per document (Abel-7B, Abel-13B, a wrong one): pass@k and maj@k from lm-eval scores."""
    raw = lm_eval_task_yaml("gsm8k/gsm8k.yaml")
    raw["num_fewshot"] = 0
    docs = [json.loads(line) for line in (shared_data / "gsm8k" / "test.jsonl").read_text().splitlines()][:60]
    r7, r13 = _abel_rows(shared_data, "7b")[:60], _abel_rows(shared_data, "13b")[:60]
    responses = [[a["response"], b["response"], "I think #### 0"] for a, b in zip(r7, r13, strict=True)]
    prompts = [f"Question: {d['question']}\nAnswer:" for d in docs]
    samples = score_task("gsm8k", raw, docs, prompts, responses)
    folder = write_lmeval_folder(tmp_path, model_name="x/y", tasks=[TaskOutput("gsm8k", dump_config(raw), samples, 60)])
    task = read_lmeval_folder(folder).tasks["gsm8k"]
    # lm-eval's own verdict on each response alone
    single = [score_task("gsm8k", raw, docs, prompts, [[r[i]] for r in responses]) for i in range(3)]
    for filt in ("strict-match", "flexible-extract"):
        by_doc = [[next(s["exact_match"] for s in single[i] if s["doc_id"] == d and s["filter"] == filt)
                   for i in range(3)] for d in range(60)]
        assert [s.extra["per_response"][filt]["correct"] for s in task.samples] == by_doc
        for k in (1, 2, 3):
            values, _ = leaf_values(task, f"pass@{k}", filt)
            brute = [sum(any(c) for c in combinations(row, k)) / len(list(combinations(row, k))) for row in by_doc]
            assert values.tolist() == pytest.approx(brute)
        maj, _ = leaf_values(task, "maj@3", filt)
        answers = [[next(s["filtered_resps"][0] for s in single[i] if s["doc_id"] == d and s["filter"] == filt)
                    for i in range(3)] for d in range(60)]
        # majority of the three lm-eval answers; with three distinct answers the first (Abel-7B's) wins
        expected = [row[next(i for i, a in enumerate(ans) if ans.count(a) >= 2)] if len(set(ans)) < 3 else row[0]
                    for ans, row in zip(answers, by_doc, strict=True)]
        assert maj.tolist() == expected
        assert 0 < sum(expected) < 60
