"""A table of valid and invalid contracts with the exact error text each must produce."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.vocabulary import load_contract

SUITE = """schema_version: 1
name: core
tasks:
  - {task: mmlu_pro, split: test_public}
  - {task: gsm8k, split: test_public}
  - {task: ifeval, split: test_public}
"""

BASE = """schema_version: 1
name: t
baseline:
  checkpoint: base
splits:
  test_public: {visibility: nightly}
suites: [suite.yaml]
gates:
  primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}
  regression:
    - {metric: ifeval/prompt_level_strict_acc, max_drop: 0.01}
"""


def _write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    _write(tmp_path, "suite.yaml", SUITE)
    return tmp_path


def test_examples_validate_unchanged(repo_root: Path) -> None:
    resolved = load_contract(repo_root / "contracts" / "math_rlvr.yaml")
    assert resolved.name == "math_rlvr"
    assert [t.name for t in resolved.tasks] == ["aime24", "aime25", "minerva_math500", "gsm8k", "mmlu_pro", "ifeval"]
    sampling = resolved.contract.protocol.sampling
    assert (sampling.temperature, sampling.top_p, sampling.n) == (0.6, 0.95, 16)
    assert resolved.gates.primary is not None and resolved.gates.primary.metric == "aime24/pass@1"
    assert [g.metric for g in resolved.gates.regression] == [
        "aime25/pass@1", "minerva_math500/pass@1", "gsm8k/exact_match/flexible-extract",
        "mmlu_pro/exact_match/custom-extract", "ifeval/prompt_level_strict_acc"]
    assert [g.metric for g in resolved.gates.diagnostics][:2] == ["aime24/maj@16", "aime24/pass@16"]
    assert resolved.gates.diagnostics[2].max_relative_increase == 0.30


def test_base_contract_is_valid(project: Path) -> None:
    resolved = load_contract(_write(project, "c.yaml", BASE))
    assert resolved.tasks[1].visibility == "nightly"
    assert resolved.gates.alpha == 0.05


CASES: list[tuple[str, str, str, str]] = [
    ("yaml_syntax", BASE.replace("name: t", "name: [t"), "c.yaml:3:9",
     "YAML syntax error: expected ',' or ']', but got ':'"),
    ("unknown_key", BASE.replace("name: t", "name: t\ndescripton: x"), "c.yaml:3:1",
     "descripton: unknown key 'descripton'\n  fix: did you mean 'description'?"),
    ("unknown_nested_key", BASE.replace("min_delta: 0.02", "min_delta: 0.02, requre: lower_bound"), "c.yaml:9:74",
     "gates.primary.requre: unknown key 'requre'\n  fix: did you mean 'require'?"),
    ("wrong_type", BASE.replace("min_delta: 0.02", "min_delta: lots"), "c.yaml:9:68",
     "gates.primary.min_delta: Input should be a valid number, unable to parse string as a number; got 'lots'\n"
     "  fix: write a number, e.g. 0.02"),
    ("missing_required", BASE.replace("name: t\n", ""), "c.yaml:1:1",
     "missing required field 'name'\n  fix: add 'name:' here"),
    ("threshold_out_of_range", BASE.replace("max_drop: 0.01", "max_drop: 5"), "c.yaml:11:58",
     "gates.regression[0].max_drop: max_drop=5.0 is out of range: prompt_level_strict_acc is a fraction in [0, 1]"
     "\n  fix: did you mean 0.05?"),
    ("metric_task_not_in_suite", BASE.replace("ifeval/prompt", "ifevl/prompt"), "c.yaml:11:16",
     "gates.regression[0].metric: metric 'ifevl/prompt_level_strict_acc' names task 'ifevl', which is in no suite"
     "\n  fix: did you mean 'ifeval/prompt_level_strict_acc'?"),
    ("misspelled_metric", BASE.replace("prompt_level_strict_acc", "prompt_level_strct_acc"), "c.yaml:11:16",
     "gates.regression[0].metric: task 'ifeval' has no metric 'prompt_level_strct_acc'"
     "\n  fix: did you mean 'ifeval/prompt_level_strict_acc'?"),
    ("ambiguous_filter", BASE.replace("gsm8k/exact_match/flexible-extract", "gsm8k/exact_match"), "c.yaml:9:21",
     "gates.primary.metric: 'gsm8k/exact_match' is ambiguous: gsm8k reports exact_match under filters "
     "strict-match, flexible-extract\n  fix: write gsm8k/exact_match/flexible-extract"),
    ("dangling_reference", BASE.replace("suite.yaml", "suites/nope.yaml"), "c.yaml:7:10",
     "suites[0]: suite file 'suites/nope.yaml' does not exist"),
    ("nan_threshold", BASE.replace("min_delta: 0.02", "min_delta: nan"), "c.yaml:9:68",
     "gates.primary.min_delta: Input should be a finite number\n  fix: write a finite number"),
    ("inf_hard_limit", BASE.replace("regression:\n", "hard:\n    - {metric: gsm8k/response_length_mean, max: .inf}\n"
                                    "  regression:\n"), "c.yaml:11:49",
     "gates.hard[0].max: Input should be a finite number"),
    ("bad_visibility", BASE.replace("nightly", "nighty"), "c.yaml:6:29",
     "splits.test_public.visibility: Input should be 'iteration', 'nightly' or 'release_gate_only'; got 'nighty'"),
    ("duplicate_key", BASE.replace("name: t", "name: t\nname: u"), "c.yaml:3:1",
     "name: duplicate key 'name' (first at line 2)"),
    ("empty_file", "", "c.yaml:1:1", "file is empty"),
    ("not_a_mapping", "- a\n- b\n", "c.yaml:1:1", "top level is a list, not a mapping"),
    ("binary_file", "", "c.yaml:1:4", "is a binary file, not YAML (NUL byte)"),
    ("no_gates", BASE.split("gates:")[0] + "gates: {alpha: 0.05}\n", "c.yaml:8:8", "gates: the contract has no gates"),
    ("negative_min_delta", BASE.replace("min_delta: 0.02", "min_delta: -0.02"), "c.yaml:9:68",
     "gates.primary.min_delta: min_delta is the smallest improvement that counts, so it cannot be negative (-0.02 "
     "would count a drop as an improvement)\n  fix: write min_delta: 0 or more; to tolerate a drop of up to "
     "0.02, use a regression gate: regression: [{metric: gsm8k/exact_match/flexible-extract, max_drop: 0.02}]"),
    ("negative_max_drop", BASE.replace("max_drop: 0.01", "max_drop: -0.01"), "c.yaml:11:58",
     "gates.regression[0].max_drop: max_drop is the largest tolerated drop, so it cannot be negative\n  fix: write "
     "max_drop: 0 or more; to require an improvement of at least 0.01, make the metric the primary gate's "
     "min_delta"),
    ("negative_primary_max_drop", BASE.replace("min_delta: 0.02", "min_delta: 0.02, max_drop: -0.01"),
     "c.yaml:9:84", "fix: write max_drop: 0 or more; to require an improvement of at least 0.01, set min_delta: 0.01"),
    ("null_key", BASE.replace("gates:\n", "gates:\n  null: {metric: x}\n"), "c.yaml:9:3",
     "gates.null: the key 'null' reads as YAML's null, not a name\n  fix: write the key's name, or quote it "
     "('null':) if you mean the word"),
    ("tilde_key", BASE.replace("name: t\n", "name: t\n~: 3\n"), "c.yaml:3:1",
     "~: the key '~' reads as YAML's null, not a name"),
    ("boolean_key", BASE.replace("gates:\n", "gates:\n  on: 1\n"), "c.yaml:9:3",
     "gates.on: the key 'on' reads as YAML's boolean true, not a name\n  fix: write the key's name, or quote it "
     "('on':) if you mean the word"),
    ("number_key", BASE.replace("gates:\n", "gates:\n  1: 1\n"), "c.yaml:9:3",
     "gates.1: the key '1' reads as a number, not a name"),
    ("inline_suite_wrong_type", BASE.replace("suites: [suite.yaml]", "suites:\n  - {schema_version: 1, name: s, "
                                             "tasks: [{task: gsm8k, split: test_public, limit: lots}]}"), "c.yaml:8:83",
     "suites[0].tasks[0].limit: Input should be a valid integer, unable to parse string as an integer; got 'lots'\n"
     "  fix: write a whole number"),
    ("inline_suite_typo", BASE.replace("suites: [suite.yaml]", "suites:\n  - {schema_version: 1, name: s, taks: []}"),
     "c.yaml:8:34", "suites[0].taks: unknown key 'taks' (and 1 more error(s))\n  fix: did you mean 'tasks'?"),
    ("hard_gate_without_bound", BASE.replace("regression:\n", "hard:\n    - {metric: gsm8k/response_length_mean}\n"
                                             "  regression:\n"), "c.yaml:11:7",
     "gates.hard[0]: a hard gate needs 'max' or 'min'\n  fix: add max: X (the candidate's value must be at most X) "
     "or min: X (at least X), in the metric's units"),
    ("diagnostic_without_bound", BASE.replace("regression:\n", "diagnostics:\n    - {metric: "
                                              "gsm8k/response_length_mean}\n  regression:\n"), "c.yaml:11:7",
     "fix: add max_relative_increase: 0.3 (at most 30 % above the baseline), max_relative_decrease, max or min"),
    ("newer_schema_version", BASE.replace("schema_version: 1", "schema_version: 2"), "c.yaml:1:17",
     "schema_version: this rlgate reads schema_version 1, not 2\n  fix: write schema_version: 1, or use a newer "
     "rlgate if the file was written for one"),
    ("gate_not_a_mapping", BASE.replace("primary: {metric: gsm8k/exact_match/flexible-extract, min_delta: 0.02}",
                                        "primary: gsm8k/exact_match/flexible-extract"), "c.yaml:9:12",
     "gates.primary: expected a mapping of keys; got 'gsm8k/exact_match/flexible-extract'\n  fix: write a mapping "
     "with metric, e.g. {metric: ...}"),
    ("empty_name", BASE.replace("name: t", 'name: ""'), "c.yaml:2:7",
     "name: String should have at least 1 character; got ''\n  fix: write a name (it labels reports, history and "
     "run manifests)"),
    ("release_on_nodata", BASE.replace("gates:\n", "gates:\n  decision: {nodata: release}\n"), "c.yaml:9:13",
     "gates.decision: decision.nodata cannot be 'release': missing or broken data never releases"),
]


@pytest.mark.parametrize(("name", "text", "where", "expected"), CASES, ids=[c[0] for c in CASES])
def test_invalid_contracts(project: Path, name: str, text: str, where: str, expected: str) -> None:
    path = _write(project, "c.yaml", b"key\x00\x01\x02" if name == "binary_file" else text)
    with pytest.raises(InputError) as info:
        load_contract(path)
    message = str(info.value)
    assert message.startswith(f"{project / where}: ") or message.startswith(f"{project}/{where}: "), message
    assert expected in message, message


def test_unknown_split_points_into_suite_file(project: Path) -> None:
    _write(project, "suite2.yaml", SUITE.replace("split: test_public}", "split: tst_public}", 1))
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", BASE.replace("suite.yaml", "suite2.yaml")))
    assert str(info.value) == (f"{project}/suite2.yaml:4:29: tasks[0].split: unknown split 'tst_public'\n"
                               "  fix: did you mean 'test_public'?")


def test_reference_cycle_between_policies(project: Path) -> None:
    _write(project, "p1.yaml", "schema_version: 1\nname: p1\nuse: p2.yaml\n")
    _write(project, "p2.yaml", "schema_version: 1\nname: p2\nuse: p1.yaml\n")
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", BASE.replace("gates:\n", "gates:\n  use: p1.yaml\n")))
    assert str(info.value) == (f"{project}/p2.yaml:3:6: use: reference cycle between files: "
                               "c.yaml -> p1.yaml -> p2.yaml -> p1.yaml\n  fix: remove one of the 'use:' references")


def test_policy_inheritance_and_override(project: Path) -> None:
    _write(project, "p.yaml", "schema_version: 1\nname: p\nalpha: 0.01\nbootstrap_resamples: 2000\n"
           "decision: {primary_fail: block}\nhard:\n  - {metric: gsm8k/answer_parse_failure_rate, max: 0.1}\n")
    text = BASE.replace("gates:\n", "gates:\n  use: p.yaml\n  alpha: 0.02\n")
    resolved = load_contract(_write(project, "c.yaml", text))
    assert resolved.gates.alpha == 0.02
    assert resolved.gates.bootstrap_resamples == 2000
    assert resolved.gates.decision.primary_fail == "block"
    assert resolved.gates.decision.regression_fail == "block"
    assert [g.metric for g in resolved.gates.hard] == ["gsm8k/answer_parse_failure_rate"]
    assert resolved.policy_files == [project / "p.yaml"]


def test_untrusted_function_task_is_refused_and_trusted_is_allowed(project: Path) -> None:
    tasks = project / "mytasks"
    tasks.mkdir()
    _write(tasks, "t.yaml", "task: mine\nprocess_results: !function utils.score\n")
    suite = SUITE + "  - {task: mine, split: test_public, path: mytasks}\n"
    _write(project, "suite.yaml", suite)
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", BASE))
    assert "uses !function (runs Python) and is not trusted" in str(info.value)
    assert "trusted_task_paths" in str(info.value)
    resolved = load_contract(_write(project, "c.yaml", BASE + "trusted_task_paths: [mytasks]\n"))
    assert resolved.task("mine") is not None
    assert resolved.task("mine").trusted  # type: ignore[union-attr]


def test_local_data_files_resolve_relative_to_suite(project: Path) -> None:
    _write(project, "gsm.jsonl", '{"question": "1+1?", "answer": "#### 2"}\n')
    _write(project, "suite.yaml", SUITE.replace("{task: gsm8k, split: test_public}",
                                                "{task: gsm8k, split: test_public, data_files: {test: gsm.jsonl}}"))
    resolved = load_contract(_write(project, "c.yaml", BASE))
    assert resolved.task("gsm8k").data_files == {"test": str(project / "gsm.jsonl")}  # type: ignore[union-attr]


def test_contract_never_executes_yaml_tags(project: Path) -> None:
    text = BASE.replace("name: t", "name: !!python/object/apply:os.system ['echo pwned']")
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", text))
    assert "YAML syntax error" in str(info.value)


def test_content_hash_covers_suites_and_gate_policies(tmp_path: Path) -> None:
    """contract_hash changes when a suite or gate policy changes, not only the contract file."""
    import yaml as _yaml

    (tmp_path / "suite.yaml").write_text(_yaml.safe_dump({"schema_version": 1, "name": "s", "tasks": [
        {"task": "gsm8k", "split": "public"}]}))
    (tmp_path / "policy.yaml").write_text(_yaml.safe_dump({"schema_version": 1, "name": "p", "alpha": 0.05}))
    (tmp_path / "c.yaml").write_text(_yaml.safe_dump({
        "schema_version": 1, "name": "h", "baseline": {"checkpoint": "b"},
        "splits": {"public": {"visibility": "nightly"}}, "suites": ["suite.yaml"],
        "gates": {"use": "policy.yaml", "primary": {"metric": "gsm8k/exact_match/flexible-extract"}}}))
    first = load_contract(tmp_path / "c.yaml")
    assert first.referenced_files() == [tmp_path / "c.yaml", tmp_path / "suite.yaml", tmp_path / "policy.yaml"]
    before = first.content_hash()
    assert load_contract(tmp_path / "c.yaml").content_hash() == before
    (tmp_path / "suite.yaml").write_text((tmp_path / "suite.yaml").read_text().replace("name: s", "name: s2"))
    after_suite = load_contract(tmp_path / "c.yaml").content_hash()
    assert after_suite != before
    (tmp_path / "policy.yaml").write_text((tmp_path / "policy.yaml").read_text().replace("0.05", "0.01"))
    assert load_contract(tmp_path / "c.yaml").content_hash() not in (before, after_suite)


def test_content_hash_covers_the_monitor_policy_local_task_code_and_data_files(project: Path) -> None:
    """contract_hash changes with every file the decision depends on: the monitor's policy file, a local lm-eval
    task folder (its YAML and its Python helper), an inspect task file and a local data file."""
    tasks = project / "mytasks"
    tasks.mkdir()
    _write(tasks, "t.yaml", "task: mine\nprocess_results: !function utils.score\n")
    _write(tasks, "utils.py", "def score(doc, results):\n    return {'acc': 1.0}\n")
    (tasks / "__pycache__").mkdir()
    _write(tasks / "__pycache__", "utils.cpython-311.pyc", b"\0")
    _write(project, "agent.py", "def toolbox():\n    ...\n")
    _write(project, "gsm.jsonl", '{"question": "1+1?", "answer": "#### 2"}\n')
    _write(project, "mon.yaml", "schema_version: 1\nwindow: 5\n")
    _write(project, "suite.yaml", SUITE.replace("{task: gsm8k, split: test_public}",
                                                "{task: gsm8k, split: test_public, data_files: {test: gsm.jsonl}}")
           + "  - {task: mine, split: test_public, path: mytasks}\n"
           + "  - {task: agent.py@toolbox, split: test_public, harness: inspect}\n")
    contract = _write(project, "c.yaml",
                      BASE + "trusted_task_paths: [mytasks, agent.py]\nmonitor: {policy: mon.yaml}\n")
    resolved = load_contract(contract)
    assert resolved.referenced_files() == [contract, project / "suite.yaml", project / "mon.yaml",
                                           project / "gsm.jsonl", tasks, project / "agent.py"]
    hashes = [resolved.content_hash()]
    assert load_contract(contract).content_hash() == hashes[0]  # stable, and a cache is not a definition
    _write(tasks / "__pycache__", "utils.cpython-311.pyc", b"\1")
    assert load_contract(contract).content_hash() == hashes[0]
    for folder, name, text in ((project, "mon.yaml", "schema_version: 1\nwindow: 9\n"),
                               (tasks, "utils.py", "def score(doc, results):\n    return {'acc': 0.0}\n"),
                               (tasks, "t.yaml", "task: mine\nprocess_results: !function utils.score2\n"),
                               (tasks, "extra.py", "X = 1\n"),
                               (project, "agent.py", "def toolbox():\n    return None\n"),
                               (project, "gsm.jsonl", '{"question": "1+2?", "answer": "#### 3"}\n')):
        _write(folder, name, text)
        hashes.append(load_contract(contract).content_hash())
        assert hashes[-1] not in hashes[:-1], f"changing {name} left contract_hash as it was"


def test_gates_use_pointing_at_a_contract_or_suite(project: Path) -> None:
    _write(project, "other.yaml", BASE)
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", BASE.replace("gates:\n", "gates:\n  use: other.yaml\n")))
    assert str(info.value) == (
        f"{project}/c.yaml:9:8: gates.use: 'other.yaml' is a contract (it has baseline, splits, suites, gates), "
        "not a gate policy\n  fix: gates.use takes a gate policy file such as gates/release_default.yaml "
        "(schema_version, name and gate settings: alpha, decision, primary, regression, ...); to share another "
        "contract's gates, move them into such a file and point both contracts' gates.use at it")
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", BASE.replace("gates:\n", "gates:\n  use: suite.yaml\n")))
    assert str(info.value).startswith(f"{project}/c.yaml:9:8: gates.use: 'suite.yaml' is a suite (it has tasks), "
                                      "not a gate policy\n  fix: gates.use takes a gate policy file")


def test_suite_entry_pointing_at_a_contract_or_policy(project: Path) -> None:
    _write(project, "other.yaml", BASE)
    _write(project, "p.yaml", "schema_version: 1\nname: p\nalpha: 0.01\n")
    for target, kind in (("other.yaml", "a contract (it has baseline, splits, suites, gates)"),
                         ("p.yaml", "a gate policy (it has alpha)")):
        with pytest.raises(InputError) as info:
            load_contract(_write(project, "c.yaml", BASE.replace("suites: [suite.yaml]", f"suites: [{target}]")))
        assert str(info.value) == (
            f"{project}/c.yaml:7:10: suites[0]: '{target}' is {kind}, not a suite\n  fix: list suite files here "
            "(schema_version, name, tasks) such as suites/llm_core_regression.yaml, or write the suite inline")


def test_validating_a_suite_or_policy_instead_of_the_contract(project: Path) -> None:
    with pytest.raises(InputError) as info:
        load_contract(project / "suite.yaml")
    assert str(info.value) == (
        f"{project}/suite.yaml:1:1: this file is a suite (it has tasks), not a contract\n  fix: pass the contract "
        "that lists it under suites: (a contract has baseline, splits, suites, gates; `rlgate init` writes one)")


@pytest.mark.parametrize(("text", "where", "what"), [
    (BASE.replace("suites: [suite.yaml]", 'suites: [""]'), "7:10: suites[0]: suite file ''", "suite file"),
    (BASE.replace("gates:\n", "gates:\n  use: .\n"), "9:8: gates.use: gate policy '.'", "gate policy"),
])
def test_a_folder_named_as_a_yaml_file_is_located_in_the_contract(project: Path, text: str, where: str,
                                                                   what: str) -> None:
    with pytest.raises(InputError) as info:
        load_contract(_write(project, "c.yaml", text))
    assert str(info.value).startswith(f"{project}/c.yaml:{where} is a folder ({project}), not a YAML file"), info.value
    assert info.value.fix == f"name the {what}'s .yaml file"
