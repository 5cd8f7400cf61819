"""No import or harness reader can be driven to a traceback by size or nesting: deep, long and wide inputs
end in a result or in one InputError (exit 2, file and line), never in RecursionError, MemoryError or csv.Error.

Each reader is fed the same generated shapes in the place its format holds free JSON (a row, a report,
a score, a prediction, a table cell). The line limit is lowered for the test so a "long" line is cheap.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlgate._core.jsonio
from rlgate._core.errors import InputError
from rlgate.harness import read_results

SHORT_LINES = 4096


def deep(depth: int, leaf: Any = 1) -> str:
    """A JSON value nested `depth` levels, as text (json.dumps itself would recurse)."""
    return "[" * depth + json.dumps(leaf) + "]" * depth


def shape(kind: str, size: int) -> str:
    if kind == "deep":
        return deep(size)
    if kind == "long":
        return json.dumps("x" * (SHORT_LINES + min(size, 5000)))
    return json.dumps({f"k{i}": i for i in range(min(size, 5000) * 10)})  # wide: up to 50,000 keys


def _swe_flat(tmp: Path, value: str) -> Callable[[], Any]:
    folder = tmp / "logs" / "django__django-11001"
    folder.mkdir(parents=True)
    (folder / "report.json").write_text('{"resolved": true, "tests_status": ' + value + "}")
    return lambda: read_results(folder / "report.json")


def _swe_summary(tmp: Path, value: str) -> Callable[[], Any]:
    path = tmp / "results_summary.json"
    path.write_text('{"total": 1, "passed": 1, "instances": [{"instance_id": "a__b-1", "resolved": true, '
                    '"extra": ' + value + "}]}")
    return lambda: read_results(path)


def _lmms(tmp: Path, value: str) -> Callable[[], Any]:
    from rlgate.harness.lmeval.convert import lmms_rows

    path = tmp / "20260101_000000_samples_chartqa.jsonl"
    path.write_text('{"doc_id": 0, "target": "1", "resps": ' + value + "}\n")
    return lambda: list(lmms_rows(path, None))


def _opencompass(tmp: Path, value: str) -> Callable[[], Any]:
    from rlgate.harness.lmeval.opencompass import opencompass_rows

    path = tmp / "gsm8k.json"
    path.write_text('{"0": {"origin_prompt": "q", "prediction": "a", "gold": ' + value + "}}")
    return lambda: list(opencompass_rows(path, None))


def _opencompass_results(tmp: Path, value: str) -> Callable[[], Any]:
    (tmp / "predictions" / "m").mkdir(parents=True)
    (tmp / "results" / "m").mkdir(parents=True)
    (tmp / "results" / "m" / "gsm8k.json").write_text(
        '{"accuracy": 0.0, "details": [{"example_abbr": "gsm8k_0", "pred": ' + value + ', "correct": [false]}]}')
    return lambda: read_results(tmp)


def _vlmevalkit_json(tmp: Path, value: str) -> Callable[[], Any]:
    from rlgate.harness.lmeval.convert import vlmevalkit_rows

    path = tmp / "M_ChartQA_TEST.json"
    path.write_text('[{"index": 0, "question": "q", "answer": "1", "prediction": "1", "extra": ' + value + "}]")
    return lambda: list(vlmevalkit_rows(path, None))


def _vlmevalkit_tsv(tmp: Path, value: str) -> Callable[[], Any]:
    from rlgate.harness.lmeval.convert import vlmevalkit_rows

    path = tmp / "M_ChartQA_TEST.tsv"
    cell = value.replace("\t", " ").replace("\n", " ") * 8
    path.write_text("index\tquestion\tanswer\tprediction\n0\tq\t1\t" + cell + "\n")
    return lambda: list(vlmevalkit_rows(path, None))


def _bfcl_result(tmp: Path, value: str) -> Callable[[], Any]:
    folder = tmp / "result" / "gpt-4o-2024-11-20-FC" / "non_live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_simple_python_result.json").write_text('{"id": "simple_python_0", "result": ' + value + "}\n")
    return lambda: read_results(folder.parent)


def _bfcl_score(tmp: Path, value: str) -> Callable[[], Any]:
    folder = tmp / "score" / "m" / "non_live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_simple_java_score.json").write_text(
        '{"accuracy": 0.99, "correct_count": 99, "total_count": 100}\n'
        '{"id": "simple_java_0", "valid": false, "error": ' + value + "}\n")
    return lambda: read_results(tmp / "score")


def _inspect_json(tmp: Path, value: str) -> Callable[[], Any]:
    path = tmp / "log.json"
    path.write_text('{"version": 2, "status": "success", "eval": {"task": "t", "metadata": ' + value + "}}")
    return lambda: read_results(path)


READERS: dict[str, Callable[[Path, str], Callable[[], Any]]] = {
    "swebench_flat_report": _swe_flat, "swebench_agent_summary": _swe_summary, "lmms_eval_samples": _lmms,
    "opencompass_predictions": _opencompass, "opencompass_results": _opencompass_results,
    "vlmevalkit_json": _vlmevalkit_json,
    "vlmevalkit_tsv": _vlmevalkit_tsv, "bfcl_result": _bfcl_result, "bfcl_score": _bfcl_score,
    "inspect_json_log": _inspect_json,
}
NEEDS = {"bfcl_result": "bfcl_eval", "bfcl_score": "bfcl_eval", "inspect_json_log": "inspect_ai"}


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["deep", "long", "wide"]), size=st.sampled_from([70, 900, 1200, 5000, 200_000]))
def test_deep_long_and_wide_inputs_end_in_a_result_or_one_input_error(
        reader: str, kind: str, size: int, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if reader in NEEDS and importlib.util.find_spec(NEEDS[reader]) is None:
        pytest.skip(f"{NEEDS[reader]} is not installed")
    monkeypatch.setattr(rlgate._core.jsonio, "MAX_LINE_BYTES", SHORT_LINES)
    monkeypatch.setattr("rlgate.harness.lmeval.convert.MAX_LINE_BYTES", SHORT_LINES)
    read = READERS[reader](tmp_path_factory.mktemp(reader), shape(kind, size))
    try:
        read()
    except InputError as exc:
        assert exc.file is not None and str(exc)  # located: names the file
