"""Each task's metrics are checked against the harness that owns it, right after the contract loads.

The issue's defect: an inspect task named `gsm8k` (inspect-evals ships one) gated on its own `accuracy`
was refused by lm-eval's catalog ("task 'gsm8k' has no metric 'accuracy'"), and so was `gsm8k_agent`.
lm-eval's tasks keep their checks (closest match, ambiguous filters, fractions), located in the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rlgate._core.errors import InputError
from rlgate.contract.loader import load_contract as load_contract_files
from rlgate.harness.vocabulary import family_of, load_contract, vocabulary_of


def _contract(tmp_path: Path, tasks: list[dict[str, Any]], gates: dict[str, Any]) -> Path:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "v", "baseline": {"checkpoint": "b"},
        "splits": {"public": {"visibility": "nightly"}},
        "suites": [{"schema_version": 1, "name": "s", "tasks": [{"split": "public", **t} for t in tasks]}],
        "gates": gates}, sort_keys=False))
    return tmp_path / "c.yaml"


@pytest.mark.parametrize(("task", "metric"), [
    ({"task": "inspect_evals/gsm8k", "harness": "inspect"}, "gsm8k/accuracy"),
    ({"task": "inspect_evals/gsm8k", "harness": "inspect", "name": "gsm8k_agent"}, "gsm8k_agent/accuracy"),
    ({"task": "inspect_evals/mmlu_pro", "harness": "inspect", "name": "mmlu_pro_agent"}, "mmlu_pro_agent/accuracy"),
    ({"task": "inspect_evals/ifeval", "harness": "inspect"}, "ifeval/final_acc"),
])
def test_an_inspect_task_named_like_an_lm_eval_one_is_gated_on_its_own_metric(tmp_path: Path, task: dict[str, Any],
                                                                            metric: str) -> None:
    resolved = load_contract(_contract(tmp_path, [task], {"primary": {"metric": metric, "min_delta": 0.01}}))
    name = metric.split("/")[0]
    vocabulary = resolved.gates.vocabularies[name]
    assert vocabulary.harness == "inspect" and not vocabulary.closed
    assert vocabulary.default_filter == "none"
    assert resolved.gates.default_filter(name) == "none"


def test_an_lm_eval_gate_on_a_wrong_metric_is_refused_with_the_closest_match_and_the_line(tmp_path: Path) -> None:
    path = _contract(tmp_path, [{"task": "gsm8k"}], {"primary": {"metric": "gsm8k/exact_mach/flexible-extract",
                                                                 "min_delta": 0.01}})
    with pytest.raises(InputError) as err:
        load_contract(path)
    text = str(err.value)
    assert "task 'gsm8k' has no metric 'exact_mach'" in text and "did you mean 'gsm8k/exact_match'?" in text
    assert err.value.file == path and err.value.line is not None and err.value.field == "gates.primary.metric"


def test_the_same_metric_name_on_an_inspect_gsm8k_and_an_lm_eval_gsm8k_is_judged_by_each_harness(
        tmp_path: Path) -> None:
    tasks = [{"task": "gsm8k"}, {"task": "inspect_evals/gsm8k", "harness": "inspect", "name": "gsm8k_inspect"}]
    gates = {"primary": {"metric": "gsm8k_inspect/accuracy", "min_delta": 0.01},
             "regression": [{"metric": "gsm8k/accuracy", "max_drop": 0.01}]}
    with pytest.raises(InputError, match="task 'gsm8k' has no metric 'accuracy'") as err:
        load_contract(_contract(tmp_path, tasks, gates))
    assert err.value.field == "gates.regression[0].metric"


def test_lm_eval_checks_kept_ambiguous_filter_and_fraction_bounds(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is ambiguous"):
        load_contract(_contract(tmp_path, [{"task": "gsm8k"}], {"primary": {"metric": "gsm8k/exact_match",
                                                                             "min_delta": 0.01}}))
    with pytest.raises(InputError, match=r"min_delta=2\.0 is out of range") as err:
        load_contract(_contract(tmp_path, [{"task": "mmlu_pro"}], {"primary": {"metric": "mmlu_pro/exact_match",
                                                                                "min_delta": 2}}))
    assert err.value.field == "gates.primary.min_delta"


def test_the_contract_layer_alone_knows_no_catalog(tmp_path: Path) -> None:
    """The structural loader accepts any metric name; only the harness check refuses it."""
    path = _contract(tmp_path, [{"task": "gsm8k"}], {"primary": {"metric": "gsm8k/nonsense/x", "min_delta": 0.01}})
    assert load_contract_files(path).gates.vocabularies == {}
    with pytest.raises(InputError, match="has no metric 'nonsense'"):
        load_contract(path)


def test_lm_eval_vocabulary_gives_filters_defaults_ranges_and_the_samples_hint(tmp_path: Path) -> None:
    gsm8k = vocabulary_of("gsm8k")
    assert gsm8k.closed and gsm8k.default_filter == "flexible-extract"
    assert gsm8k.metrics["exact_match"].filters == ("strict-match", "flexible-extract")
    assert gsm8k.ranges() == {"exact_match": (0.0, 1.0)}
    assert gsm8k.samples_hint == "re-run lm_eval with --log_samples"
    assert vocabulary_of("mmlu_pro_math").default_filter == "custom-extract"  # a subtask, by prefix
    assert family_of("mmlu_pro_math") == "mmlu_pro" and family_of("arc_easy") == "arc_easy"
    assert not vocabulary_of("arc_easy").closed  # not in the catalog: any metric
    assert vocabulary_of("gsm8k", "inspect").ranges() == {} and family_of("gsm8k_x", "inspect") == "gsm8k_x"
    steps = gsm8k.metric("steps")  # rlgate's own metrics mean the same under every harness
    assert steps.kind == "count" and not steps.higher_is_better


def test_a_local_lm_eval_task_folder_is_not_judged_by_the_catalog(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "gsm8k").mkdir(parents=True)
    (tmp_path / "tasks" / "gsm8k" / "gsm8k.yaml").write_text("task: gsm8k\n")
    resolved = load_contract(_contract(tmp_path, [{"task": "gsm8k", "path": "tasks/gsm8k"}],
                                       {"primary": {"metric": "gsm8k/acc", "min_delta": 0.01}}))
    assert not resolved.gates.vocabularies["gsm8k"].closed
