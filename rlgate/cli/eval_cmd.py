"""`rlgate eval`: run a contract's suites on one checkpoint, or score imported responses, into an lm-eval folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.errors import InputError
from rlgate.cli.common import app, handles_input_errors, output_folder


def metrics_table(folder: Path) -> str:
    """Each task's headline metrics from the results the harness just wrote."""
    from rlgate.harness import read_results

    run = read_results(folder, samples=False)
    rows = [("task", "metric", "filter", "value", "n")]
    for group, filters in run.group_metrics.items():
        for filt, metrics in filters.items():
            rows += [(group, m, filt, f"{v:.4f}" if v is not None else "-", "") for m, v in metrics.items()
                     if not m.endswith("_stderr")]
    for name, task in run.tasks.items():
        if any(name in leaves for leaves in run.groups.values()):
            continue
        for filt, metrics in task.metrics.items():
            rows += [(name, m, filt, f"{v:.4f}" if v is not None else "-", str(task.n_samples))
                     for m, v in metrics.items()]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


@app.command("eval")
@handles_input_errors
def eval_command(
    contract: Annotated[Path, typer.Argument(help="contract YAML file")],
    checkpoint: Annotated[str | None, typer.Option(help="checkpoint folder or Hugging Face id to evaluate")] = None,
    responses: Annotated[Path | None, typer.Option(
        help='JSONL of generations made elsewhere: {"task", "doc_id" or "doc", "response"} per line')] = None,
    out: Annotated[Path, typer.Option(help="output folder (lm-eval format + run_manifest.json)")] = Path("rlgate-eval"),
    split: Annotated[list[str] | None, typer.Option(
        help="evaluate only this split (repeatable); default: every split except release_gate_only")] = None,
    limit: Annotated[int | None, typer.Option(help="documents per task (smoke runs only)", min=1)] = None,
    cache: Annotated[Path | None, typer.Option(help="cache folder (default $RLGATE_CACHE_DIR or .rlgate)")] = None,
    lora_base: Annotated[str | None, typer.Option(help="base model of a LoRA adapter checkpoint")] = None,
    responded_only: Annotated[bool, typer.Option(
        help="with --responses: refuse a task no response answers (only answered documents are ever scored; "
        "the others are listed as missing and lower the task's coverage)")
    ] = False,
    shard: Annotated[str | None, typer.Option(
        help="K/N: evaluate shard K of N (every task's K-th document range) into --out with its shard.json; "
        "`rlgate merge` joins the N folders")] = None,
) -> None:
    """Evaluate one checkpoint (or imported responses) on the contract's suites; writes an lm-eval output folder."""
    from rlgate.cli.progress import RichProgress, quiet_environment

    quiet_environment()
    from rlgate.app.runs import eval_contract

    if (checkpoint is None) == (responses is None):
        raise InputError("give exactly one of --checkpoint (run a model) or --responses (score imported generations)",
                         field="--checkpoint", fix="rlgate eval CONTRACT --checkpoint PATH --out DIR")
    if responded_only and responses is None:
        raise InputError("--responded-only applies to --responses", field="--responded-only",
                         fix="drop --responded-only or pass --responses FILE")
    from rlgate.app.shards import parse_shard

    shard_of = parse_shard(shard) if shard is not None else None
    if shard_of is not None and responses is not None:
        raise InputError("--shard splits a live run's documents; imported responses are scored in one run",
                         field="--shard", fix="drop --shard, or evaluate a --checkpoint")
    output_folder(out)
    if cache is not None:
        output_folder(cache, "--cache")
    with RichProgress() as progress:
        outcome = eval_contract(contract, out, checkpoint=checkpoint, responses=responses, splits=split, limit=limit,
                                cache_dir=cache, lora_base=lora_base, responded_only=responded_only,
                                progress=progress, shard=shard_of)
    manifest = outcome.manifest
    typer.echo(metrics_table(out))
    requests = sum(t.requests for t in manifest.tasks)
    cached = sum(t.cached for t in manifest.tasks)
    drops = manifest.drops
    typer.echo(f"requests: {requests} ({cached} from cache; model {'loaded' if outcome.model_loaded else 'not loaded'})"
               f"; dropped: {drops.errored} errored, {drops.timed_out} timed out, {drops.empty} empty, "
               f"{drops.missing} missing"
               + (f", {drops.limited} hit a limit" if drops.limited else "")
               + (f", {drops.sandbox_failed} sandbox failed" if drops.sandbox_failed else "")
               + " (scored as failures)")
    for run in manifest.tasks:  # coverage: scores above are over the answered documents only
        if run.expected_documents is not None:
            share = run.documents / run.expected_documents if run.expected_documents else 0.0
            typer.echo(f"coverage {run.task}: {run.documents}/{run.expected_documents} documents answered "
                       f"({share:.1%}); scores are over the answered documents"
                       + (f"; {len(run.missing_documents)} missing listed in run_manifest.json"
                          if run.missing_documents else ""))
    report = manifest.import_report
    if report is not None:
        typer.echo(f"imported {report.rows} rows: {report.matched} matched, {report.unmatched} unmatched, "
                   f"{report.duplicates} identical duplicates collapsed, {report.unknown_task} for tasks not in "
                   "the contract")
        for example in report.examples:
            typer.echo(f"  {example}")
        if report.duplicates:
            typer.echo(f"warning: {report.duplicates} identical duplicate row{'s' if report.duplicates != 1 else ''} "
                       f"in {report.file} collapsed (each response used once)", err=True)
    typer.echo(f"wrote {outcome.results_file} and {out / 'run_manifest.json'}"
               + (f"; shard {shard_of[0]}/{shard_of[1]}: {out / 'shard.json'} (rlgate merge joins the shards)"
                  if shard_of else ""))
