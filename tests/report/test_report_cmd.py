"""`rlgate report OUT_DIR`: re-render from the run folder only; bad folders exit 2 with one message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlgate.cli.app import app
from rlgate.report.io import FILES, write_reports
from tests.report import factories as f

runner = CliRunner()


@pytest.fixture
def run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / "out"
    write_reports(out, f.decision(), contract=f.contract(tmp_path), baseline=f.run("b", [True, False, True]),
                  candidate=f.run("c", [False, True, True]))
    return out


def test_rerender_reproduces_every_format_from_the_folder(run_folder: Path) -> None:
    before = {name: (run_folder / name).read_text(encoding="utf-8") for name in FILES.values()}
    for name in ("report.html", "report.md", "junit.xml"):
        (run_folder / name).unlink()
    result = runner.invoke(app, ["report", str(run_folder)])
    assert result.exit_code == 0, result.output
    assert result.output.count("wrote ") == 5
    after = {name: (run_folder / name).read_text(encoding="utf-8") for name in FILES.values()}
    assert after == before


def test_a_newer_decision_json_wins(run_folder: Path) -> None:
    decision = json.loads((run_folder / "decision.json").read_text(encoding="utf-8"))
    decision["decision"] = "release"
    decision["summary"] = "release: re-decided"
    decision["deciding_gates"] = []
    for gate in decision["gates"]:
        gate["verdict"], gate["reason"] = "pass", "re-decided pass"
    (run_folder / "decision.json").write_text(json.dumps(decision), encoding="utf-8")
    assert runner.invoke(app, ["report", str(run_folder)]).exit_code == 0
    markdown = (run_folder / "report.md").read_text(encoding="utf-8")
    assert "**RELEASE**" in markdown and "re-decided pass" in markdown
    assert 'failures="0"' in (run_folder / "junit.xml").read_text(encoding="utf-8")
    model = json.loads((run_folder / "report_model.json").read_text(encoding="utf-8"))
    assert model["decision"]["decision"] == "release" and model["tasks"][0]["samples"]["doc_id"]


def test_decision_json_alone_renders_the_gates(tmp_path: Path, run_folder: Path) -> None:
    (run_folder / "report_model.json").unlink()
    result = runner.invoke(app, ["report", str(run_folder)])
    assert result.exit_code == 0, result.output
    html = (run_folder / "report.html").read_text(encoding="utf-8")
    assert "BLOCK" in html and "gates only" in html


def test_step_summary_is_appended(run_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = runner.invoke(app, ["report", str(run_folder)])
    assert result.exit_code == 0 and f"appended report.md to {summary}" in result.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## 🔴 rlgate: **BLOCK**")
    assert runner.invoke(app, ["report", str(run_folder), "--no-step-summary"]).exit_code == 0
    assert summary.read_text(encoding="utf-8") == text


def test_user_templates_override_and_broken_ones_exit_2(run_folder: Path, tmp_path: Path) -> None:
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "report.md.j2").write_text("decision {{ d.decision }} for {{ m.contract_name }}\n", encoding="utf-8")
    assert runner.invoke(app, ["report", str(run_folder), "--template-dir", str(templates)]).exit_code == 0
    assert (run_folder / "report.md").read_text(encoding="utf-8") == "decision block for report_test\n"
    (templates / "report.md.j2").write_text("{% if %}\n", encoding="utf-8")
    result = runner.invoke(app, ["report", str(run_folder), "--template-dir", str(templates)])
    assert result.exit_code == 2
    assert "report.md.j2:1: template syntax error" in result.output and "Traceback" not in result.output
    for given, message in ((tmp_path / "nope", "template folder does not exist"),
                           (templates / "report.md.j2", "is a file, not a template folder")):
        result = runner.invoke(app, ["report", str(run_folder), "--template-dir", str(given)])
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "run folder does not exist"),
    ("file", "decision.json: is a file, not a run folder"),
    ("empty", "no decision.json or report_model.json in this folder"),
    ("corrupt", "report_model.json:1:2: not valid JSON"),
    ("wrong", "report_model.json: schema_version"),
])
def test_bad_run_folders_exit_2(tmp_path: Path, run_folder: Path, setup: str, message: str) -> None:
    target = run_folder
    if setup == "missing":
        target = tmp_path / "nope"
    elif setup == "file":
        target = run_folder / "decision.json"
    elif setup == "empty":
        target = tmp_path / "empty"
        target.mkdir()
    elif setup == "corrupt":
        (run_folder / "report_model.json").write_text("{oops", encoding="utf-8")
    else:
        data = json.loads((run_folder / "report_model.json").read_text(encoding="utf-8"))
        data["schema_version"] = 99
        (run_folder / "report_model.json").write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["report", str(target)])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("template", "message"), [
    (b"{{ 1 / 0 }}\n", "report.html.j2:1: template error: ZeroDivisionError: division by zero"),
    (b"\xff\xfe{{ x }}\n", "report.html.j2: template is not UTF-8 text"),
])
def test_a_template_that_fails_to_render_exits_2_and_keeps_the_decision(
        run_folder: Path, tmp_path: Path, template: bytes, message: str) -> None:
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "report.html.j2").write_bytes(template)
    decision = (run_folder / "decision.json").read_text(encoding="utf-8")
    result = runner.invoke(app, ["report", str(run_folder), "--template-dir", str(templates)])
    assert result.exit_code == 2, result.output
    assert message in result.output and "fix:" in result.output and "Traceback" not in result.output
    assert (run_folder / "decision.json").read_text(encoding="utf-8") == decision


def test_a_report_file_that_cannot_be_written_exits_2_and_keeps_the_decision(run_folder: Path) -> None:
    decision = (run_folder / "decision.json").read_text(encoding="utf-8")
    (run_folder / "report.html").unlink()
    (run_folder / "report.html").mkdir()  # in the way of the page
    result = runner.invoke(app, ["report", str(run_folder)])
    assert result.exit_code == 2, result.output
    assert f"{run_folder / 'report.html'}: cannot write report.html" in result.output
    assert "fix:" in result.output and "Traceback" not in result.output
    assert (run_folder / "decision.json").read_text(encoding="utf-8") == decision


def test_an_unwritable_step_summary_exits_2_after_every_report_is_written(
        run_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder
    for name in ("report.html", "report.md", "junit.xml"):
        (run_folder / name).unlink()
    result = runner.invoke(app, ["report", str(run_folder)])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path}: GITHUB_STEP_SUMMARY: cannot append report.md" in result.output
    assert "fix:" in result.output and "Traceback" not in result.output
    assert all((run_folder / name).is_file() for name in FILES.values())


def test_a_lone_surrogate_from_any_harness_is_written_as_visible_text(tmp_path: Path) -> None:
    """Results can come from any harness's reader; a string with an unpaired surrogate (no UTF-8 writer takes it)
    must not cost the run its reports."""
    base = f.run("base", [True, True, False, True])
    cand = f.run("cand", [True, False, True, True])
    cand.tasks["gsm8k"].samples[2].responses = ["broken \ud800 text"]
    cand.provenance.model = "cand \udc00"
    written = write_reports(tmp_path / "out", f.decision(), contract=f.contract(tmp_path), baseline=base,
                            candidate=cand, step_summary=False)
    model = json.loads(written["model"].read_text(encoding="utf-8"))
    gsm8k = next(t for t in model["tasks"] if t["task"] == "gsm8k")
    assert "broken \\ud800 text" in gsm8k["samples"]["candidate_response"]
    assert "cand \\udc00" in written["markdown"].read_text(encoding="utf-8").replace("\\\\", "\\")
    assert written["junit"].is_file() and written["html"].is_file()
