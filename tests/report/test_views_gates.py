"""Gate figures that must read the same everywhere: monitor findings' values, cost gates' pairing, one-run gates'
baselines in the terminal table, the decision headline, and which run is which."""

from __future__ import annotations

from rlgate.engine.models import Decision, GateVerdict
from rlgate.engine.summary import decision_markdown, decision_table
from rlgate.report.model import ReportModel, RolloutCard, RunCard
from rlgate.report.views import gate_line, gate_values, headline


def _decision(gates: list[GateVerdict], summary: str = "s", decision: str = "block") -> Decision:
    return Decision(decision=decision, summary=summary, gates=gates, contract="c", alpha=0.05, seed=0,  # type: ignore[arg-type]
                    deciding_gates=[g.name for g in gates if g.verdict != "pass"])


def _model(decision: Decision, runs: list[RunCard] | None = None, protocol: dict | None = None) -> ReportModel:
    return ReportModel(generated_at="2026-01-01T00:00:00Z", rlgate_version="0", title="t", contract_name="c",
                       decision=decision, rollout=RolloutCard(runs=runs or [], protocol=protocol or {}))


def _truncation() -> GateVerdict:
    return GateVerdict(name="monitor:truncation_high", kind="monitor", metric="truncation_high", verdict="fail",
                       outcome="monitor_warning", effect="research_only", threshold={"max": 0.1},
                       reason="[configuration] 25.0% of responses hit the length limit over the last window",
                       details={"values": {"trunc_ratio": 0.25}, "step_start": 25, "step_end": 32})


def test_a_monitor_finding_shows_the_value_it_measured_beside_its_limit() -> None:
    gate = _truncation()
    assert gate_values(gate) == "trunc_ratio 0.25 (steps 25–32)"
    line = gate_line(gate)
    assert line == "truncation high: trunc_ratio 0.25 (steps 25–32); max 0.1"
    clear = GateVerdict(name="monitor", kind="monitor", metric="training_log", verdict="pass", outcome="monitor_info",
                        effect="release", reason="1 log(s), 12 rule check(s): no failure signal")
    assert gate_line(clear) == "1 log(s), 12 rule check(s): no failure signal"


def test_a_cost_gate_says_it_pairs_only_what_both_runs_solved() -> None:
    gate = GateVerdict(name="toolbox/tokens_to_success", kind="diagnostic", metric="toolbox/tokens_to_success/none",
                       verdict="fail", outcome="diagnostic_fail", effect="research_only", baseline=534.5,
                       candidate=1091.0, delta=556.4, n=11, threshold={"max_relative_increase": 0.5}, reason="fail")
    assert "tokens to success (paired: only the 11 trajectories both runs solved) 534.5 → 1,091" in gate_line(gate)


def test_the_terminal_table_shows_a_hard_gates_baseline_as_the_reports_do() -> None:
    hard = GateVerdict(name="gsm8k/answer_parse_failure_rate", kind="hard",
                       metric="gsm8k/answer_parse_failure_rate/flexible-extract", verdict="pass", outcome="hard_pass",
                       effect="release", candidate=0.0, n=350, threshold={"max": 0.2}, reason="pass")
    d = _decision([hard], decision="release")
    assert "2.86%" not in decision_table(d)
    known = {hard.metric: 0.02857142857142857}
    row = next(line for line in decision_table(d, known).splitlines() if line.startswith("hard"))
    assert "2.86%" in row and "0.00%" in row
    assert "| 2.86% | 0.00% |" in decision_markdown(d, known)


def test_a_run_on_summary_becomes_the_deciding_gates_by_name() -> None:
    long = "block: " + "; ".join(f"gate g{i} fail (a long reason with many words {i})" for i in range(8))
    d = _decision([_truncation()], summary=long)
    short = headline(_model(d))
    assert short == "block: decided by monitor gate monitor:truncation_high (fail)"
    assert headline(_model(_decision([], summary="release: all 5 gates passed", decision="release"))) \
        == "release: all 5 gates passed"


def test_a_scripted_run_protocol_card_says_no_backend_ran() -> None:
    from rlgate.report.firstscreen import protocol_rows

    runs = [RunCard(role=role, checkpoint=f"mockllm/toolbox-{role}", checkpoint_fingerprint=f"scripted:{role}")
            for role in ("baseline", "candidate")]
    rows = dict(protocol_rows(_model(_decision([]), runs, {"backend": "hf", "hf": {"device": "auto"},
                                                         "sampling": {"seed": 1234}})))
    assert rows["backend"].startswith("none: scripted policies (mockllm/toolbox-baseline") and "hf.device" not in rows
    assert rows["sampling.seed"] == "1234"
    plain = dict(protocol_rows(_model(_decision([]), None, {"backend": "hf", "hf": {"device": "auto"}})))
    assert plain["backend"] == "hf" and "hf.device" in plain
