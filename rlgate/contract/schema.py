"""JSON Schema export for editors (yaml-language-server) and for documentation."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from rlgate.contract.models import Contract, GatePolicy, Suite

SCHEMAS: dict[str, type[BaseModel]] = {"contract": Contract, "suite": Suite, "gate-policy": GatePolicy}


def json_schema(kind: str = "contract") -> dict[str, Any]:
    """The JSON Schema of a contract, suite or gate-policy file."""
    model = SCHEMAS[kind]
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://rlgate.dev/schema/{kind}.v1.json"
    return schema


def json_schema_text(kind: str = "contract") -> str:
    return json.dumps(json_schema(kind), indent=2, sort_keys=True) + "\n"
