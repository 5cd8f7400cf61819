"""`rlgate merge`: the N folders of `rlgate eval --shard K/N` become the one results folder one process writes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlgate.cli.common import app, handles_input_errors, output_folder


@app.command()
@handles_input_errors
def merge(
    shard_dirs: Annotated[list[Path], typer.Argument(help="the N shard folders of one run (any order)")],
    out: Annotated[Path, typer.Option(help="output folder of the merged run (what one process writes: lm-eval files "
                                           "or inspect logs, and run_manifest.json)")],
    cache: Annotated[Path | None, typer.Option(help="cache folder (default $RLGATE_CACHE_DIR or .rlgate)")] = None,
    contract: Annotated[Path | None, typer.Option(
        help="the shards' contract, where it is not at the path they recorded")] = None,
) -> None:
    """Merge the shards of one run: refused unless they are shards 1..N of one contract, protocol and checkpoint
    with every document in exactly one shard; the merged folder equals the single-process run's."""
    from rlgate.cli.progress import quiet_environment

    quiet_environment()
    from rlgate.app.shards import merge_shards
    from rlgate.cli.eval_cmd import metrics_table

    output_folder(out)
    if cache is not None:
        output_folder(cache, "--cache")
    outcome = merge_shards(shard_dirs, out, cache_dir=cache, contract=contract)
    typer.echo(metrics_table(out))
    documents = sum(t.documents for t in outcome.manifest.tasks)
    typer.echo(f"merged {len(shard_dirs)} shards: {documents} documents, each from exactly one shard; wrote "
               f"{outcome.results_file} and {out / 'run_manifest.json'}")
