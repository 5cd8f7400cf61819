"""`rlgate badcases OUT_DIR`: failure clusters, next actions and the next round's data from a gated run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.files import write_text_atomic
from rlgate.cli.common import app, handles_input_errors


@app.command()
@handles_input_errors
def badcases(
    out_dir: Annotated[Path, typer.Argument(help="output folder of `rlgate gate`/`rlgate check` (or one with "
                                            "candidate/ and baseline/ lm-eval folders)")],
    export: Annotated[Path | None, typer.Option(help="write the failed public samples here as JSONL")] = None,
    contract: Annotated[Path | None, typer.Option(help="contract the runs were gated under (which tasks are "
                                                  "private)")] = None,
    only_new: Annotated[bool, typer.Option(help="export only documents the baseline got right")] = False,
    examples: Annotated[int, typer.Option(help="examples kept per cluster")] = 3,
    anchors: Annotated[Path | None, typer.Option(help="anchor set JSON: flags a difficulty change between "
                                                 "suite versions")] = None,
    allow_version_mismatch: Annotated[bool, typer.Option(help="compare runs made on different benchmark "
                                                         "versions (listed in the report)")] = False,
) -> None:
    """Explain a decision by failure clusters, propose next actions, export badcases for training."""
    from rlgate.badcases.checks import folder_badcases
    from rlgate.badcases.export import export_badcases
    from rlgate.badcases.report import attach_badcases, render_summary

    found = folder_badcases(out_dir, contract=contract, allow_version_mismatch=allow_version_mismatch,
                            anchors=anchors, max_examples=examples)
    typer.echo(render_summary(found.report, found.decision))
    write_text_atomic(out_dir / "badcases.json", found.report.model_dump_json(indent=2) + "\n")
    written = [str(out_dir / "badcases.json")]
    if found.decision is not None:
        updated = attach_badcases(found.decision, found.report)
        write_text_atomic(out_dir / "decision.json", updated.model_dump_json(indent=2) + "\n")
        written.append(f"{out_dir / 'decision.json'} (extensions)")
    if export is not None:
        summary = export_badcases(export, found.candidate, found.baseline, found.private_tasks, found.options,
                                  only_new=only_new)
        classes = ", ".join(f"{k}: {v}" for k, v in sorted(summary.by_class.items(), key=lambda kv: -kv[1]))
        suffix = f" ({classes})" if classes else ""
        typer.echo(f"exported {summary.written} failed samples to {summary.path}{suffix}")
        if summary.private_withheld:
            typer.echo(f"withheld {summary.private_withheld} samples of release_gate_only tasks")
    typer.echo("wrote " + ", ".join(written))
