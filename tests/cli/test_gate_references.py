"""`rlgate gate` with three references (sft, previous_release, reference) and the suite-health check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fixtures.lmeval_builders import build_synthetic_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
runner = CliRunner()
pytest.importorskip("lm_eval")

THREE = """schema_version: 1
name: three_refs
baseline:
  sft: {{results: sft}}
  previous_release: {{results: prev}}
  reference: {{results: ref, role: reported}}
splits:
  test_public: {{visibility: nightly}}
suites: [suite.yaml]
gates:
  regression:
    - {{metric: gsm8k/exact_match/flexible-extract, max_drop: 0.05, test: significance}}
{extra}"""


def _folders(root: Path, rates: dict[str, int], n: int = 100) -> None:
    for name, right in rates.items():
        build_synthetic_folder(root / name, f"org/{name}", {"gsm8k": [True] * right + [False] * (n - right)})
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", root / "suite.yaml")


def _gate(root: Path, extra: str = "") -> tuple[int, str, dict, str]:
    (root / "c.yaml").write_text(THREE.format(extra=extra))
    result = runner.invoke(app, ["gate", str(root / "c.yaml"), "--candidate", str(root / "cand"),
                                 "--out", str(root / "out")])
    decision = json.loads((root / "out" / "decision.json").read_text()) if (root / "out" / "decision.json").exists() \
        else {}
    md = (root / "out" / "report.md").read_text() if (root / "out" / "report.md").exists() else ""
    return result.exit_code, result.output, decision, md


def test_three_references_in_decision_and_report(tmp_path: Path) -> None:
    _folders(tmp_path, {"sft": 55, "prev": 62, "ref": 75, "cand": 64})
    code, out, decision, md = _gate(tmp_path)
    assert code == 0, out
    refs = decision["extensions"]["references"]
    assert [(r["name"], r["role"], r["main"]) for r in refs["references"]] == [
        ("sft", "gated", True), ("previous_release", "gated", False), ("reference", "reported", False)]
    values = {r["name"]: r["gates"][0]["baseline"] for r in refs["references"]}
    assert values == pytest.approx({"sft": 0.55, "previous_release": 0.62, "reference": 0.75})
    assert all(r["gates"][0]["candidate"] == pytest.approx(0.64) for r in refs["references"])
    # the reported reference is better than the candidate by 11 points (a significant drop): shown, never decides
    assert refs["decision"] == "release" and refs["references"][2]["decision"] == "block"
    for name in ("sft", "previous_release", "reference"):
        assert name in md
    assert "Candidate against each reference" in md and "reported" in md
    html = (tmp_path / "out" / "report.html").read_text()
    assert "previous_release" in html and "Candidate against each reference" in html
    health = decision["extensions"]["suite_health"]
    assert health["findings"] == [] and health["tasks"][0]["references"]["reference"] == pytest.approx(0.75)


def test_a_gated_reference_that_the_candidate_loses_to_decides(tmp_path: Path) -> None:
    _folders(tmp_path, {"sft": 55, "prev": 78, "ref": 60, "cand": 60})
    code, out, decision, _ = _gate(tmp_path)
    assert code == 1, out
    assert decision["decision"] == "block"
    assert decision["summary"].startswith("block against reference previous_release:")
    assert decision["extensions"]["references"]["references"][0]["decision"] == "release"


def test_suite_health_warns_on_a_task_every_reference_aces(tmp_path: Path) -> None:
    _folders(tmp_path, {"sft": 99, "prev": 100, "ref": 100, "cand": 100})
    _, out, decision, md = _gate(tmp_path)
    findings = decision["extensions"]["suite_health"]["findings"]
    kinds = [(f["task"], f["kind"], f["severity"]) for f in findings]
    assert kinds == [("gsm8k", "cannot_discriminate", "warning"), ("gsm8k", "outside_band", "note")]
    assert any("this task cannot discriminate" in w and "sft 99.0 %" in w for w in decision["warnings"])
    assert "this task cannot discriminate" in md and "outside the 40.0 %-80.0 % band" in md
    assert "cannot discriminate" in out  # the CLI's warnings


def test_one_reference_below_the_ceiling_keeps_the_task_discriminating(tmp_path: Path) -> None:
    _folders(tmp_path, {"sft": 80, "prev": 100, "ref": 100, "cand": 100})
    _, _, decision, _ = _gate(tmp_path)
    kinds = [f["kind"] for f in decision["extensions"]["suite_health"]["findings"]]
    assert kinds == ["outside_band"]


def test_anchor_set_catches_a_suite_that_got_easier(tmp_path: Path) -> None:
    # references and candidate agree on the 20 anchors (docs 0-19); off the anchors the candidate's run is far
    # better, as when a new suite version replaced hard documents by easy ones
    n = 100
    base = [i < 10 or 20 <= i < 60 for i in range(n)]
    cand = [i < 10 or i >= 20 for i in range(n)]
    for name in ("sft", "prev", "ref"):
        build_synthetic_folder(tmp_path / name, f"org/{name}", {"gsm8k": base})
    build_synthetic_folder(tmp_path / "cand", "org/cand", {"gsm8k": cand})
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", tmp_path / "suite.yaml")
    anchors = ", ".join(str(i) for i in range(20))
    health = (f"suite_health:\n  anchor_sets:\n    - {{task: gsm8k, doc_ids: [{anchors}]}}\n"
              "    - {task: gsm8k_typo, doc_ids: [0]}\n")
    _, _, decision, _ = _gate(tmp_path, health)
    shifts = [f for f in decision["extensions"]["suite_health"]["findings"] if f["kind"] == "anchor_shift"]
    assert len(shifts) == 3 and "+0.0 points on the 20 anchor documents but by +40.0" in shifts[0]["message"]
    unread = [f["message"] for f in decision["extensions"]["suite_health"]["findings"] if f["task"] == "gsm8k_typo"]
    assert len(unread) == 1 and "no primary or regression gate reads" in unread[0]


def test_reference_without_results_is_refused_with_the_fix(tmp_path: Path) -> None:
    _folders(tmp_path, {"sft": 55, "cand": 60})
    (tmp_path / "c.yaml").write_text(THREE.format(extra="").replace("{results: prev}", "{checkpoint: org/prev}")
                                     .replace("  reference: {results: ref, role: reported}\n", ""))
    result = runner.invoke(app, ["gate", str(tmp_path / "c.yaml"), "--candidate", str(tmp_path / "cand")])
    assert result.exit_code == 2 and "reference 'previous_release' has no results" in result.output
    assert "baseline.previous_release.results" in result.output and "Traceback" not in result.output


@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    from fixtures.lmeval_builders import cached_folder

    root = tmp_path_factory.getbasetemp()
    return {m: cached_folder(root, "gsm8k_abel", shared_data, m) for m in ("7b", "13b")}


def test_each_reference_row_is_the_decision_that_reference_alone_would_give(abel: dict[str, Path],
                                                                             tmp_path: Path) -> None:
    """Real Abel GSM8K outputs: the 7B as main reference and the 13B as a second gated one. The comparison
    against the 13B equals `rlgate gate --baseline 13B` of the same contract with a single baseline."""
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", tmp_path / "gsm8k_suite.yaml")
    single = (CONTRACTS / "abel_gsm8k.yaml").read_text()
    (tmp_path / "single.yaml").write_text(single)
    three = single.replace("baseline:\n  checkpoint: GAIR/Abel-7B-001\n",
                           f"baseline:\n  sft: {{results: '{abel['7b']}'}}\n"
                           f"  previous_release: {{results: '{abel['13b']}'}}\n")
    assert three != single
    (tmp_path / "three.yaml").write_text(three)
    result = runner.invoke(app, ["gate", str(tmp_path / "three.yaml"), "--candidate", str(abel["13b"]),
                                 "--out", str(tmp_path / "three")])
    alone = runner.invoke(app, ["gate", str(tmp_path / "single.yaml"), "--candidate", str(abel["13b"]),
                                "--baseline", str(abel["13b"]), "--out", str(tmp_path / "alone")])
    main = runner.invoke(app, ["gate", str(tmp_path / "single.yaml"), "--candidate", str(abel["13b"]),
                               "--baseline", str(abel["7b"]), "--out", str(tmp_path / "main")])
    three_d = json.loads((tmp_path / "three" / "decision.json").read_text())
    alone_d = json.loads((tmp_path / "alone" / "decision.json").read_text())
    main_d = json.loads((tmp_path / "main" / "decision.json").read_text())
    rows = {r["name"]: r for r in three_d["extensions"]["references"]["references"]}
    for row, expected in ((rows["previous_release"], alone_d), (rows["sft"], main_d)):
        assert row["decision"] == expected["decision"] and row["summary"] == expected["summary"]
        assert [(g["name"], g["verdict"], g["baseline"], g["candidate"], g["p_value"]) for g in row["gates"]] == [
            (g["name"], g["verdict"], g["baseline"], g["candidate"], g["p_value"]) for g in expected["gates"]]
    # the 13B against itself cannot show the primary improvement: research_only wins over the 7B's release
    assert main_d["decision"] == "release" and alone_d["decision"] == "research_only"
    assert three_d["decision"] == "research_only" and result.exit_code == 3
    assert three_d["gates"] == main_d["gates"]  # the gate table is the main reference's, byte for byte
    assert main.exit_code == 0 and alone.exit_code == 3
