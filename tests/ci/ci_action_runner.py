"""Run a composite action's steps locally, the way the Actions runner does, so tests exercise the real action.yml.

Parses action.yml with PyYAML, evaluates `${{ }}` expressions (the subset action.yml uses: contexts,
literals, ==, !=, &&, ||, !, parentheses and the status functions) against inputs, step outputs,
`github`, `runner` and `env`, runs each `run:` step with `bash --noprofile --norc -eo pipefail`
with fresh GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, and records `uses:` steps (with their
evaluated `with:`) instead of running them.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||!|\(|\)|,)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_*][A-Za-z0-9_\-]*)*))")
_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_ANNOTATION = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


class Expr:
    """A tiny recursive-descent evaluator for GitHub expressions (GitHub's loose equality and truthiness)."""

    def __init__(self, text: str, contexts: dict[str, Any], status: dict[str, bool]) -> None:
        self.tokens = self._lex(text)
        self.pos = 0
        self.contexts = contexts
        self.status = status

    @staticmethod
    def _lex(text: str) -> list[tuple[str, str]]:
        tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if not match or match.end() == pos:
                raise ValueError(f"cannot parse expression at {text[pos:]!r}")
            kind = match.lastgroup or ""
            tokens.append((kind, match.group(kind)))
            pos = match.end()
        return tokens

    def evaluate(self) -> Any:
        value = self._or()
        if self.pos != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.pos]}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self.pos += 1
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._eq()
        while self._peek() == "&&":
            self.pos += 1
            right = self._eq()
            left = right if truthy(left) else left
        return left

    def _eq(self) -> Any:
        left = self._unary()
        while self._peek() in ("==", "!="):
            op = self.tokens[self.pos][1]
            self.pos += 1
            same = loose_equal(left, self._unary())
            left = same if op == "==" else not same
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self.pos += 1
            return not truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, text = self.tokens[self.pos]
        self.pos += 1
        if text == "(":
            value = self._or()
            self.pos += 1
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if self._peek() == "(":  # function call
            self.pos += 1
            args: list[Any] = []
            while self._peek() != ")":
                args.append(self._or())
                if self._peek() == ",":
                    self.pos += 1
            self.pos += 1
            return self._call(text, args)
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        value: Any = self.contexts
        for part in text.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def _call(self, name: str, args: list[Any]) -> Any:
        if name in ("always", "cancelled", "success", "failure"):
            return {"always": True, "cancelled": False, "success": not self.status["failed"],
                    "failure": self.status["failed"]}[name]
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: as_string(args[1 + int(m.group(1))]), as_string(args[0]))
        raise ValueError(f"function {name}() is not supported by this test runner")


def truthy(value: Any) -> bool:
    return value not in (None, "", 0, 0.0, False)


def loose_equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


def as_string(value: Any) -> str:
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def interpolate(text: str, contexts: dict[str, Any], status: dict[str, bool]) -> str:
    return _EXPR.sub(lambda m: as_string(Expr(m.group(1), contexts, status).evaluate()), text)


def condition(text: str | None, contexts: dict[str, Any], status: dict[str, bool]) -> bool:
    """A step's `if:`; like GitHub, an expression without a status function gets an implicit success()."""
    if text is None:
        return not status["failed"]
    inner = str(text).strip()
    match = _EXPR.fullmatch(inner)
    inner = match.group(1) if match else inner
    value = truthy(Expr(inner, contexts, status).evaluate())
    if not re.search(r"\b(always|cancelled|success|failure)\(", inner):
        value = value and not status["failed"]
    return value


def parse_env_file(path: Path) -> dict[str, str]:
    """Both forms the runner reads from GITHUB_OUTPUT: `name=value` and `name<<DELIM ... DELIM`."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


def unescape(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace(
        "%25", "%")


@dataclass
class Annotation:
    level: str
    message: str
    properties: dict[str, str]


@dataclass
class StepRun:
    name: str
    id: str | None
    ran: bool
    kind: str  # "run" | "uses" | "skipped"
    rc: int = 0
    stdout: str = ""
    uses: str | None = None
    with_: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    summary: str
    exit_code: int

    @property
    def log(self) -> str:
        return "".join(step.stdout for step in self.steps)

    @property
    def annotations(self) -> list[Annotation]:
        found = []
        for line in self.log.splitlines():
            match = _ANNOTATION.match(line)
            if match:
                props = {}
                for item in filter(None, (match.group(2) or "").split(",")):
                    key, _, value = item.partition("=")
                    props[key] = unescape(value)
                found.append(Annotation(match.group(1), unescape(match.group(3)), props))
        return found

    def step(self, name_or_id: str) -> StepRun:
        return next(s for s in self.steps if name_or_id in (s.id, s.name))


def run_action(action_file: Path, inputs: dict[str, str], *, workspace: Path, runner_temp: Path,
               env: dict[str, str] | None = None, stub: dict[str, str] | None = None) -> ActionRun:
    """Run every step of a composite action; `stub` replaces the script of a step (by id) for a test."""
    action = yaml.safe_load(action_file.read_text(encoding="utf-8"))
    given = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
    unknown = set(inputs) - set(given)
    if unknown:
        raise ValueError(f"inputs not declared in {action_file}: {sorted(unknown)}")
    missing = [n for n, s in action["inputs"].items() if s.get("required") and n not in inputs]
    if missing:
        raise ValueError(f"required inputs missing: {missing}")
    given.update(inputs)
    base_env = {**os.environ, **(env or {}), "GITHUB_ACTION_PATH": str(action_file.parent),
                "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": str(runner_temp), "GITHUB_ACTIONS": "true"}
    contexts: dict[str, Any] = {
        "inputs": given, "steps": {}, "env": base_env,
        "github": {"action_path": str(action_file.parent), "workspace": str(workspace)},
        "runner": {"temp": str(runner_temp), "os": "Linux"},
    }
    status = {"failed": False}
    runs: list[StepRun] = []
    summary_parts: list[str] = []
    exit_code = 0
    files = runner_temp / "_runner_file_commands"
    files.mkdir(parents=True, exist_ok=True)
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name") or step.get("uses") or f"step {index}"
        step_id = step.get("id")
        if not condition(step.get("if"), contexts, status):
            runs.append(StepRun(name, step_id, ran=False, kind="skipped"))
            continue
        if "uses" in step:
            with_ = {k: interpolate(str(v), contexts, status) for k, v in (step.get("with") or {}).items()}
            runs.append(StepRun(name, step_id, ran=True, kind="uses", uses=step["uses"], with_=with_))
            if step_id:
                contexts["steps"][step_id] = {"outputs": {}, "outcome": "success", "conclusion": "success"}
            continue
        step_env = {k: interpolate(str(v), contexts, status) for k, v in (step.get("env") or {}).items()}
        output_file = files / f"output_{index}"
        summary_file = files / f"step_summary_{index}"
        output_file.write_text("", encoding="utf-8")
        summary_file.write_text("", encoding="utf-8")
        script = (stub or {}).get(step_id or "", step["run"])
        script_file = files / f"step_{index}.sh"
        script_file.write_text(interpolate(script, contexts, status), encoding="utf-8")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            cwd=workspace, env={**base_env, **step_env, "GITHUB_OUTPUT": str(output_file),
                                "GITHUB_STEP_SUMMARY": str(summary_file)},
            capture_output=True, text=True, timeout=1800, check=False)
        outputs = parse_env_file(output_file)
        summary_parts.append(summary_file.read_text(encoding="utf-8"))
        runs.append(StepRun(name, step_id, ran=True, kind="run", rc=proc.returncode,
                            stdout=proc.stdout + proc.stderr, outputs=outputs))
        outcome = "success" if proc.returncode == 0 else "failure"
        if step_id:
            contexts["steps"][step_id] = {"outputs": outputs, "outcome": outcome, "conclusion": outcome}
        if proc.returncode != 0 and not status["failed"]:
            status["failed"] = True
            exit_code = proc.returncode
    outputs = {name: interpolate(str(spec.get("value", "")), contexts, status)
               for name, spec in (action.get("outputs") or {}).items()}
    return ActionRun(runs, outputs, "".join(summary_parts), exit_code)
