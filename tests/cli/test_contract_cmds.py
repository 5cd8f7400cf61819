"""CLI tests for validate / schema / init and the import-weight promise of `rlgate --help`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()


def test_validate_example_prints_summary(repo_root: Path) -> None:
    result = runner.invoke(app, ["validate", str(repo_root / "contracts" / "math_rlvr.yaml")])
    assert result.exit_code == 0, result.output
    assert "test_public    nightly            aime24, aime25, minerva_math500, gsm8k, mmlu_pro, ifeval" in result.output
    assert "primary     aime24/pass@1  min_delta=0" in result.output
    assert "ok: contract is valid" in result.output


def test_validate_bad_contract_exits_2_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("schema_version: 1\nname: [x\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:3:1: YAML syntax error" in result.output
    assert "while parsing a flow sequence started at line 2, column 7" in result.output
    assert "Traceback" not in result.output


def test_validate_missing_file_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "nope.yaml: file not found" in result.output


def test_schema_is_json_schema_and_committed_copy_is_current(repo_root: Path) -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["title"] == "Contract"
    assert "gates" in schema["properties"]
    committed = repo_root / "docs" / "schema" / "contract.v1.json"
    assert json.loads(committed.read_text(encoding="utf-8")) == schema, "run: rlgate schema --out " + str(committed)


def test_schema_of_decision_matches_published_copy(repo_root: Path) -> None:
    result = runner.invoke(app, ["schema", "--kind", "decision"])
    assert result.exit_code == 0
    published = json.loads((repo_root / "docs" / "schema" / "decision.v1.json").read_text(encoding="utf-8"))
    assert json.loads(result.output) == published


def test_schema_unknown_kind_exits_2() -> None:
    result = runner.invoke(app, ["schema", "--kind", "nope"])
    assert result.exit_code == 2
    assert "unknown schema kind 'nope'" in result.output


def test_init_scaffolds_files_that_validate(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    contract = tmp_path / "contracts" / "my_contract.yaml"
    assert contract.exists()
    assert runner.invoke(app, ["validate", str(contract)]).exit_code == 0
    again = runner.invoke(app, ["init", str(tmp_path)])
    assert again.exit_code == 2
    assert "file already exists" in again.output
    assert runner.invoke(app, ["init", str(tmp_path), "--force"]).exit_code == 0


def test_init_schema_comments_point_at_local_schemas_that_validate_the_files(tmp_path: Path) -> None:
    import json

    import jsonschema
    import yaml

    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    for relative in ("contracts/my_contract.yaml", "suites/my_suite.yaml", "gates/release_policy.yaml"):
        path = tmp_path / relative
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=") and "://" not in first  # works offline
        schema = (path.parent / first.split("$schema=")[1]).resolve()
        assert schema.is_file(), schema
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), json.loads(schema.read_text()))


def test_version_and_full_command_help() -> None:
    import rlgate

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"rlgate {rlgate.__version__}"
    listing = runner.invoke(app, ["--help"], terminal_width=100).output
    assert "..." not in listing.split("Commands:")[1]
    assert "Evaluate the baseline (cached) and the candidate, decide, write reports." in " ".join(listing.split())


def test_help_and_import_stay_light() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "import rlgate\n"
        "from rlgate.cli.app import app\n"
        "r = CliRunner().invoke(app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "heavy = [m for m in ('torch', 'transformers', 'lm_eval', 'vllm', 'deepeval', 'scipy', 'tensorboard', 'ray')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_schema_out_to_a_folder_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path}: --out: cannot write" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("github", [[], ["--github"]])
def test_init_into_a_file_exits_2_and_leaves_it_alone(tmp_path: Path, github: list[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("keep me", encoding="utf-8")
    result = runner.invoke(app, ["init", str(taken / "project"), *github])
    assert result.exit_code == 2, result.output
    assert f"{taken}: DIRECTORY: is a file" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output and taken.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize(("policy", "expected"), [
    ("nope.yaml", "c.yaml:31:19: monitor.policy: monitor policy 'nope.yaml' does not exist"),
    ("gates/release_default.yaml", "release_default.yaml:2:1: this file is a gate policy"),
])
def test_validate_checks_the_monitor_policy_file(repo_root: Path, tmp_path: Path, policy: str, expected: str) -> None:
    for folder in ("suites", "gates"):
        shutil.copytree(repo_root / folder, tmp_path / folder)
    text = (repo_root / "contracts" / "math_rlvr.yaml").read_text(encoding="utf-8")
    contract = tmp_path / "c.yaml"
    contract.write_text(text.replace("\ngates:", f"\nmonitor: {{policy: {policy}}}\ngates:", 1), encoding="utf-8")
    result = runner.invoke(app, ["validate", str(contract)])
    assert result.exit_code == 2, result.output
    assert expected in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("kind", ["suite", "gate-policy"])
def test_committed_suite_and_gate_policy_schemas_are_current(repo_root: Path, kind: str) -> None:
    result = runner.invoke(app, ["schema", "--kind", kind])
    assert result.exit_code == 0, result.output
    committed = repo_root / "docs" / "schema" / f"{kind}.v1.json"
    assert json.loads(committed.read_text(encoding="utf-8")) == json.loads(result.output), \
        f"run: rlgate schema --kind {kind} --out {committed}"
