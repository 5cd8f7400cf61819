"""Loading only the lm-eval tasks a suite names, pointed at local copies of their data."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.vocabulary import load_contract

ContractFactory = Callable[..., Path]

pytest.importorskip("lm_eval")

from rlgate.harness.lmeval.tasks import load_suite  # noqa: E402  (needs lm_eval, checked just above)


def load(contract: Path, limit: int | None = None):
    resolved = load_contract(contract)
    return load_suite(resolved.tasks, resolved.contract.protocol, limit=limit)


def test_real_gsm8k_mmlu_pro_ifeval_from_local_files(write_contract: ContractFactory, shared_data: Path) -> None:
    contract = write_contract([
        {"task": "gsm8k", "split": "test_public",
         "data_files": {"test": str(shared_data / "gsm8k/test.jsonl"),
                        "train": str(shared_data / "gsm8k/train.jsonl.gz")}},
        {"task": "mmlu_pro", "split": "test_public", "num_fewshot": 0,
         "data_files": str(shared_data / "mmlu_pro/test.jsonl.gz")},
        {"task": "ifeval", "split": "test_public", "data_files": str(shared_data / "ifeval/input_data.jsonl")},
    ], protocol={"sampling": {"max_tokens": 33}})
    suite = load(contract, limit=3)
    assert len(suite.manager.task_index) < 60  # only the three task folders were indexed, not all of lm-eval
    assert len(suite.leaves["gsm8k"].eval_docs) == 1319
    assert sum(len(suite.leaves[t].eval_docs) for t in suite.groups["mmlu_pro"]) == 12032
    assert len(suite.leaves["ifeval"].eval_docs) == 541
    assert suite.leaves["gsm8k"].config.num_fewshot == 5 and suite.leaves["mmlu_pro_law"].config.num_fewshot == 0
    kwargs = suite.leaves["gsm8k"].config.generation_kwargs
    assert kwargs["max_gen_toks"] == 33 and kwargs["do_sample"] is False and "Question:" in kwargs["until"]
    assert suite.samples["gsm8k"] == [0, 1, 2] and suite.samples["mmlu_pro_math"] == [0, 1, 2]
    assert suite.suite_task["mmlu_pro_math"] == "mmlu_pro"
    assert "gsm8k/test.jsonl" in suite.dataset["gsm8k"] and suite.version["gsm8k"] == "3.0"


def test_few_shot_needs_its_split(write_contract: ContractFactory, shared_data: Path) -> None:
    gsm = write_contract([{"task": "gsm8k", "split": "test_public",
                           "data_files": str(shared_data / "gsm8k/test.jsonl")}])
    with pytest.raises(InputError, match="split 'train'") as err:
        load(gsm)
    assert "num_fewshot: 0" in (err.value.fix or "") and "train" in (err.value.fix or "")
    mmlu = write_contract([{"task": "mmlu_pro", "split": "test_public",
                            "data_files": str(shared_data / "mmlu_pro/test.jsonl.gz")}])
    with pytest.raises(InputError, match="'validation'"):
        load(mmlu)


def test_task_hash_follows_the_data_and_the_protocol(write_contract: ContractFactory, tmp_path: Path,
                                                     shared_data: Path) -> None:
    lines = (shared_data / "ifeval/input_data.jsonl").read_text().splitlines()
    small = tmp_path / "data" / "a.jsonl"
    small.parent.mkdir()
    small.write_text("\n".join(lines[:20]) + "\n")
    entry = [{"task": "ifeval", "split": "test_public", "data_files": str(small)}]
    first = load(write_contract(entry, folder=tmp_path / "c1")).task_hash["ifeval"]
    assert load(write_contract(entry, folder=tmp_path / "c2")).task_hash["ifeval"] == first
    changed = load(write_contract(entry, protocol={"sampling": {"max_tokens": 99}}, folder=tmp_path / "c3"))
    assert changed.task_hash["ifeval"] != first
    small.write_text("\n".join(lines[:19]) + "\n")
    assert load(write_contract(entry, folder=tmp_path / "c4")).task_hash["ifeval"] != first


def test_unknown_task_suggests_a_close_name(write_contract: ContractFactory, tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "q", "answer": "#### 1"}\n')
    contract = write_contract([{"task": "gsm8kk", "split": "test_public", "num_fewshot": 0, "data_files": str(data)}],
                              gates={"primary": {"metric": "gsm8kk/exact_match", "min_delta": 0.0}})
    with pytest.raises(InputError, match="no task or group named 'gsm8kk'") as err:
        load(contract)
    assert "gsm8k" in (err.value.fix or "")


def test_gzip_and_plain_local_files_read_the_same(write_contract: ContractFactory, tmp_path: Path,
                                                  shared_data: Path) -> None:
    rows = (shared_data / "gsm8k/test.jsonl").read_text().splitlines()[:7]
    plain, packed = tmp_path / "t.jsonl", tmp_path / "t.jsonl.gz"
    plain.write_text("\n".join(rows) + "\n")
    with gzip.open(packed, "wt") as handle:
        handle.write("\n".join(rows) + "\n")
    docs = []
    for path in (plain, packed):
        entry = {"task": "gsm8k", "split": "test_public", "num_fewshot": 0, "data_files": str(path)}
        contract = write_contract([entry],
                                  folder=tmp_path / path.name.replace(".", "_"))
        docs.append(list(load(contract).leaves["gsm8k"].eval_docs))
    assert docs[0] == docs[1] and len(docs[0]) == 7
