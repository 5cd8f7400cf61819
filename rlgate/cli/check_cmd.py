"""`rlgate check`: the release gate on a checkpoint — evaluate baseline and candidate, gate, write the reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.text import visible_line
from rlgate.cli.common import DECISION_EXIT, app, handles_input_errors, output_folder


def print_outcome(result: object) -> None:
    """The gate table, the warnings and where the reports are."""
    from rlgate.engine.summary import decision_table
    from rlgate.orchestrate import CheckResult
    from rlgate.report.io import stored_baselines

    assert isinstance(result, CheckResult)
    decision = result.decision
    folder = next((path.parent for kind, path in result.reports.items() if kind in ("html", "markdown")), None)
    typer.echo(decision_table(decision, stored_baselines(folder) if folder is not None else None))
    if decision.sequential is not None:
        from rlgate.engine.sequential import sequential_lines

        typer.echo("\n".join(sequential_lines(decision.sequential)))
    for warning in decision.warnings:
        typer.echo(f"warning: {visible_line(warning)}", err=True)
    for kind in ("html", "markdown", "decision", "junit"):
        if kind in result.reports:
            typer.echo(f"{kind:>9}: {result.reports[kind]}")


@app.command()
@handles_input_errors
def check(
    contract: Annotated[Path, typer.Argument(help="contract YAML file")],
    checkpoint: Annotated[str, typer.Option(help="candidate checkpoint: a folder or a Hugging Face id")],
    out: Annotated[Path, typer.Option(help="folder for the runs, decision.json and the reports")] = Path("rlgate-out"),
    cache: Annotated[Path | None, typer.Option(help="cache folder (default $RLGATE_CACHE_DIR or .rlgate)")] = None,
    lora_base: Annotated[str | None, typer.Option(help="base model of a LoRA adapter candidate")] = None,
    limit: Annotated[int | None, typer.Option(help="documents per task (smoke runs only)", min=1)] = None,
    seed: Annotated[int, typer.Option(help="seed of the bootstrap resampling")] = 0,
    baseline: Annotated[str | None, typer.Option(
        help="baseline instead of the contract's: a checkpoint or an lm-eval results folder")] = None,
) -> None:
    """Evaluate the baseline (cached) and the candidate, decide, write reports.

    Exit 0 release, 1 block, 3 research_only, 2 bad input.
    """
    from rlgate.cli.progress import RichProgress, quiet_environment

    output_folder(out)
    if cache is not None:
        output_folder(cache, "--cache")
    quiet_environment()
    from rlgate.orchestrate import check as run_check

    # models run in this process: no collector policy (rlgate._core.gcpause)
    with RichProgress() as progress:
        result = run_check(contract, checkpoint, out, cache_dir=cache, lora_base=lora_base, limit=limit,
                           seed=seed, progress=progress, baseline=baseline)
    print_outcome(result)
    raise typer.Exit(DECISION_EXIT[result.decision.decision])
