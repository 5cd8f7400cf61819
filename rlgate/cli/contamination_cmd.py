"""`rlgate contamination CONTRACT --train FILE`: eval documents that share long n-grams with training data."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.errors import InputError
from rlgate._core.text import visible_line
from rlgate.cli.common import DECISION_EXIT, app, handles_input_errors, output_folder


@app.command()
@handles_input_errors
def contamination(
    contract: Annotated[Path, typer.Argument(help="contract YAML file (its tasks are the eval sets)")],
    train: Annotated[list[Path] | None, typer.Option(help="training file (JSONL or text, .gz ok); repeatable; "
                                                     "default: the contract's contamination.train_files")] = None,
    results: Annotated[Path | None, typer.Option(help="lm-eval output folder whose logged documents stand in "
                                                 "for tasks without local data_files")] = None,
    ngram: Annotated[int | None, typer.Option(help="n-gram length in tokens (default 13)")] = None,
    min_overlap: Annotated[float | None, typer.Option(help="share of a document's n-grams that must occur in "
                                                      "training to count (default 0: any)")] = None,
    field: Annotated[str | None, typer.Option(help="JSON field holding the training text (dotted path)")] = None,
    out: Annotated[Path | None, typer.Option(help="folder for contamination.json")] = None,
    show: Annotated[int, typer.Option(help="overlapping documents listed per task")] = 10,
) -> None:
    """Share of each task's documents found in the training data; exit 1 when the contract's max_rate gate fails."""
    from rlgate.contamination.api import contract_contamination
    from rlgate.contamination.index import contamination_gates
    from rlgate.engine.models import DECISION_ORDER
    from rlgate.harness.vocabulary import load_contract

    # the contract's own bounds (contamination.min_overlap, .ngram); nan fails the comparison too, and would
    # count no document as contaminated
    if min_overlap is not None and not 0.0 <= min_overlap <= 1.0:
        raise InputError(f"{min_overlap} is not a share of a document's n-grams", field="--min-overlap",
                         fix="give a number in [0, 1], e.g. 0.5 (0: any shared n-gram counts)")
    if ngram is not None and not 3 <= ngram <= 64:
        raise InputError(f"an n-gram of {ngram} tokens is outside 3..64", field="--ngram",
                         fix="give 3 to 64 tokens (13 as in GPT-3 / lm-eval)")
    if out is not None:
        output_folder(out)
    resolved = load_contract(contract)
    run = None
    if results is not None:
        from rlgate.harness import read_results

        run = read_results(results)

    def progress(path: str, lines: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{path}: {lines:,} lines", end="", file=sys.stderr, flush=True)

    report = contract_contamination(resolved, train=train or (), results=run, ngram=ngram, min_overlap=min_overlap,
                                    text_field=field, progress=progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    lines = sum(f.lines for f in report.train_files)
    typer.echo(f"{report.ngram}-gram overlap of {len(report.tasks)} tasks with {lines:,} training lines "
               f"({report.train_ngrams:,} n-grams) in {report.seconds:.1f} s")
    typer.echo(f"{'task':<24} {'docs':>7} {'checked':>8} {'contaminated':>13} {'rate':>8}  partial")
    for task in report.tasks:
        typer.echo(f"{task.task:<24} {task.n_docs:>7} {task.n_checked:>8} {task.n_contaminated:>13} "
                   f"{100 * task.rate:>7.2f}%  {task.n_partial}" + ("  (private: ids only)" if task.private else ""))
    for task in report.tasks:
        for doc in task.documents[:show]:
            where = f"{doc.leaf}/{doc.doc_id}" if doc.leaf else str(doc.doc_id)
            shared = f'  "{doc.ngram}"' if doc.ngram else ""
            typer.echo(f"  {task.task} doc {where}: {doc.matched_ngrams}/{doc.total_ngrams} n-grams "
                       f"({100 * doc.overlap:.0f}%), first in {doc.train_file}:{doc.train_line}{shared}")
        more = len(task.documents) - show + task.documents_omitted
        if more > 0:
            typer.echo(f"  ... and {more} more {task.task} documents (see contamination.json)")
    for warning in report.warnings:
        typer.echo(f"warning: {visible_line(warning)}", err=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "contamination.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        typer.echo(f"wrote {out / 'contamination.json'}")
    gates = contamination_gates(report)
    policy = resolved.gates.decision
    effects = [getattr(policy, g.outcome) if g.outcome != "pass" else "release" for g in gates]
    worst = min(effects, key=DECISION_ORDER.index, default="release")
    for gate in gates:
        if gate.verdict != "pass":
            said = gate.reason if gate.reason.startswith(f"{gate.verdict}:") else f"{gate.verdict}: {gate.reason}"
            typer.echo(f"gate {gate.name}: {said}")
    raise typer.Exit(DECISION_EXIT[worst])
