"""The published JSON Schema of decision.json is current and describes what rlgate writes."""

from __future__ import annotations

import json
from pathlib import Path

from rlgate.report.schema import decision_json_schema, decision_json_schema_text, main
from tests.report import factories as f


def test_committed_schema_is_current(repo_root: Path) -> None:
    committed = repo_root / "docs" / "schema" / "decision.v1.json"
    assert committed.read_text(encoding="utf-8") == decision_json_schema_text(), (
        f"run: python -m rlgate.report.schema {committed}")


def test_schema_covers_a_written_decision(tmp_path: Path) -> None:
    schema = decision_json_schema()
    written = json.loads(f.decision().model_dump_json())
    assert set(schema["required"]) <= set(written) <= set(schema["properties"])
    gate = schema["$defs"]["GateVerdict"]
    assert set(gate["required"]) <= set(written["gates"][0]) <= set(gate["properties"])
    assert schema["properties"]["decision"]["enum"] == ["release", "research_only", "block"]
    main([str(tmp_path / "s.json")])
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8")) == schema
