"""Every contract snippet in the README and docs/ validates with `rlgate validate`.

A YAML block whose top-level keys are all contract fields is a contract snippet: a whole contract (it has
`schema_version`) is validated as it is; a part of one (e.g. `capabilities:` or `judge:`) must validate laid
over one of the example contracts (the README's, the README's with the VLM suite and a judge endpoint added, or
contracts/agent_tools.yaml), the way the docs tell a reader to add it. The suites and gate policies they name
are the repository's own, copied beside them with the agent demo's task folder; the local data files the VLM
suite names stand in as empty files (validate checks that they exist; only a run reads them).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app

BLOCK = re.compile(r"^```ya?ml\n(.*?)^```", re.S | re.M)


def _pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _contract_fields(root: Path) -> set[str]:
    return set(json.loads((root / "docs" / "schema" / "contract.v1.json").read_text(encoding="utf-8"))["properties"])


def snippets(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, parsed YAML) of every contract snippet, whole or partial."""
    fields, found = _contract_fields(root), []
    for page in _pages(root):
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            data = yaml.safe_load(match.group(1))
            if isinstance(data, dict) and data and set(data) <= fields:
                line = text[: match.start()].count("\n") + 1
                found.append((f"{page.relative_to(root)}:{line}", data))
    return found


def _overlay(base: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in part.items():
        out[key] = _overlay(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def test_the_docs_have_contract_snippets(repo_root: Path) -> None:
    whole = [where for where, data in snippets(repo_root) if "schema_version" in data]
    assert any(w.startswith("README.md") for w in whole) and len(snippets(repo_root)) >= 5


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("where", "data"), snippets(REPO), ids=[w for w, _ in snippets(REPO)])
def test_contract_snippet_validates(repo_root: Path, tmp_path: Path, where: str, data: dict[str, Any]) -> None:
    found = snippets(repo_root)
    _project(repo_root, tmp_path)
    readme = next(d for w, d in found if w.startswith("README.md") and "schema_version" in d)
    vlm = {**readme, "suites": [*readme["suites"], "suites/vlm_reasoning_regression.yaml"],
           "judge": {"model": {"base_url": "http://127.0.0.1:8000/v1", "model": "judge-7b"}}}
    bases = [readme, vlm,
             yaml.safe_load((repo_root / "contracts" / "agent_tools.yaml").read_text(encoding="utf-8"))]
    outputs = []
    for n, base in enumerate([data] if "schema_version" in data else bases):
        contract = data if base is data else _overlay(base, data)
        path = tmp_path / f"snippet{n}.yaml"
        path.write_text(yaml.safe_dump(contract, sort_keys=False), encoding="utf-8")
        result = CliRunner().invoke(app, ["validate", str(path)])
        if result.exit_code == 0:
            return
        outputs.append(result.output)
    pytest.fail(f"{where}: the snippet does not validate:\n" + "\n".join(outputs))


def _project(root: Path, folder: Path) -> None:
    """The repository's suites, gate policies and contracts, the agent demo's tasks/, the VLM suite's data."""
    from rlgate.demo.agent import write_project

    for name in ("suites", "gates", "contracts"):
        shutil.copytree(root / name, folder / name)
    write_project(folder)
    suite = yaml.safe_load((root / "suites" / "vlm_reasoning_regression.yaml").read_text(encoding="utf-8"))
    for task in suite["tasks"]:
        files = task.get("data_files") or {}
        for relative in files.values() if isinstance(files, dict) else [files]:
            (folder / "suites" / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / "suites" / relative).touch()
