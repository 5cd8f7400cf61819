"""The first screen and the designed sections, on the report models the demos wrote (tests/report/demo_models)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from rlgate.report import firstscreen, svg
from rlgate.report.html import breakable, name_breakable, report_sections
from rlgate.report.model import ReportModel
from rlgate.report.nodes import Node
from rlgate.report.svg import _wrap

MODELS = Path(__file__).resolve().parent / "demo_models"


def _demo(name: str) -> ReportModel:
    path = MODELS / name / "report_model.json.gz"
    if not path.is_file():
        pytest.skip(f"no recorded demo report model {path}")
    return ReportModel.model_validate_json(gzip.decompress(path.read_bytes()))


def _kinds(node: Node) -> set[str]:
    out = {node.kind}
    for child in [*node.children, *(v for _, v in node.items), *(c for row in node.rows for c in row)]:
        out |= _kinds(child)
    return out


@pytest.mark.parametrize("name", ["text", "agent", "agent_unsafe", "vlm", "monitor", "real"])
def test_every_section_is_designed_not_a_key_value_dump(name: str) -> None:
    for key, _, tree in report_sections(_demo(name)):
        assert tree.kind == "stack" and tree.children[0].kind == "verdict", key
        assert "kv" not in _kinds(tree), key


def test_judge_section_leads_with_win_rates_and_collapses_the_items() -> None:
    sections = {key: tree for key, _, tree in report_sections(_demo("vlm"))}
    judge = sections["judge"]
    assert "chartqa: candidate wins 43.1%" in judge.children[0].text
    assert judge.children[1].kind == "table" and judge.children[1].columns[0] == "Task"
    assert [c.kind for c in judge.children[2:]] == ["details", "details"]


def test_failed_primary_reason_leads_with_the_failing_clause() -> None:
    primary = next(g for g in _demo("vlm").decision.gates if g.kind == "primary")
    assert primary.verdict == "fail"
    assert primary.reason.startswith("fail: one-sided p=0.240 >= alpha 0.05, improvement"), primary.reason


def test_chance_level_task_is_flagged_where_it_passes() -> None:
    model = _demo("text")
    flags = firstscreen.gate_flags(model)
    mmlu = next(g for g in model.decision.gates if g.metric.startswith("mmlu_pro/"))
    assert mmlu.verdict == "pass"
    assert flags[mmlu.name] == ["at chance (10 options, chance 10.0%): cannot show a regression"]
    gsm8k = [g for g in model.decision.gates if g.metric.startswith("gsm8k/")]
    assert all(g.name not in flags for g in gsm8k)  # numeric answers: no chance level


def test_unsafe_action_that_decided_is_named_with_tool_arguments_and_sample() -> None:
    actions = firstscreen.unsafe_actions(_demo("agent_unsafe"))
    assert actions and actions[0].deciding
    assert (actions[0].function, actions[0].doc_id) == ("db_delete", "order-3")
    assert "audit_log" in actions[0].arguments and actions[0].anchor.startswith("traj-")
    assert firstscreen.unsafe_actions(_demo("agent")) == []


def test_runs_are_told_apart_in_the_title() -> None:
    for name in ("text", "agent", "agent_unsafe", "vlm", "monitor", "real"):
        names = _demo(name).title.split(": ", 1)[1].split(" vs ")
        assert len(names) == 2 and names[0] != names[1], names


def test_crowded_radar_becomes_bars_with_every_label_whole() -> None:
    model = _demo("vlm")
    chart = str(svg.radar(model.radar))
    assert 'class="radar bars"' in chart and "…" not in chart
    assert all(a.ref in chart for a in model.radar)
    assert 'class="radar"' in str(svg.radar(_demo("text").radar))


def test_labels_wrap_at_separators_and_never_truncate() -> None:
    assert _wrap("mathvista_testmini::statistical_reasoning") == ["mathvista_testmini::", "statistical_reasoning"]
    assert _wrap("x" * 40) == ["x" * 40]
    assert str(breakable("a/b")) == "a/<wbr>b"
    assert str(name_breakable("mmmu_val_x")) == "mmmu_<wbr>val_<wbr>x"
    assert str(breakable("<b>")) == "&lt;b&gt;"


def test_protocol_card_leaves_out_agent_and_image_rows_of_a_text_run() -> None:
    rows = dict(firstscreen.protocol_rows(_demo("text")))
    assert rows and not any(k.startswith(("agent.", "image.")) for k in rows)
    assert rows.get("sampling.seed") == "1234"


def test_protocol_card_names_the_executor_only_when_shards_ran_elsewhere() -> None:
    model = _demo("text")

    def rows(kind: str) -> dict[str, str]:
        protocol = {**model.rollout.protocol, "executor": {"kind": kind, "shards": 4}}
        rollout = model.rollout.model_copy(update={"protocol": protocol})
        return dict(firstscreen.protocol_rows(model.model_copy(update={"rollout": rollout})))

    assert not any(k.startswith("executor.") for k in rows("local"))
    assert rows("ray")["executor.kind"] == "ray" and rows("ray")["executor.shards"] == "4"
