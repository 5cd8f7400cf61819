"""Report rendering at scale: 3 tasks × 12,000 paired samples (targets: under 3 s, report.html under 10 MB).

Samples are shaped like MMLU-Pro 5-shot CoT runs: a few-shot context shared per category (~4 kB),
a ~700-character question, responses of 300–1,500 characters, 0/1 scores with ~10 % changed pairs.
Prints the time of each step (model, HTML, Markdown, JUnit, run folder) and the page size beside
the size of the same sample text embedded naively (every prompt and response in full); asserts nothing.
Run: python bench/bench_report.py
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

from rlgate.engine.models import Decision, GateVerdict
from rlgate.harness.vocabulary import load_contract
from rlgate.report.builder import build_report
from rlgate.report.html import render_html
from rlgate.report.io import write_model
from rlgate.report.junit import render_junit
from rlgate.report.markdown import render_markdown
from rlgate.results.models import RunProvenance, RunResult, SampleRecord, TaskResult

TASKS = ("gsm8k", "mmlu_pro", "ifeval")
N = 12_000
CATEGORIES = 14
WORDS = ("the", "answer", "step", "therefore", "value", "equation", "option", "because", "so", "is", "we", "get")
CONTRACT = """\
schema_version: 1
name: bench_report
baseline: {checkpoint: base}
splits: {public: {visibility: nightly}}
suites:
  - schema_version: 1
    name: bench
    tasks: [{task: gsm8k, split: public}, {task: mmlu_pro, split: public}, {task: ifeval, split: public}]
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}
  regression:
    - {metric: mmlu_pro/exact_match/custom-extract, max_drop: 0.01}
    - {metric: ifeval/prompt_level_strict_acc, max_drop: 0.01}
"""
METRIC = {"gsm8k": ("exact_match", "flexible-extract"), "mmlu_pro": ("exact_match", "custom-extract"),
          "ifeval": ("prompt_level_strict_acc", "none")}


def text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def runs(seed: int = 0) -> tuple[RunResult, RunResult]:
    rng = random.Random(seed)
    made: dict[str, dict[str, TaskResult]] = {"b": {}, "c": {}}
    for task in TASKS:
        metric, filt = METRIC[task]
        shots = [f"The following are questions about category {k}.\n" + text(rng, 4000) + "\n"
                 for k in range(CATEGORIES)]
        samples: dict[str, list[SampleRecord]] = {"b": [], "c": []}
        for i in range(N):
            prompt = shots[i * CATEGORIES // N] + "Question: " + text(rng, 700) + "\nAnswer:"
            b_right = rng.random() < 0.45
            c_right = b_right if rng.random() < 0.9 else not b_right
            for role, right in (("b", b_right), ("c", c_right)):
                answer = "B" if right else "C"
                samples[role].append(SampleRecord(
                    doc_id=i, doc_hash=f"h{i}", prompt=prompt, target="B",
                    responses=[text(rng, rng.randint(300, 1500)) + f" The answer is ({answer})."],
                    filtered={filt: answer}, scores={filt: {metric: float(right)}}))
        for role in ("b", "c"):
            acc = sum(s.scores[filt][metric] for s in samples[role]) / N  # type: ignore[misc]
            made[role][task] = TaskResult(task=task, metrics={filt: {metric: acc}}, n_samples=N,
                                          samples=samples[role])
    return (RunResult(provenance=RunProvenance(source="bench/base", model="base"), tasks=made["b"]),
            RunResult(provenance=RunProvenance(source="bench/cand", model="cand"), tasks=made["c"]))


def decision(base: RunResult, cand: RunResult) -> Decision:
    gates = []
    for kind, task in (("primary", "gsm8k"), ("regression", "mmlu_pro"), ("regression", "ifeval")):
        metric, filt = METRIC[task]
        b, c = base.tasks[task].value(metric, filt), cand.tasks[task].value(metric, filt)
        assert b is not None and c is not None
        gates.append(GateVerdict(name=f"{task} {kind}", kind=kind, metric=f"{task}/{metric}/{filt}",  # type: ignore[arg-type]
                                 verdict="pass", outcome=f"{kind}_pass", effect="release", baseline=b, candidate=c,
                                 delta=c - b, ci=(c - b - 0.01, c - b + 0.01), ci_level=0.95, p_value=0.2,
                                 mde=0.012, n=N, reason="bench"))
    return Decision(decision="release", summary="release: bench", gates=gates, contract="bench_report",
                    alpha=0.05, seed=0)


def timed(label: str, func, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = func(*args, **kwargs)
    elapsed = time.perf_counter() - start
    print(f"  {label:<34} {elapsed:6.2f} s")
    return result, elapsed


def main() -> None:
    print(f"building {len(TASKS)} tasks × {N:,} paired samples ...")
    base, cand = runs()
    naive = sum(len(s.prompt or "") + sum(len(r) for r in s.responses) for run in (base, cand)
                for t in run.tasks.values() for s in t.samples)
    with tempfile.TemporaryDirectory() as tmp:
        contract_file = Path(tmp) / "contract.yaml"
        contract_file.write_text(CONTRACT, encoding="utf-8")
        contract = load_contract(contract_file)
        print("rendering:")
        model, t_model = timed("report model (pairing, radar, card)", build_report, decision(base, cand),
                               contract=contract, baseline=base, candidate=cand)
        html, t_html = timed("report.html", render_html, model)
        _, t_md = timed("report.md", render_markdown, model)
        _, t_junit = timed("junit.xml", render_junit, model)
        render_total = t_model + t_html + t_md + t_junit
        written, t_all = timed("write_model (all five files)", write_model, Path(tmp) / "out", model,
                               step_summary=False)
        stored = written["model"].stat().st_size
    size = len(html.encode())
    data = json.loads(html.split('id="rlgate-data">')[1].split("</script>")[0])
    embedded = sum(1 for t in data["tasks"] for r in t["rows"] if r[10] is not None)
    print(f"render time (model + HTML + Markdown + JUnit): {render_total:.2f} s   target < 3 s   "
          f"({render_total / 3:.2f}× target)")
    print(f"run folder incl. report_model.json ({stored / 1e6:.1f} MB):    {t_all + t_model:.2f} s")
    print(f"report.html: {size / 1e6:.2f} MB   target < 10 MB   ({size / 10e6:.2f}× target); "
          f"naive full-text embedding would be {naive / 1e6:.1f} MB ({naive / size:.1f}× larger)")
    print(f"documents with text embedded: {embedded:,} of {len(TASKS) * N:,} "
          f"(changed pairs first; every document's verdict is in the page; full text stays in the runs' sample files)")


if __name__ == "__main__":
    main()
