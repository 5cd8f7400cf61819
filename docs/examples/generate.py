"""Regenerate the example report in docs/examples from the real MMLU-Pro outputs.

    python docs/examples/generate.py [--shared-data ../shared/data] [--screenshot]

Llama-3.1-8B (baseline) vs Llama-3.1-8B-Instruct (candidate) on all 12,032 MMLU-Pro questions:
TIGER-Lab's published outputs (../shared/data/outputs/mmlu_pro) become lm-eval output folders
(tests/fixtures/lmeval_builders.py, scored by lm-eval's own filter and metric), `rlgate.engine.decide`
gates them under mmlu_pro_contract.yaml, rlgate.badcases adds its clusters and next actions, and the
report is written with every aggregate but only a
handful of documents per category (those with published generated text, changed pairs first).
Writes mmlu_pro_report.html and mmlu_pro_report.md here; nothing of the shared data is copied
beyond those few samples.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SAMPLES_PER_TASK = 3


def shared_data(given: str | None) -> Path:
    for candidate in [given, os.environ.get("RLGATE_SHARED_DATA"), str(REPO.parent / "shared" / "data")]:
        if candidate and (Path(candidate) / "outputs" / "mmlu_pro").is_dir():
            return Path(candidate)
    sys.exit("error: ../shared/data (real MMLU-Pro outputs) not found; pass --shared-data")


def handful(model, limit: int):  # type: ignore[no-untyped-def]
    """Keep `limit` documents per task: real generated text on both sides, changed pairs first."""
    from rlgate.report.model import CHANGES

    synthetic = "The answer is ("
    rank = {c: i for i, c in enumerate(CHANGES)}
    tasks = []
    for section in model.tasks:
        table = section.samples
        real = [i for i in range(len(table))
                if all(text and not text.startswith(synthetic)
                       for text in (table.baseline_response[i], table.candidate_response[i]))]
        real.sort(key=lambda i: (rank[table.change[i]], table.doc_id[i]))
        tasks.append(section.with_rows(sorted(real[:limit])))
    shown = sum(len(t.samples) for t in tasks)
    total = sum(t.samples_total for t in tasks)
    note = (f"{shown} of {total} documents are in this example ({limit} per category with published generated "
            "text, changed pairs first); counts and aggregates cover every document")
    return model.model_copy(update={"tasks": tasks, "sample_note": note, "html_name": "mmlu_pro_report.html",
                                    "text_left_out": 0})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared-data")
    parser.add_argument("--out", default=str(HERE), help="folder for mmlu_pro_report.html/.md")
    parser.add_argument("--screenshot", action="store_true", help="also save a PNG of the page (needs chromium)")
    parser.add_argument("--limit", type=int, help="documents per category (quick checks; the example uses all)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "tests"))  # tests/fixtures/lmeval_builders.py imports `fixtures.`
    from rlgate.badcases.report import attach_badcases, build_badcase_report, classify_options
    from rlgate.engine.decision import decide
    from rlgate.harness.lmeval.folder import read_lmeval_folder
    from rlgate.harness.vocabulary import load_contract  # the gates read their tasks' harness vocabulary
    from rlgate.report.builder import build_report
    from rlgate.report.io import write_model
    from tests.fixtures.lmeval_builders import build_mmlu_pro_llama_folder

    data = shared_data(args.shared_data)
    contract = load_contract(HERE / "mmlu_pro_contract.yaml")
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        base = read_lmeval_folder(build_mmlu_pro_llama_folder(data, "base", Path(tmp) / "base", args.limit))
        cand = read_lmeval_folder(build_mmlu_pro_llama_folder(data, "instruct", Path(tmp) / "instruct", args.limit))
        decision = decide(contract.gates, base, cand, seed=0, contract_name=contract.name)
        badcases = build_badcase_report(cand, base, options=classify_options(contract), alpha=decision.alpha,
                                        gates=decision.gates)
        decision = attach_badcases(decision, badcases)
        # the summary sections stay; the full badcase dump (examples of every cluster) is not for a docs page
        decision.extensions.pop("badcases", None)
        model = handful(build_report(decision, contract=contract, baseline=base, candidate=cand), SAMPLES_PER_TASK)
        written = write_model(Path(tmp) / "run", model, step_summary=False)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(written["html"], out / "mmlu_pro_report.html")
        shutil.copyfile(written["markdown"], out / "mmlu_pro_report.md")
    print(f"decision: {decision.decision} — {decision.summary}")
    print(f"wrote {out / 'mmlu_pro_report.html'} and {out / 'mmlu_pro_report.md'}")
    if args.screenshot:
        from tests.report.browser import visit

        visit(out / "mmlu_pro_report.html", out / "mmlu_pro_report.png", full_page=False)
        print(f"wrote {out / 'mmlu_pro_report.png'}")


if __name__ == "__main__":
    main()
