"""mkdocs hook: a page line `<!-- schema: NAME -->` becomes the reference of docs/schema/NAME.v1.json.

The reference pages are rendered from the committed JSON Schemas (which tests keep equal to what
`rlgate schema` generates from the pydantic models), so the documented fields cannot drift from the code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parents[1] / "schema"
MARKER = re.compile(r"^<!-- schema: ([a-z-]+) -->$", re.MULTILINE)


def _type(spec: dict[str, Any]) -> str:
    """A short, readable type: `Protocol`, `list of TaskEntry`, `number or null`, `"a" | "b"`."""
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in spec:
        return f"`{json.dumps(spec['const'])}`"
    if "enum" in spec:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    for key in ("anyOf", "oneOf"):
        if key in spec:
            return " or ".join(dict.fromkeys(_type(s) for s in spec[key]))
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if kind == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"map of name → {_type(spec['additionalProperties'])}"
    return "`null`" if kind == "null" else str(kind)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(model: dict[str, Any]) -> list[str]:
    required = set(model.get("required", []))
    rows = ["| field | type | required | default | meaning |", "| --- | --- | --- | --- | --- |"]
    for name, spec in model.get("properties", {}).items():
        default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
        rows.append(f"| `{name}` | {_cell(_type(spec))} | {'yes' if name in required else ''} | {_cell(default)} "
                    f"| {_cell(spec.get('description', ''))} |")
    return rows


def render(name: str) -> str:
    """The reference of one schema: its top-level fields, then every definition it refers to."""
    schema = json.loads((SCHEMAS / f"{name}.v1.json").read_text(encoding="utf-8"))
    out = [f"Rendered from `docs/schema/{name}.v1.json` (`rlgate schema --kind {name}`).", "",
           f"### {schema.get('title', name)}", "", _cell(schema.get("description", "")), "", *_table(schema)]
    for def_name, model in sorted(schema.get("$defs", {}).items()):
        out += ["", f"### {def_name}", ""]
        if model.get("description"):
            out += [_cell(model["description"]), ""]
        out += _table(model) if "properties" in model else [f"{_type(model)}"]
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARKER.sub(lambda m: render(m.group(1)), markdown)
