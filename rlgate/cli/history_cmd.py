"""`rlgate history`: list gated checkpoints per training run, or copy a history between backends."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rlgate._core.errors import InputError
from rlgate.cli.common import app, handles_input_errors

if TYPE_CHECKING:
    from rlgate.store.protocol import HistoryStore


@app.command()
@handles_input_errors
def history(
    contract: Annotated[Path | None, typer.Option(
        help="contract: its history, only its checkpoints, its gate directions and consultation budgets")] = None,
    training_run: Annotated[str | None, typer.Option(help="only this training run")] = None,
    store: Annotated[str | None, typer.Option(
        "--history", help="history path or URL (default: the contract's, else $RLGATE_HISTORY, else "
        ".rlgate/history.sqlite)")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    export: Annotated[Path | None, typer.Option(help="write every record to this JSON file")] = None,
    import_: Annotated[Path | None, typer.Option("--import", help="copy the records of an --export file in")] = None,
    html: Annotated[Path | None, typer.Option(
        help="also write a self-contained trend report: every gated metric against step, with intervals, "
        "decisions and the cross-checkpoint rules that fired")] = None,
) -> None:
    """Gated checkpoints per training run: step, decision, primary metric and interval, deciding gates, the best
    checkpoint, cross-checkpoint rules that fire, private-split consultations against their budget; --html FILE
    draws them as a trend page."""
    from rlgate.store.open import SETTING, history_url, open_history

    resolved = None
    if contract is not None:
        from rlgate.harness.vocabulary import load_contract

        resolved = load_contract(contract)
    location = store or history_url(resolved)
    setting = "--history" if store else SETTING
    if import_ is None and _absent_file(location, setting):
        db = _empty_history(location)  # a read never creates a store where it is run
    else:
        db = open_history(location, setting=setting)
    try:
        if (export is not None or import_ is not None) and html is not None:
            raise InputError("--html draws the history; --export/--import copy it", field="--html",
                             fix="run the copy first, then rlgate history --html FILE")
        if export is not None and import_ is not None:
            raise InputError("--export and --import copy in opposite directions", field="--export/--import",
                             fix="run one, then the other with --history naming the target")
        if export is not None:
            from rlgate.store.transfer import export_history

            n = export_history(db, export)
            typer.echo(f"exported {n[0]} checkpoint(s) and {n[1]} counter(s) from {db.location} to {export}")
            return
        if import_ is not None:
            from rlgate.store.transfer import import_history

            n = import_history(db, import_)
            typer.echo(f"imported {n[0]} checkpoint(s) and {n[1]} counter(s) from {import_} into {db.location}")
            return
        from rlgate.monitor.overview import build_overview, render_text

        written = None
        if html is not None:  # first, so that a path it cannot write stops before any output
            from rlgate.pipeline.history_report import write_history_html

            written = write_history_html(db, html, resolved, training_run)
        overview = build_overview(db, resolved, training_run)
        typer.echo(overview.model_dump_json(indent=2) if json_out else render_text(overview))
        if written is not None:
            typer.echo(f"wrote {written}", err=json_out)  # stdout stays JSON with --json
    finally:
        db.close()


def _absent_file(location: str, setting: str) -> bool:
    """Whether the history is a SQLite file that does not exist (yet) where one could be made."""
    from rlgate.store.open import scheme_of, sqlite_path

    scheme = scheme_of(location)
    if scheme not in (None, "sqlite"):
        return False
    path = Path(location) if scheme is None else sqlite_path(location, setting)
    # a path under a file is not "absent": opening it gives the located error
    return not path.exists() and all(p.is_dir() or not p.exists() for p in path.parents)


def _empty_history(location: str) -> HistoryStore:
    """An empty store shown under `location`'s name, kept in a temporary folder that goes when it is closed."""
    import shutil
    import tempfile

    from rlgate.store.history import SQLiteHistory

    folder = Path(tempfile.mkdtemp(prefix="rlgate-history-"))
    db = SQLiteHistory(folder / "history.sqlite")
    db.location = location
    close = db.close

    def close_and_remove() -> None:
        close()
        shutil.rmtree(folder, ignore_errors=True)

    db.close = close_and_remove  # type: ignore[method-assign]
    return db
