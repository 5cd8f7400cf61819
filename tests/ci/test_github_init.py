"""`rlgate init --github`: the workflow (and a contract when there is none) in a user's repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from ci_lint_tools import load_yaml12
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.scaffold.github import DEFAULT_ACTION_REF, render_workflow

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def test_init_github_in_an_empty_repo_writes_contract_and_workflow(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path), "--github"])
    assert result.exit_code == 0, result.output
    workflow = tmp_path / ".github" / "workflows" / "rlgate-gate.yml"
    for path in ("contracts/my_contract.yaml", "suites/my_suite.yaml", "gates/release_policy.yaml"):
        assert (tmp_path / path).is_file()
        assert f"wrote {tmp_path / path}" in result.output
    assert f"wrote {workflow}" in result.output
    data = load_yaml12(workflow.read_text(encoding="utf-8"))
    assert data["env"]["CONTRACT"] == "contracts/my_contract.yaml"
    gate = next(s for s in data["jobs"]["gate"]["steps"] if s.get("id") == "gate")
    assert gate["uses"] == DEFAULT_ACTION_REF
    assert data["on"]["repository_dispatch"]["types"] == ["checkpoint-ready"]
    assert data["jobs"]["gate"]["runs-on"] == ["self-hosted", "gpu"]
    # The contract it gates with validates.
    assert runner.invoke(app, ["validate", str(tmp_path / "contracts" / "my_contract.yaml")]).exit_code == 0


def test_init_github_reuses_an_existing_contract(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    assert runner.invoke(app, ["init", str(tmp_path / "scratch")]).exit_code == 0
    for src in ("contracts/my_contract.yaml", "suites/my_suite.yaml", "gates/release_policy.yaml"):
        dst = tmp_path / src.replace("my_contract", "team")
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text((tmp_path / "scratch" / src).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "contracts" / "notes.yaml").write_text("just: notes\n", encoding="utf-8")
    result = runner.invoke(app, ["init", str(tmp_path), "--github"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "my_contract.yaml" not in result.output
    assert not (tmp_path / "contracts" / "my_contract.yaml").exists()
    text = (tmp_path / ".github" / "workflows" / "rlgate-gate.yml").read_text(encoding="utf-8")
    assert load_yaml12(text)["env"]["CONTRACT"] == "contracts/team.yaml"


def test_init_github_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path), "--github"]).exit_code == 0
    again = runner.invoke(app, ["init", str(tmp_path), "--github"])
    assert again.exit_code == 2
    assert "rlgate-gate.yml: file already exists" in again.output
    assert "Traceback" not in again.output
    assert runner.invoke(app, ["init", str(tmp_path), "--github", "--force"]).exit_code == 0


def test_init_github_with_an_invalid_existing_contract_exits_2(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "bad.yaml").write_text("schema_version: 1\nname: [x\n", encoding="utf-8")
    result = runner.invoke(app, ["init", str(tmp_path), "--github"])
    assert result.exit_code == 2
    assert "YAML syntax error" in result.output


def test_repository_example_workflow_is_the_rendered_template() -> None:
    committed = (REPO / ".github" / "workflows" / "gate-checkpoint.yml").read_text(encoding="utf-8")
    assert committed == render_workflow("contracts/math_rlvr.yaml", "./"), (
        "regenerate: python -c \"from rlgate.scaffold.github import render_workflow; "
        "open('.github/workflows/gate-checkpoint.yml','w').write(render_workflow('contracts/math_rlvr.yaml','./'))\"")


@pytest.mark.parametrize("contract", ["contracts/a'b.yaml", "c.yaml\nrun: x", "${{ github.token }}.yaml", " x.yaml"])
def test_render_refuses_paths_that_would_change_the_workflow(contract: str) -> None:
    with pytest.raises(InputError, match="cannot be written into a workflow safely"):
        render_workflow(contract)
