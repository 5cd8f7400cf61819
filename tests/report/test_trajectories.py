"""Agent trajectories in the report: typed views, step by step, inert text, private splits out, size budget,
and the drops manifest of runs that did not finish normally."""

from __future__ import annotations

import json
from pathlib import Path

from rlgate.report.builder import build_report
from rlgate.report.io import write_reports
from rlgate.report.trajectories import step_views
from tests.report import factories as f

BASE = [True, True, False, True, True, False, True, False]
CAND = [True, False, True, False, False, True, True, True]


def _model(tmp_path: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    return build_report(f.decision(), contract=f.contract(tmp_path), baseline=f.agent_run("base", BASE),
                        candidate=f.agent_run("cand", CAND), **kwargs)  # type: ignore[arg-type]


def test_steps_are_typed_with_tool_results_named_and_retries_marked() -> None:
    steps = step_views(f.trajectory(0, True))
    assert [s.kind for s in steps] == ["instruction", "observation", "action", "tool_result", "action",
                                       "tool_result", "final"]
    assert steps[2].tool_calls[0].function == "search"
    assert json.loads(steps[2].tool_calls[0].arguments) == {"q": "<b>two plus two</b>"}
    assert steps[3].function == "search" and steps[3].error == "timeout: search took too long"
    assert [s.retry for s in steps] == [False, False, False, False, True, False, False]
    assert steps[5].text == f.HOSTILE_TOOL_RESULT  # kept as written; the renderers make it inert


def test_shareable_tasks_get_every_trajectory_private_ones_none(tmp_path: Path) -> None:
    model = _model(tmp_path)
    sections = {s.task: s for s in model.tasks}
    gsm8k = sections["gsm8k"]
    assert gsm8k.trajectories_total == 16 and len(gsm8k.trajectories) == 16
    assert sections["ifeval"].trajectories == [] and sections["ifeval"].samples_withheld
    first = gsm8k.trajectories[0]  # regressed pairs first, the candidate before the baseline
    assert (first.change, first.run, first.doc_id) == ("regressed", "candidate", 1)
    assert first.success == 0.0 and first.tool_calls == 2 and first.tool_errors == 1 and first.turns == 3
    assert first.tokens == 301 and first.time_s == 1.5 and json.loads(first.final_state or "") == {"db": {"k": "<v>"}}
    assert "16 of 16 agent trajectories" in model.trajectory_note or "32 of" in model.trajectory_note
    assert f.PRIVATE_MARKER not in model.model_dump_json()


def test_trajectory_text_is_inert_in_html_and_kept_out_of_markdown(tmp_path: Path) -> None:
    written = write_reports(tmp_path / "out", f.decision(), contract=f.contract(tmp_path),
                            baseline=f.agent_run("base", BASE), candidate=f.agent_run("cand", CAND),
                            step_summary=False)
    html = written["html"].read_text(encoding="utf-8")
    assert 'id="traj-0-0"' in html and 'class="steps"' in html
    assert "<script>window.__pwned=32" not in html and "<img src=x onerror=\"window.__pwned=31" not in html
    assert "&lt;script&gt;window.__pwned=32" in html and "&lt;/pre&gt;&lt;/details&gt;" in html
    for out in ("report.html", "report.md", "report_model.json", "decision.json"):
        assert f.PRIVATE_MARKER not in (tmp_path / "out" / out).read_text(encoding="utf-8"), out


def test_the_size_budget_keeps_outcomes_and_drops_steps_changed_pairs_first(tmp_path: Path) -> None:
    model = _model(tmp_path, trajectory_budget=1_500)
    views = [t for s in model.tasks for t in s.trajectories]
    kept = [t for t in views if not t.steps_left_out]
    assert kept and len(kept) < len(views)
    assert all(t.steps == [] and t.turns == 3 for t in views if t.steps_left_out)
    assert kept[0].change == "regressed"
    assert "show their outcome and cost but not their steps" in model.trajectory_note


def test_drops_manifest_lists_errored_limited_and_sandbox_failed_runs_as_failures(tmp_path: Path) -> None:
    model = _model(tmp_path)
    dropped = model.rollout.dropped_runs
    assert dropped is not None and dropped.trajectories == {"baseline": 24, "candidate": 24}
    kinds = {(d.run, d.task, d.doc_id): d.kind for d in dropped.runs}
    # candidate wrong on 1, 3, 4 of each 8: 3 hit the message limit, 4 lost its sandbox (doc 1: plain failure)
    assert kinds[("candidate", "gsm8k", 3)] == "limit" and kinds[("candidate", "gsm8k", 4)] == "sandbox_failed"
    assert kinds[("baseline", "gsm8k", 2)] == "errored" and ("candidate", "gsm8k", 1) not in kinds
    assert all(d.counted_as.startswith("failure") for d in dropped.runs)
    private = [d for d in dropped.runs if d.task == "ifeval" and d.kind in ("errored", "sandbox_failed")]
    assert private and all(d.detail.startswith("[withheld") for d in private)
    assert any("never skipped" in rule for rule in model.rollout.reporting_rules)
