"""The published JSON Schema of decision.json (docs/schema/decision.v1.json).

Regenerate with `python -m rlgate.report.schema docs/schema/decision.v1.json`; a test checks the
committed copy is current.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rlgate.engine.models import Decision


def decision_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of decision.json."""
    schema = Decision.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://rlgate.dev/schema/decision.v1.json"
    return schema


def decision_json_schema_text() -> str:
    return json.dumps(decision_json_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    text = decision_json_schema_text()
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
        print(f"wrote {args[0]}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
