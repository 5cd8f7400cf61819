"""`rlgate init --github`: add the gate-every-checkpoint workflow (and a contract, if none) to a repository.

The workflow is rendered from one packaged template by plain placeholder replacement (the file is
full of `${{ }}` expressions, which a template engine would fight with). This repository's own
`.github/workflows/gate-checkpoint.yml` is the same template rendered with `uses: ./`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from rlgate._core.errors import InputError

#: What users' workflows reference; the action is `action.yml` at this repository's root.
DEFAULT_ACTION_REF = "rlgate/rlgate@v1"
WORKFLOW_PATH = Path(".github") / "workflows" / "rlgate-gate.yml"
#: The contract `rlgate init` scaffolds, relative to the repository.
SCAFFOLD_CONTRACT = Path("contracts") / "my_contract.yaml"


def render_workflow(contract: str, action_ref: str = DEFAULT_ACTION_REF) -> str:
    """The workflow text for a contract path (relative to the repository root, POSIX separators)."""
    for name, value in (("contract", contract), ("action", action_ref)):
        if not value or any(ch in value for ch in "\n\r#'\"{}$`") or value != value.strip():
            raise InputError(f"{name} {value!r} cannot be written into a workflow safely",
                             fix="use a plain relative path / owner/repo@ref without quotes, $, # or braces")
    template = (resources.files("rlgate") / "templates" / "github" / "workflow.yaml").read_text(encoding="utf-8")
    return template.replace("__CONTRACT__", contract).replace("__ACTION__", action_ref)


def find_contracts(repo: Path) -> list[Path]:
    """Contract files already in `contracts/` (any YAML file there that declares `schema_version`)."""
    folder = repo / "contracts"
    if not folder.is_dir():
        return []
    found = [p for p in sorted(folder.iterdir()) if p.suffix in {".yaml", ".yml"} and p.is_file()]
    return [p for p in found if "schema_version" in p.read_text(encoding="utf-8", errors="replace")]


@dataclass
class GithubInit:
    """What `init_github` did: the contract the workflow gates with, and every file it wrote."""

    contract: Path
    written: list[Path] = field(default_factory=list)
    note: str = ""


def init_github(repo: Path, force: bool, scaffold: Callable[[Path, bool], list[Path]],
                action_ref: str = DEFAULT_ACTION_REF) -> GithubInit:
    """Write `.github/workflows/rlgate-gate.yml`; scaffold a contract first when the repository has none.

    `scaffold(repo, force)` is the plain `rlgate init` (contract, suite, gate policy; contract first),
    passed in so this layer does not reach back into the CLI.
    """
    workflow = repo / WORKFLOW_PATH
    if workflow.exists() and not force:
        raise InputError("file already exists", file=workflow, fix="pass --force to overwrite it")
    existing = find_contracts(repo)
    written: list[Path] = []
    note = ""
    if existing:
        preferred = repo / SCAFFOLD_CONTRACT
        contract = preferred if preferred in existing else existing[0]
        if len(existing) > 1:
            note = (f"{len(existing)} contracts found; the workflow uses {contract.relative_to(repo).as_posix()} "
                    f"(edit CONTRACT in {WORKFLOW_PATH.as_posix()} to choose another)")
    else:
        written = scaffold(repo, force)
        contract = written[0]
    text = render_workflow(contract.relative_to(repo).as_posix(), action_ref)
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(text, encoding="utf-8")
    return GithubInit(contract=contract, written=[*written, workflow], note=note)
