"""Helpers for the badcase tests: lm-eval sample dicts -> RunResult, and the format-drop MMLU-Pro case."""

from __future__ import annotations

import csv
import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any

from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskProtocol, TaskResult

_FINAL = re.compile(r"answer is \(?([A-J])\)?")


def run_from_lmeval_samples(model: str, tasks: dict[str, list[dict[str, Any]]],
                            groups: dict[str, list[str]] | None = None) -> RunResult:
    """A RunResult from lm-eval sample dicts (one per filter and document), as the adapter reads them."""
    out: dict[str, TaskResult] = {}
    for name, lines in tasks.items():
        records: dict[int, SampleRecord] = {}
        for line in lines:
            rec = records.get(line["doc_id"])
            if rec is None:
                rec = records[line["doc_id"]] = SampleRecord(
                    doc_id=line["doc_id"], doc_hash=line["doc_hash"], prompt=line["arguments"]["gen_args_0"]["arg_0"],
                    target=str(line["target"]), responses=list(line["resps"][0]), doc=line["doc"])
            rec.filtered[line["filter"]] = line["filtered_resps"][0]
            rec.scores[line["filter"]] = {m: line[m] for m in line["metrics"]}
        samples = sorted(records.values(), key=lambda s: s.doc_id)
        metrics: dict[str, dict[str, float | None]] = {}
        for rec in samples:
            for filt, values in rec.scores.items():
                for metric, value in values.items():
                    if isinstance(value, float | int):
                        metrics.setdefault(filt, {}).setdefault(metric, 0.0)
                        metrics[filt][metric] = (metrics[filt][metric] or 0.0) + float(value) / len(samples)
        out[name] = TaskResult(task=name, metrics=metrics, n_samples=len(samples), samples=samples,
                               protocol=TaskProtocol(filters=sorted({f for r in samples for f in r.filtered})))
    return RunResult(provenance=RunProvenance(source=f"memory:{model}", model=model), tasks=out,
                     groups=groups or {})


def _read_gz(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def mistral_style_format_break(question_id: int, share: int) -> bool:
    """Deterministically pick `share` percent of documents whose answers lose their parseable form."""
    return zlib.crc32(str(question_id).encode()) % 100 < share


def mmlu_pro_lines(shared_data: Path, *, per_subject: int | None = 300, format_break_share: int = 35,
                   broken: str = "instruct") -> dict[str, tuple[str, dict[str, list[dict[str, Any]]]]]:
    """model key -> (model id, leaf task -> lm-eval sample dicts) for Llama-3.1-8B base and Instruct on MMLU-Pro.

    Mistral-7B-v0.1-Instruct-style: the `broken` model keeps its real choices, but on
    `format_break_share` percent of documents it states them as 'The correct answer is: X', which
    lm-eval's regex (`answer is \\(?([A-J])\\)?`) cannot parse. Like the fixture builders, documents
    without a published generated text get the published prediction as 'The answer is (X).'.
    """
    from fixtures.lmeval_builders import MMLU_PRO_SUBJECTS, lm_eval_task_yaml, score_task

    base_dir = Path(shared_data)
    questions = sorted(_read_gz(base_dir / "mmlu_pro" / "test.jsonl.gz"), key=lambda q: q["question_id"])
    with open(base_dir / "outputs" / "mmlu_pro" / "predictions.csv", encoding="utf-8", newline="") as handle:
        preds = list(csv.DictReader(handle))
    out: dict[str, tuple[str, dict[str, list[dict[str, Any]]]]] = {}
    for key, column in (("base", "Meta-Llama-3_1-8B"), ("instruct", "Meta-Llama-3_1-8B-Instruct")):
        texts = {g["question_id"]: g["generated_text"]
                 for g in _read_gz(base_dir / "outputs" / "mmlu_pro" / f"{column}.generations.jsonl.gz")}
        by_id = {int(r["question_id"]): r[f"pred__{column}"] for r in preds}
        tasks: dict[str, list[dict[str, Any]]] = {}
        for subject in MMLU_PRO_SUBJECTS:
            name = "mmlu_pro_" + subject.replace(" ", "_")
            raw = lm_eval_task_yaml(f"mmlu_pro/{name}.yaml")
            docs = [q for q in questions if q["category"] == subject][:per_subject]
            responses = []
            for doc in docs:
                text = texts.get(doc["question_id"], f"The answer is ({by_id[doc['question_id']]}).")
                if key == broken and mistral_style_format_break(doc["question_id"], format_break_share):
                    text = _FINAL.sub(lambda m: f"correct answer is: {m.group(1)}", text)
                responses.append([text])
            prompts = [raw.get("description", "") + raw["doc_to_text"](d) for d in docs]
            tasks[name] = score_task(name, raw, docs, prompts, responses)
        out[key] = (f"meta-llama/{column}", tasks)
    return out


def mmlu_pro_runs(shared_data: Path, **kwargs: Any) -> tuple[RunResult, RunResult]:
    """(base, instruct) RunResults of `mmlu_pro_lines`."""
    lines = mmlu_pro_lines(shared_data, **kwargs)
    runs = [run_from_lmeval_samples(model, tasks, {"mmlu_pro": sorted(tasks)}) for model, tasks in
            (lines["base"], lines["instruct"])]
    return runs[0], runs[1]


def mmlu_pro_folders(shared_data: Path, out_dir: Path, **kwargs: Any) -> tuple[Path, Path]:
    """(base, instruct) lm-eval output folders of `mmlu_pro_lines`, as lm_eval --log_samples writes them."""
    from fixtures.lmeval_builders import GroupSpec, TaskOutput, dump_config, lm_eval_task_yaml, write_lmeval_folder

    folders = []
    for key, (model, tasks) in mmlu_pro_lines(shared_data, **kwargs).items():
        outputs = [TaskOutput(name, dump_config(lm_eval_task_yaml(f"mmlu_pro/{name}.yaml")), lines, len(lines))
                   for name, lines in tasks.items()]
        group = GroupSpec("mmlu_pro", sorted(tasks), "exact_match", ["custom-extract"], version=3.0)
        folders.append(write_lmeval_folder(out_dir / key, model_name=model, tasks=outputs, groups=[group]))
    return folders[0], folders[1]


def scored_run(model: str, task: str, yaml: str, docs: list[dict[str, Any]], responses: list[str],
               prompt_key: str = "question") -> RunResult:
    """A one-task run scored by lm-eval's own filters and metrics for `yaml` (e.g. gsm8k/gsm8k.yaml)."""
    from fixtures.lmeval_builders import lm_eval_task_yaml, score_task

    raw = lm_eval_task_yaml(yaml)
    prompts = [f"Question: {d.get(prompt_key, '')}\nAnswer:" for d in docs]
    lines = score_task(task, raw, docs, prompts, [[r] for r in responses])
    return run_from_lmeval_samples(model, {task: lines})


def ifeval_sample(doc_id: int, instructions: list[str], followed: list[bool], response: str = "ok") -> SampleRecord:
    """An IFEval sample as the lm-eval adapter records it: per-instruction results as a list."""
    return SampleRecord(
        doc_id=doc_id, doc_hash=f"h{doc_id}", prompt=f"prompt {doc_id}", target="0", responses=[response],
        filtered={"none": response},
        scores={"none": {"prompt_level_strict_acc": float(all(followed)),
                         "inst_level_strict_acc": [float(f) for f in followed],
                         "prompt_level_loose_acc": float(all(followed)),
                         "inst_level_loose_acc": [float(f) for f in followed]}},
        doc={"key": doc_id, "prompt": f"prompt {doc_id}", "instruction_id_list": instructions,
             "kwargs": [{} for _ in instructions]},
    )


def one_task_run(model: str, task: str, samples: list[SampleRecord]) -> RunResult:
    return RunResult(provenance=RunProvenance(source=f"memory:{model}", model=model),
                     tasks={task: TaskResult(task=task, n_samples=len(samples), samples=samples)})
