"""A small dev-split contract on generated GSM8K-format documents, for watching runs of the tiny model."""

from __future__ import annotations

import json
from pathlib import Path


def write_contract(root: Path, baseline: Path, *, documents: int = 8, extra: str = "", private: bool = False,
                   sequential: str | None = None) -> Path:
    """contract.yaml + suite.yaml in `root`: gsm8k on `documents` generated problems in split dev (and, with
    `private`, the same task family on other problems in a release_gate_only split)."""
    from rlgate.demo import data

    generated = data.generate(3, gsm8k_test=documents * 2, mmlu_per_category=1, ifeval_test=1, gsm8k_train=4)
    rows = [e.row for e in generated.gsm8k_test]
    files = {}
    for name, part in (("dev", rows[:documents]), ("held", rows[documents:])):
        folder = root / "data" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
        (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part[:2]), encoding="utf-8")
        files[name] = folder
    tasks = [f"""  - task: gsm8k
    split: dev
    num_fewshot: 0
    data_files: {{test: "{files['dev']}/test.jsonl", train: "{files['dev']}/train.jsonl"}}
"""]
    splits = "  dev: {visibility: iteration}\n"
    if private:  # MMLU-Pro-format questions in a release_gate_only split with a consult budget of 2
        mmlu = root / "data" / "mmlu_pro.jsonl"
        mmlu.write_text("".join(json.dumps(e.row) + "\n" for e in generated.mmlu_test[:4]), encoding="utf-8")
        tasks.append(f"""  - task: mmlu_pro
    split: held
    num_fewshot: 0
    data_files: "{mmlu}"
""")
        splits += "  held: {visibility: release_gate_only, consult_budget: 2}\n"
        extra = "  regression:\n    - {metric: mmlu_pro/exact_match/custom-extract, max_drop: 0.10}\n" + extra
    (root / "suite.yaml").write_text("schema_version: 1\nname: watch_suite\nversion: \"1\"\ntasks:\n" + "".join(tasks),
                                     encoding="utf-8")
    (root / "contract.yaml").write_text(f"""schema_version: 1
name: watch_e2e
baseline:
  checkpoint: "{baseline}"
protocol:
  backend: hf
  chat_template: false
  sampling: {{temperature: 0.0, top_p: 1.0, n: 1, max_tokens: 24, seed: 1234}}
  hf: {{device: cpu, dtype: float32, batch_size: 16}}
{f"  sequential: {sequential}" + chr(10) if sequential else ""}splits:
{splits}suites: ["suite.yaml"]
gates:
  alpha: 0.05
  min_coverage: 1.0
  primary: {{metric: gsm8k/exact_match/flexible-extract, min_delta: 0.0}}
  hard:
    - {{metric: gsm8k/answer_parse_failure_rate, max: 0.5}}
{extra}""", encoding="utf-8")
    return root / "contract.yaml"
