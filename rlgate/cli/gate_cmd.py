"""`rlgate gate`: decide on stored results of any registered harness (no model is run; torch and lm_eval are
never imported)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.files import write_text_atomic
from rlgate._core.gcpause import collector_paused, command_policy
from rlgate._core.text import visible_line
from rlgate.cli.common import DECISION_EXIT, app, handles_input_errors, output_folder, pydantic_plugins_off


@app.command()
@handles_input_errors
def gate(
    contract: Annotated[Path, typer.Argument(help="contract YAML file")],
    candidate: Annotated[Path, typer.Option(
        help="stored results of the candidate: an lm-eval output folder (run with --log_samples) or another "
        "harness's outputs")],
    baseline: Annotated[Path | None, typer.Option(
        help="stored results of the baseline (default: the contract's baseline.results)")] = None,
    out: Annotated[Path, typer.Option(
        help="folder for the reports: decision.json (the decision), report_model.json (everything the reports "
        "show), report.html, report.md, junit.xml (one test case per gate) and summary.md (the decision table)"
    )] = Path("rlgate-out"),
    seed: Annotated[int, typer.Option(help="seed of the bootstrap resampling")] = 0,
    harness: Annotated[str | None, typer.Option(
        help="harness that wrote the results (default: the one their run manifest names, else detected)")] = None,
    sequential: Annotated[bool, typer.Option(
        "--sequential", help="also replay the contract's protocol.sequential order (seeded, in chunks, anytime-valid "
        "bounds) and report the look at which the decision was reached")] = False,
) -> None:
    """Gate a candidate against its baseline on stored results; exit 0 release, 1 block, 3 research_only."""
    output_folder(out)
    # the runs, the decision and its reports all live until the process exits (rlgate._core.gcpause)
    with command_policy(), pydantic_plugins_off():
        with collector_paused():  # these modules live until the process exits (rlgate._core.gcpause)
            from rlgate.engine.summary import decision_markdown, decision_table
            from rlgate.harness import read_results
            from rlgate.harness.vocabulary import load_contract
            from rlgate.pipeline import decide_and_report
            from rlgate.report.io import stored_baselines

        resolved = load_contract(contract)
        baseline_dir = baseline or resolved.baseline_results
        # Without a baseline the comparative gates are nodata (never release); hard gates still apply.
        base_run = read_results(baseline_dir, harness=harness) if baseline_dir is not None else None
        cand_run = read_results(candidate, harness=harness)
        same = baseline_dir is not None and Path(baseline_dir).resolve() == Path(candidate).resolve()
        notes = [f"the baseline and the candidate are the same results ({candidate}): every comparison is a run "
                 "against itself"] if same else []
        outcome = decide_and_report(resolved, base_run, cand_run, out, seed=seed, checkpoint=str(candidate),
                                     sequential=sequential, warnings=notes)
        decision = outcome.decision
        baselines = stored_baselines(out)  # one-run gates' baselines, as the reports show them
        write_text_atomic(out / "summary.md", decision_markdown(decision, baselines))
        typer.echo(decision_table(decision, baselines))
        if decision.sequential is not None:
            from rlgate.engine.sequential import sequential_lines

            typer.echo("\n".join(sequential_lines(decision.sequential)))
        for warning in decision.warnings:
            typer.echo(f"warning: {visible_line(warning)}", err=True)
        written = ", ".join(str(path) for path in outcome.reports.values())
        typer.echo(f"wrote {written} and {out / 'summary.md'}")
        raise typer.Exit(DECISION_EXIT[decision.decision])
