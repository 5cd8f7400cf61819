"""Official BFCL result files ({"id","result"} lines) scored by bfcl-eval's own AST checker, no API call.

Needs bfcl-eval installed with --no-deps (and its tree-sitter wheels), as .ci/run does; skips without
it, except where RLGATE_REQUIRE_BFCL=1 (CI) makes that a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.harness import harness_for, read_results

if importlib.util.find_spec("bfcl_eval") is None:
    if os.environ.get("RLGATE_REQUIRE_BFCL") == "1":
        pytest.fail("RLGATE_REQUIRE_BFCL=1 but bfcl-eval is not installed (pip install --no-deps bfcl-eval ...)",
                    pytrace=False)
    pytest.skip("bfcl-eval is not installed (pip install --no-deps bfcl-eval, see .ci/run)", allow_module_level=True)

runner = CliRunner()
FC_MODEL = "gpt-4o-2024-11-20-FC"  # bfcl's registry: an FC model whose API turns a.b into a_b
PROMPT_MODEL = "gpt-4o-2024-11-20"


def fc(name: str, **args: object) -> dict[str, str]:
    return {name: json.dumps(args)}


#: (id, result) per category for the FC model; expected verdicts beside
FC_ROWS = {
    "simple_python": [("simple_python_0", [fc("calculate_triangle_area", base=10, height=5)], True),
                      ("simple_python_1", [fc("math_factorial", number=5)], True),  # underscore_to_dot
                      ("simple_python_2", [fc("math_hypot", x=4, y=6)], False)],   # wrong value
    "multiple": [("multiple_0", [fc("triangle_properties_get", side1=5, side2=4, side3=3)], True),
                 ("multiple_1", [fc("circle_properties_get", radius=3)], False)],  # wrong function
    "parallel": [("parallel_0", [fc("spotify_play", artist="Maroon 5", duration=15),
                                 fc("spotify_play", artist="Taylor Swift", duration=20)], True),  # any order
                 ("parallel_1", [fc("calculate_em_force", b_field=5, area=2, d_time=4)], False)],  # one of two
}
SIZES = {"simple_python": 400, "multiple": 200, "parallel": 200}


def write_results(root: Path, model: str, rows: dict[str, list[tuple[str, object, bool]]]) -> Path:
    folder = root / "result" / model / "non_live"
    folder.mkdir(parents=True)
    for category, entries in rows.items():
        lines = [json.dumps({"id": i, "result": r, "input_token_count": 100, "output_token_count": 20,
                             "latency": 0.5}) for i, r, _ in entries]
        (folder / f"BFCL_v4_{category}_result.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "result" / model


def test_result_files_scored_by_bfcls_checker_without_its_sdks(tmp_path: Path) -> None:
    folder = write_results(tmp_path, FC_MODEL, FC_ROWS)
    assert harness_for(folder).name == "bfcl"
    run = read_results(folder)
    assert sorted(run.tasks) == ["bfcl_multiple", "bfcl_parallel", "bfcl_simple_python"]
    for category, rows in FC_ROWS.items():
        task = run.tasks[f"bfcl_{category}"]
        assert task.n_samples == SIZES[category]  # every ground-truth id: the missing ones are failures
        verdicts = {s.doc_id: s.scores["none"]["task_success"] for s in task.samples}
        assert {i: verdicts[i] for i, _, _ in rows} == {i: float(ok) for i, _, ok in rows}
        assert task.metrics["none"]["task_success"] == pytest.approx(sum(ok for *_, ok in rows) / SIZES[category])
        missing = [s for s in task.samples if s.extra.get("missing")]
        assert len(missing) == SIZES[category] - len(rows) and all(s.scores["none"]["task_success"] == 0.0
                                                                    for s in missing)
    wrong = next(s for s in run.tasks["bfcl_simple_python"].samples if s.doc_id == "simple_python_2")
    assert "Invalid value" in (wrong.trajectory.explanation or "")  # type: ignore[union-attr]
    assert wrong.trajectory.tool_calls[0].arguments == {"x": 4, "y": 6}  # type: ignore[union-attr]
    assert not any(name.split(".")[0] in ("anthropic", "cohere", "mistralai", "qwen_agent") for name in sys.modules)


def test_prompt_model_text_is_decoded_like_bfcl(tmp_path: Path) -> None:
    rows = {"simple_python": [("simple_python_1", "[math.factorial(number=5)]", True),
                              ("simple_python_0", "The area is 25.", False)]}
    run = read_results(write_results(tmp_path, PROMPT_MODEL, rows))
    task = run.tasks["bfcl_simple_python"]
    by_id = {s.doc_id: s for s in task.samples}
    assert by_id["simple_python_1"].scores["none"]["task_success"] == 1.0
    bad = by_id["simple_python_0"]
    assert bad.scores["none"]["task_success"] == 0.0 and bad.scores["none"]["tool_success_rate"] == 0.0
    assert bad.trajectory.tool_calls[0].parse_error  # type: ignore[union-attr]


def _contract(tmp_path: Path) -> Path:
    tasks = [{"task": "inspect_evals/bfcl", "name": f"bfcl_{short}", "task_args": {"categories": [category]},
              "harness": "inspect", "split": "test_public"}
             for short, category in (("simple", "simple_python"), ("multiple", "multiple"), ("parallel", "parallel"))]
    contract = {"schema_version": 1, "name": "fc", "baseline": {"checkpoint": "base"},
                "splits": {"test_public": {"visibility": "nightly"}},
                "suites": [{"schema_version": 1, "name": "bfcl", "tasks": tasks}],
                "gates": {"primary": {"metric": "bfcl_simple/task_success", "min_delta": 0.0},
                          "regression": [{"metric": "bfcl_parallel/task_success", "max_drop": 0.5}]}}
    path = tmp_path / "contract.yaml"
    path.write_text(yaml.safe_dump(contract), encoding="utf-8")
    return path


def test_eval_responses_then_gate_through_the_cli(tmp_path: Path) -> None:
    contract = _contract(tmp_path)
    cand = write_results(tmp_path / "c", FC_MODEL, FC_ROWS)
    base_rows = {c: [(i, r, ok) for i, r, ok in rows[:1]] for c, rows in FC_ROWS.items()}
    base = write_results(tmp_path / "b", FC_MODEL, base_rows)
    for role, source in (("cand", cand), ("base", base)):
        result = runner.invoke(app, ["eval", str(contract), "--responses", str(source), "--out", str(tmp_path / role)])
        assert result.exit_code == 0, result.output
    assert sorted(read_results(tmp_path / "cand").tasks) == ["bfcl_multiple", "bfcl_parallel", "bfcl_simple"]
    manifest = json.loads((tmp_path / "cand" / "run_manifest.json").read_text())
    assert manifest["harness"] == "bfcl" and manifest["tasks"][0]["drops"]["missing"] > 0
    result = runner.invoke(app, ["gate", str(contract), "--candidate", str(tmp_path / "cand"), "--baseline",
                                 str(tmp_path / "base"), "--out", str(tmp_path / "g")])
    assert result.exit_code == 3, result.output
    decision = json.loads((tmp_path / "g" / "decision.json").read_text())
    gates = {g["name"]: g for g in decision["gates"]}
    simple = gates["bfcl_simple/task_success"]  # 2 of 400 (a.b named a_b, as the FC model's API does) vs 1
    assert simple["candidate"] == pytest.approx(2 / 400) and simple["baseline"] == pytest.approx(1 / 400)
    assert simple["n"] == 400 and simple["n_unpaired"] == 0


@pytest.mark.parametrize(("line", "needle"), [
    ('{"id": "simple_python_0"}', 'a string "id" and a "result"'),
    ('{"id": "simple_python_9999", "result": []}', "not in bfcl-eval"),
    ('{"id": "multi_turn_base_0", "result": []}', "not scored by BFCL's AST checker"),
    ('{"id": "simple_python_0", "result": [', "not valid JSON"),
    ('{"id": "simple_python_0", "result": [], "input_token_count": NaN}', "input_token_count: is nan"),
    ('{"id": "simple_python_0", "result": [], "latency": Infinity}', "latency: is inf"),
    ('{"id": "simple_python_0", "result": [], "output_token_count": 1' + "0" * 400 + "}", "not a finite number"),
    ('{"id": "simple_python_0", "result": [], "latency": 1' + "0" * 5000 + "}", "not readable JSON"),
])
def test_malformed_result_file_is_one_clear_error(tmp_path: Path, line: str, needle: str) -> None:
    folder = tmp_path / "result" / FC_MODEL
    folder.mkdir(parents=True)
    bad = folder / "BFCL_v4_simple_python_result.json"
    bad.write_text(line + "\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", str(_contract(tmp_path)), "--responses", str(bad), "--responded-only",
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert needle in result.output and f"{bad}:1" in result.output and "fix:" in result.output


def test_a_full_bfcl_result_folder_imports_the_contracts_categories_only(tmp_path: Path) -> None:
    """`bfcl generate` leaves every category it ran in result/{model}: multi-turn results (not AST-scored) and
    AST categories no contract task lists are left out of the folder's import, not refused."""
    source = write_results(tmp_path / "c", FC_MODEL, FC_ROWS)
    extra = source / "non_live"
    (extra / "BFCL_v4_multi_turn_base_result.json").write_text('{"id": "multi_turn_base_0", "result": []}\n')
    (extra / "BFCL_v4_simple_java_result.json").write_text('{"id": "simple_java_0", "result": []}\n')
    result = runner.invoke(app, ["eval", str(_contract(tmp_path)), "--responses", str(source),
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert sorted(read_results(tmp_path / "o").tasks) == ["bfcl_multiple", "bfcl_parallel", "bfcl_simple"]
    copied = sorted(p.name for p in (tmp_path / "o").rglob("BFCL_v4_*_result.json"))
    assert "BFCL_v4_multi_turn_base_result.json" not in copied and "BFCL_v4_simple_java_result.json" not in copied
