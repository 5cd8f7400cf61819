"""`rlgate import`: convert lmms-eval samples files or VLMEvalKit result files into rows `rlgate eval --responses`
scores with lm-eval's own metric functions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate.cli.common import app, handles_input_errors


@app.command("import")
@handles_input_errors
def import_command(
    files: Annotated[list[Path], typer.Argument(help="lmms-eval <date>_samples_<task>.jsonl files, VLMEvalKit "
                                                "<model>_<dataset>.xlsx/.tsv/.csv/.json result files, or OpenCompass "
                                                "predictions/<model>/<dataset>.json files (or its run folder)")],
    source: Annotated[str, typer.Option("--from", help="the tool that wrote the files: lmms-eval, vlmevalkit or "
                                                       "opencompass")],
    out: Annotated[Path, typer.Option(help="responses JSONL to write (input of rlgate eval --responses)")] = Path(
        "responses.jsonl"),
    task: Annotated[str | None, typer.Option(
        help="lm-eval task the files answer (default: read from the file name)")] = None,
    harness: Annotated[str, typer.Option(help="the harness that scores the responses (registry name)")] = "lm_eval",
    answer_marker: Annotated[bool, typer.Option(
        help="prefix 'Final Answer: ' to chartqa / mathvista_testmini responses that lack it (lmms-eval and "
        "VLMEvalKit prompt for a bare answer; lm-eval's chartqa scorer reads only the marked answer)")] = False,
) -> None:
    """Convert lmms-eval, VLMEvalKit or OpenCompass predictions into a responses file for `rlgate eval --responses`."""
    from rlgate.harness.registry import get_harness

    report = get_harness(harness).convert_responses(files, source, out, task=task, answer_marker=answer_marker)
    for name, count in sorted(report.rows.items()):
        version = f"; benchmark version {report.versions[name]}" if name in report.versions else ""
        typer.echo(f"{name}: {count} responses (read as {source} output{version})")
    for note in report.notes:
        typer.echo(f"note: {note}", err=True)
    for why, count in report.skipped.items():
        typer.echo(f"skipped {count} rows: {why}")
    for name, count in sorted(report.bare.items()):
        if answer_marker:
            typer.echo(f"{name}: {count} bare answers prefixed with '{report.marker}'")
        else:
            typer.echo(f"warning: {count} {name} responses have no '{report.marker}' marker, which the task's scorer "
                       "reads; they will score as unparsed. If they are bare answers (lmms-eval / VLMEvalKit prompts), "
                       "convert with --answer-marker (the same for baseline and candidate)", err=True)
    typer.echo(f"wrote {out}; score it with: rlgate eval CONTRACT --responses {out} --out DIR")
