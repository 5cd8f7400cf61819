"""`rlgate report OUT_DIR`: re-render every report format from a run folder; nothing is re-run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.errors import InputError
from rlgate.cli.common import app, handles_input_errors


@app.command()
@handles_input_errors
def report(
    out_dir: Annotated[Path, typer.Argument(help="run folder written by `rlgate gate` / `rlgate check`")],
    template_dir: Annotated[Path | None, typer.Option(
        help="folder of templates overriding the built-in ones by name (report.html.j2, report.md.j2, ...)")] = None,
    html_url: Annotated[str | None, typer.Option(
        help="URL where report.html will be published; report.md links there instead of the file")] = None,
    step_summary: Annotated[bool, typer.Option(
        help="append report.md to $GITHUB_STEP_SUMMARY when that variable is set")] = True,
) -> None:
    """Write report.html, report.md, decision.json and junit.xml again from decision.json and report_model.json."""
    from rlgate.report.io import rerender

    if template_dir is not None and not template_dir.is_dir():
        raise InputError("is a file, not a template folder" if template_dir.exists() else "template folder does not "
                         "exist", file=template_dir, field="--template-dir",
                         fix="pass a folder holding report.html.j2 / report.md.j2 / report.css / report.js")
    written = rerender(out_dir, template_dir=template_dir, html_url=html_url, step_summary=step_summary)
    for kind, path in written.items():
        typer.echo(f"wrote {path}" if kind != "step_summary" else f"appended report.md to {path}")
