"""`rlgate validate`, `rlgate schema`, `rlgate init`: the contract commands."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from rlgate._core.errors import InputError
from rlgate.cli.common import EXIT_BAD_INPUT, app, handles_input_errors, output_folder

INIT_FILES = {
    "contract.yaml": "contracts/my_contract.yaml",
    "suite.yaml": "suites/my_suite.yaml",
    "gate_policy.yaml": "gates/release_policy.yaml",
}
#: The JSON Schemas `init` writes beside them, so each file's `$schema` line works offline.
INIT_SCHEMAS = {"contract": "schemas/contract.v1.json", "suite": "schemas/suite.v1.json",
                "gate-policy": "schemas/gate-policy.v1.json"}


@app.command()
@handles_input_errors
def validate(
    contract: Annotated[Path, typer.Argument(help="contract YAML file")],
) -> None:
    """Check a contract and every file it references; print a one-screen summary."""
    from rlgate.contract.summary import contract_summary
    from rlgate.harness.vocabulary import load_contract

    resolved = load_contract(contract)
    if resolved.contract.monitor and resolved.contract.monitor.policy:  # a file it references, read by the monitor
        from rlgate.monitor.api import contract_policy

        contract_policy(resolved)
    from rlgate.harness.registry import get_harness

    harnesses = {t.name: get_harness(t.harness) for t in resolved.tasks}
    typer.echo(contract_summary(resolved, agent_tasks=any(h.runs_agents for h in harnesses.values())))
    needs = {t.name: harnesses[t.name].requirements(t) for t in resolved.tasks}
    if any(needs.values()):
        typer.echo("tasks need:")
        for name, found in needs.items():
            if not found:
                continue
            typer.echo(f"  {name:<14} {'; '.join(found.needs)}")
            for problem in found.missing:
                typer.echo(f"  {'':<14} missing here: {problem}")
            for note in found.notes:
                typer.echo(f"  {'':<14} note: {note}")
    typer.echo("ok: contract is valid")


@app.command()
@handles_input_errors
def schema(
    kind: Annotated[str, typer.Option(help="contract | suite | gate-policy | decision")] = "contract",
    out: Annotated[Path | None, typer.Option(help="write to this file instead of stdout")] = None,
) -> None:
    """Print the JSON Schema of contracts (for editors and yaml-language-server) or of decision.json."""
    from rlgate.contract.schema import SCHEMAS, json_schema_text
    from rlgate.report.schema import decision_json_schema_text

    kinds = [*SCHEMAS, "decision"]
    if kind not in kinds:
        raise InputError(f"unknown schema kind '{kind}'", field="--kind", fix=f"use one of {', '.join(kinds)}")
    text = decision_json_schema_text() if kind == "decision" else json_schema_text(kind)
    if out:
        from rlgate._core.files import write_text_atomic

        try:
            write_text_atomic(out, text)
        except OSError as exc:
            raise InputError(f"cannot write the schema: {exc.strerror or exc}", file=out, field="--out",
                             fix="name a file in a writable folder, e.g. --out contract.schema.json") from None
        typer.echo(f"wrote {out}")
    else:
        typer.echo(text, nl=False)


def scaffold(directory: Path, force: bool) -> list[Path]:
    """Write a contract, a suite and a gate policy that validate together, and their JSON Schemas
    (the files' `$schema` comments point at these local copies, so editors work offline)."""
    from rlgate.contract.schema import json_schema_text

    targets = [(src, directory / dst) for src, dst in INIT_FILES.items()]
    existing = [dst for _, dst in targets if dst.exists()]
    if existing and not force:
        raise InputError("file already exists", file=existing[0],
                         fix="choose another folder or pass --force to overwrite")
    written = []
    package = resources.files("rlgate") / "templates" / "init"
    for src, dst in targets:
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text((package / src).read_text(encoding="utf-8"), encoding="utf-8")
        written.append(dst)
    for kind, relative in INIT_SCHEMAS.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json_schema_text(kind), encoding="utf-8")
        written.append(path)
    return written


@app.command()
@handles_input_errors
def init(
    directory: Annotated[Path, typer.Argument(help="project folder")] = Path("."),
    force: Annotated[bool, typer.Option(help="overwrite existing files")] = False,
    github: Annotated[bool, typer.Option("--github", help="add .github/workflows/rlgate-gate.yml "
                                         "(and a contract if the repository has none)")] = False,
) -> None:
    """Scaffold a contract, a suite and a gate policy that validate."""
    from rlgate.harness.vocabulary import load_contract

    output_folder(directory, "DIRECTORY")
    if github:
        from rlgate.scaffold.github import init_github

        result = init_github(directory, force, scaffold)
        load_contract(result.contract)
        for path in result.written:
            typer.echo(f"wrote {path}")
        if result.note:
            typer.echo(result.note)
        typer.echo(f"gates with {result.contract}; next: commit, add a runner labelled 'gpu', see docs/ci.md")
        return
    written = scaffold(directory, force)
    load_contract(written[0])
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo(f"next: edit the tasks and the baseline in {written[0]}, then run: rlgate validate {written[0]}")
    typer.echo(f"then gate a checkpoint: rlgate check {written[0]} --checkpoint PATH")


__all__ = ["EXIT_BAD_INPUT", "init", "schema", "validate"]
