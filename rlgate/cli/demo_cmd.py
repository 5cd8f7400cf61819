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
    rerun = _fresh_folder(paths.root / "report-rerun")
    typer.echo(f"re-run the gate yourself (writes to a new folder, {rerun.name}; the demo's report stays): "
               f"rlgate check {paths.contract} --checkpoint {paths.candidate} --out {rerun} "
               f"--cache {paths.root / 'cache'}   (exit code {code})")


def _fresh_folder(path: Path) -> Path:
    """`path`, or `path-2`, `path-3`, … : a folder that does not exist yet."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate
