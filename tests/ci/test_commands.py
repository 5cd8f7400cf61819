"""Workflow-command escaping, $GITHUB_OUTPUT writing, summary truncation and the step helpers' edge cases."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from ci_action_runner import parse_env_file, unescape
from hypothesis import given
from hypothesis import strategies as st

from rlgate.ci.commands import annotation, truncate_summary, write_outputs
from rlgate.ci.gates import MAX_PER_LEVEL, gate_annotations, locate_metric, metric_line
from rlgate.ci.steps import check_command, finish, resolve_out, run_check
from rlgate.engine.models import Decision, GateVerdict


@given(st.text(min_size=1))
def test_escaped_annotations_are_one_line_and_round_trip(text: str) -> None:
    line = annotation("error", text, title=text, file="contracts/a,b:c.yaml", line=3)
    assert "\n" not in line and "\r" not in line
    head, message = line[len("::error "):].split("::", 1)
    assert unescape(message) == text
    props = dict(item.split("=", 1) for item in head.split(","))
    assert unescape(props["title"]) == text
    assert unescape(props["file"]) == "contracts/a,b:c.yaml" and props["line"] == "3"


def test_annotation_without_properties() -> None:
    assert annotation("warning", "careful") == "::warning::careful"


def test_outputs_use_delimiters_so_newlines_cannot_forge_outputs(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    assert write_outputs({"decision": "release\nexit-code=0", "report-path": "/r/report.html"},
                         {"GITHUB_OUTPUT": str(out)})
    assert parse_env_file(out) == {"decision": "release\nexit-code=0", "report-path": "/r/report.html"}
    assert not write_outputs({"a": "b"}, {})


def test_summary_is_cut_on_a_line_boundary_under_the_limit() -> None:
    text = "".join(f"| row {i} | é |\n" for i in range(1000))
    cut = truncate_summary(text, "(truncated)", limit=500)
    assert len(cut.encode("utf-8")) <= 500
    assert cut.endswith("\n(truncated)\n")
    body = cut[: -len("\n(truncated)\n")]
    assert body.endswith("|\n") and text.startswith(body)
    assert truncate_summary("short\n", "(truncated)", limit=500) == "short\n"


def test_out_defaults_to_runner_temp(tmp_path: Path) -> None:
    assert resolve_out({"RUNNER_TEMP": str(tmp_path)}) == tmp_path / "rlgate-report"
    assert resolve_out({"RLGATE_CI_OUT": "reports/x", "RUNNER_TEMP": str(tmp_path)}) == Path("reports/x").absolute()


def test_check_command_passes_inputs_as_arguments_never_through_a_shell(tmp_path: Path) -> None:
    env = {"RLGATE_CI_CONTRACT": "contracts/c.yaml", "RLGATE_CI_CHECKPOINT": "/ckpt/$(reboot); x",
           "RLGATE_CI_BASELINE": "/base", "RLGATE_CI_ARGS": "--limit 5 --note 'two words'"}
    argv = check_command(env, tmp_path)
    assert argv == [sys.executable, "-m", "rlgate.cli.app", "check", "contracts/c.yaml", "--checkpoint",
                    "/ckpt/$(reboot); x", "--out", str(tmp_path), "--baseline", "/base", "--limit", "5",
                    "--note", "two words"]
    assert "--baseline" not in check_command({**env, "RLGATE_CI_BASELINE": " "}, tmp_path)


def test_check_with_an_empty_input_records_bad_input(tmp_path: Path) -> None:
    output = tmp_path / "output"
    stream = io.StringIO()
    assert run_check({"RLGATE_CI_CONTRACT": "c.yaml", "RLGATE_CI_CHECKPOINT": "", "RUNNER_TEMP": str(tmp_path),
                      "GITHUB_OUTPUT": str(output)}, stream) == 0
    assert parse_env_file(output)["exit-code"] == "2"
    assert "::error title=rlgate%3A missing input::the action input 'checkpoint' is empty" in stream.getvalue()


def test_finish_maps_decisions_to_exit_codes() -> None:
    def code(decision: str, research: str = "0") -> int:
        return finish({"RLGATE_CI_DECISION": decision, "RLGATE_CI_RESEARCH_ONLY_EXIT_CODE": research}, io.StringIO())

    assert [code("release"), code("block"), code("research_only"), code("research_only", "3")] == [0, 1, 0, 3]
    assert [code("error"), code(""), code("research_only", "256"), code("research_only", "-1")] == [2, 2, 2, 2]
    assert code("block", "0") == 1  # research-only-exit-code never softens a block


def test_many_failed_gates_fold_into_github_display_limit() -> None:
    gates = [GateVerdict(name=f"g{i}", kind="regression", metric=f"t{i}/acc", verdict="fail", outcome="regression_fail",
                         effect="block", reason="dropped") for i in range(15)]
    decision = Decision(decision="block", summary="block", gates=gates, contract="c", alpha=0.05, seed=0)
    lines = gate_annotations(decision, None, {})
    assert len(lines) == MAX_PER_LEVEL
    assert lines[-1].endswith("::7 more gates at this level: see the job summary and report.html")


def test_metric_line_falls_back_from_filter_to_the_contract_reference() -> None:
    lines = {"gsm8k/answer_parse_failure_rate": 7, "gsm8k/exact_match/flexible-extract": 3}
    assert metric_line("gsm8k/answer_parse_failure_rate/flexible-extract", lines) == 7
    assert metric_line("gsm8k/exact_match/flexible-extract", lines) == 3
    assert metric_line("gsm8k/exact_match/strict-match", lines) is None
    assert metric_line("ifeval/prompt_level_strict_acc/none", lines) is None


def test_locate_metric_finds_flow_and_block_style_references(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text("gates:\n  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}\n"
                        "  hard:\n    - metric: 'ifeval/prompt_level_strict_acc'  # see docs/x/y\n", encoding="utf-8")
    assert locate_metric(contract) == {"gsm8k/exact_match/flexible-extract": 2, "ifeval/prompt_level_strict_acc": 4}
    assert locate_metric(tmp_path / "missing.yaml") == {}


def test_annotation_figures_never_read_as_their_threshold_or_alpha() -> None:
    from rlgate.ci.gates import gate_message

    near = GateVerdict(name="a", kind="primary", metric="t/acc", verdict="fail", outcome="primary_fail",
                       effect="research_only", baseline=0.4, candidate=0.45, delta=0.05, ci=(0.0199996, 0.08),
                       p_value=0.04996, threshold={"min_delta": 0.02}, reason="fail")
    assert gate_message(near, 0.05) == ("fail (baseline 0.4 -> candidate 0.45; delta +0.05 [+0.0199996, +0.08]; "
                                        "p=0.04996)")
    holm = near.model_copy(update={"p_adjusted": 0.2})  # the unadjusted p is not what alpha is compared with
    assert gate_message(holm, 0.05).endswith("p=0.05)")
