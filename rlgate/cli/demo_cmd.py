"""`rlgate demo`: the whole release gate on two tiny checkpoints it trains itself — offline, on CPU, in minutes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate.cli.common import DECISION_EXIT, app, handles_input_errors


@app.command()
@handles_input_errors
def demo(
    out: Annotated[Path, typer.Option(help="folder for the demo's data, checkpoints, cache and reports")] = Path(
        "rlgate-demo"),
) -> None:
    """Generate GSM8K/MMLU-Pro/IFEval-format data, train a baseline and a candidate, and run `rlgate check` on them."""
    from rlgate.cli.check_cmd import print_outcome
    from rlgate.cli.progress import RichProgress, quiet_environment

    quiet_environment()
    from rlgate.demo.run import run_demo

    with RichProgress() as progress:
        paths, result = run_demo(out, progress=progress, log=progress.message)
    print_outcome(result)
    code = DECISION_EXIT[result.decision.decision]
    typer.echo(f"open {result.reports.get('html', paths.root / 'report' / 'report.html')} in a browser")
    typer.echo(f"re-run the gate yourself: rlgate check {paths.contract} --checkpoint {paths.candidate} "
               f"--out {paths.root / 'report'} --cache {paths.root / 'cache'}   (exit code {code})")
