"""BFCL model flags and BFCL's own score files.

A model bfcl-eval does not list is refused before scoring unless the contract's BFCL task names its flags
(`fc`, `underscore_to_dot`); the refusal offers the flags the result file suggests. With the flags set, the
checker scores as BFCL does; BFCL's `score/` files are read as BFCL scored them.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate._core.errors import InputError
from rlgate.cli.app import app
from rlgate.harness import read_results

if importlib.util.find_spec("bfcl_eval") is None:
    if os.environ.get("RLGATE_REQUIRE_BFCL") == "1":
        pytest.fail("RLGATE_REQUIRE_BFCL=1 but bfcl-eval is not installed", pytrace=False)
    pytest.skip("bfcl-eval is not installed (pip install --no-deps bfcl-eval, see .ci/run)", allow_module_level=True)

runner = CliRunner()
UNLISTED = "openai_gpt-oss-120b-vllm"  # served by vLLM under a name bfcl-eval's registry does not have


def fc(name: str, **args: object) -> dict[str, str]:
    return {name: json.dumps(args)}


#: an FC model whose API writes math.factorial as math_factorial (simple_python_1's ground truth is dotted)
ROWS = [("simple_python_0", [fc("calculate_triangle_area", base=10, height=5)]),
        ("simple_python_1", [fc("math_factorial", number=5)])]


def write_results(root: Path, model: str = UNLISTED) -> Path:
    folder = root / "result" / model / "non_live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_simple_python_result.json").write_text(
        "\n".join(json.dumps({"id": i, "result": r}) for i, r in ROWS) + "\n", encoding="utf-8")
    return root / "result" / model


def contract(tmp_path: Path, **flags: object) -> Path:
    task = {"task": "inspect_evals/bfcl", "name": "bfcl_simple", "harness": "inspect", "split": "test_public",
            "task_args": {"categories": ["simple_python"], **flags}}
    data = {"schema_version": 1, "name": "fc", "baseline": {"checkpoint": "base"},
            "splits": {"test_public": {"visibility": "nightly"}},
            "suites": [{"schema_version": 1, "name": "bfcl", "tasks": [task]}],
            "gates": {"primary": {"metric": "bfcl_simple/task_success", "min_delta": 0.0}}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_an_unlisted_model_is_refused_with_the_flags_its_file_suggests(tmp_path: Path) -> None:
    source = write_results(tmp_path)
    with pytest.raises(InputError) as caught:
        read_results(source)
    text = str(caught.value)
    assert f"'{UNLISTED}' is not in bfcl-eval" in text and caught.value.line is None
    assert "simple_python_1 calls math_factorial for math.factorial" in text
    assert "task_args: {fc: true, underscore_to_dot: true}" in text  # the fix names the flags to set


def test_with_the_flags_on_the_task_the_import_scores_like_bfcl_and_keeps_them(tmp_path: Path) -> None:
    source = write_results(tmp_path)
    result = runner.invoke(app, ["eval", str(contract(tmp_path)), "--responses", str(source), "--out",
                                 str(tmp_path / "cand")])
    assert result.exit_code == 2 and "not in bfcl-eval" in result.output  # refused before any scoring
    with_flags = contract(tmp_path, fc=True, underscore_to_dot=True)
    result = runner.invoke(app, ["eval", str(with_flags), "--responses", str(source), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "c" / "run_manifest.json").read_text())
    assert manifest["model_spec"]["bfcl_flags"] == {"fc": True, "underscore_to_dot": True}
    task = read_results(tmp_path / "c").tasks["bfcl_simple"]  # read back with the recorded flags
    verdicts = {s.doc_id: s.scores["none"]["task_success"] for s in task.samples if not s.extra.get("missing")}
    assert verdicts == {"simple_python_0": 1.0, "simple_python_1": 1.0}
    assert task.protocol.agent["underscore_to_dot"] is True
    wrong = contract(tmp_path, fc=True, underscore_to_dot=False)  # the silent default: the dotted name fails
    result = runner.invoke(app, ["eval", str(wrong), "--responses", str(source), "--out", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    task = read_results(tmp_path / "w").tasks["bfcl_simple"]
    assert {s.doc_id: s.scores["none"]["task_success"] for s in task.samples
            if not s.extra.get("missing")}["simple_python_1"] == 0.0


def test_half_given_flags_are_one_clear_error(tmp_path: Path) -> None:
    source = write_results(tmp_path)
    result = runner.invoke(app, ["eval", str(contract(tmp_path, fc=True)), "--responses", str(source),
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "names 'fc' but not 'underscore_to_dot'" in result.output


def write_score(root: Path, lines: list[object], model: str = UNLISTED) -> Path:
    folder = root / "score" / model / "non_live"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "BFCL_v4_simple_java_score.json"
    path.write_text("\n".join(json.dumps(x) if not isinstance(x, str) else x for x in lines) + "\n")
    return path


def test_bfcls_score_files_are_read_as_scored(tmp_path: Path) -> None:
    failed = [{"id": "simple_java_3", "model_name": UNLISTED, "test_category": "simple_java", "valid": False,
               "error": ["wrong value"], "error_type": "value_error:string"}]
    write_score(tmp_path, [{"accuracy": 0.99, "correct_count": 99, "total_count": 100}, *failed])
    task = read_results(tmp_path / "score").tasks["bfcl_simple_java"]
    assert task.n_samples == 100 and task.metrics["none"]["task_success"] == pytest.approx(0.99)
    bad = next(s for s in task.samples if s.doc_id == "simple_java_3")
    assert bad.scores["none"]["task_success"] == 0.0 and bad.extra["line"] == 2


@pytest.mark.parametrize(("lines", "needle", "line"), [
    ([{"accuracy": 1.0, "correct_count": 50, "total_count": 50}], "bfcl-eval", 1),
    ([{"accuracy": 1.0, "correct_count": 100, "total_count": 100}, {"id": "simple_java_1", "valid": False}],
     "correct_count is 100 but 1 of 100", 1),
    ([{"accuracy": 0.99, "correct_count": 99, "total_count": 100}, {"id": "simple_java_9999", "valid": False}],
     "not in bfcl-eval", 2),
    ([{"accuracy": 0.99, "correct_count": 99, "total_count": 100}, {"id": "simple_java_1", "valid": True}],
     '"valid": false', 2),
    (["[1, 2]"], "first line", 1),
])
def test_a_score_file_that_does_not_add_up_is_refused(tmp_path: Path, lines: list[object], needle: str,
                                                      line: int) -> None:
    path = write_score(tmp_path, lines)
    with pytest.raises(InputError) as caught:
        read_results(tmp_path / "score")
    assert needle in str(caught.value) and caught.value.file == path and caught.value.line == line
