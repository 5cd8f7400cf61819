"""`rlgate contamination CONTRACT --train FILE`: table, listed overlaps, JSON, hard-gate exit codes."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from typer.testing import CliRunner

from rlgate.cli.app import app

runner = CliRunner()

CONTRACT = """\
schema_version: 1
name: contamination_case
baseline: {{checkpoint: base-model}}
splits:
  public: {{visibility: nightly}}
  private: {{visibility: release_gate_only}}
suites:
  - schema_version: 1
    name: math
    tasks:
      - {{task: gsm8k, split: public, data_files: {{test: {public}}}}}
      - {{task: gsm8k_private, split: private, data_files: {private}}}
gates:
  primary: {{metric: gsm8k/exact_match/flexible-extract}}
contamination:
  train_files: [{train}]
  max_rate: {max_rate}
  min_overlap: {min_overlap}
"""


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _setup(tmp_path: Path, test_rows: list[dict[str, str]], private_rows: list[dict[str, str]],
           train: Path, max_rate: float = 0.0, min_overlap: float = 0.0) -> Path:
    public = _write(tmp_path / "test.jsonl", test_rows)
    private = _write(tmp_path / "private.jsonl", private_rows)
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT.format(public=public, private=private, train=train, max_rate=max_rate,
                                        min_overlap=min_overlap), encoding="utf-8")
    return contract


def _question(rng: random.Random) -> dict[str, str]:
    words = [f"word{rng.randrange(5000)}" for _ in range(25)]
    return {"question": " ".join(words), "answer": "#### 1"}


def test_planted_documents_fail_the_gate_and_private_text_stays_hidden(tmp_path: Path) -> None:
    rng = random.Random(1)
    tests = [_question(rng) for _ in range(40)]
    secrets = [_question(rng) for _ in range(10)]
    rows = [_question(rng) for _ in range(500)]
    rows[100] = {"text": "copied: " + tests[3]["question"]}
    rows[200] = {"text": secrets[5]["question"] + " (from the vault)"}
    train = _write(tmp_path / "train.jsonl", rows)
    contract = _setup(tmp_path, tests, secrets, train)
    result = runner.invoke(app, ["contamination", str(contract), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "gsm8k                         40       40             1    2.50%" in result.output
    assert "gsm8k_private                 10       10             1   10.00%" in result.output
    assert f"gsm8k doc 3: 13/13 n-grams (100%), first in {train}:101" in result.output
    assert "gate gsm8k contamination: fail" in result.output
    assert secrets[5]["question"].split()[2] not in result.output
    stored = json.loads((tmp_path / "out" / "contamination.json").read_text(encoding="utf-8"))
    assert stored["tasks"][1]["documents"][0]["ngram"] is None and stored["tasks"][0]["documents"][0]["ngram"]
    looser = _setup(tmp_path, tests, secrets, train, max_rate=0.2)
    assert runner.invoke(app, ["contamination", str(looser)]).exit_code == 0


def test_train_option_overrides_the_contract_and_bad_paths_exit_2(tmp_path: Path) -> None:
    rng = random.Random(2)
    tests = [_question(rng) for _ in range(5)]
    clean = _write(tmp_path / "clean.jsonl", [_question(rng) for _ in range(50)])
    contract = _setup(tmp_path, tests, tests[:1], tmp_path / "missing.jsonl")
    result = runner.invoke(app, ["contamination", str(contract)])
    assert result.exit_code == 2 and "training file does not exist" in result.output
    result = runner.invoke(app, ["contamination", str(contract), "--train", str(clean)])
    assert result.exit_code == 0, result.output
    assert "0.00%" in result.output


def test_gsm8k_planted_versus_clean_through_the_cli(shared_data: Path, tmp_path: Path) -> None:
    test_rows = [json.loads(line) for line in (shared_data / "gsm8k" / "test.jsonl").open(encoding="utf-8")]
    with gzip.open(shared_data / "gsm8k" / "train.jsonl.gz", "rt", encoding="utf-8") as handle:
        train_rows = [json.loads(line) for line in handle]
    clean = _write(tmp_path / "clean.jsonl", train_rows)
    planted_rows = train_rows[:3000] + [{"question": r["question"], "answer": "?"} for r in test_rows[:25]] \
        + train_rows[3000:]
    planted = _write(tmp_path / "planted.jsonl", planted_rows)
    contract = _setup(tmp_path, test_rows, test_rows[:2], clean, max_rate=0.0, min_overlap=0.6)
    result = runner.invoke(app, ["contamination", str(contract), "--train", str(clean)])
    assert result.exit_code == 0, result.output
    assert "gsm8k                       1319     1319             0    0.00%" in result.output
    result = runner.invoke(app, ["contamination", str(contract), "--train", str(planted)])
    assert result.exit_code == 1
    assert "gsm8k                       1319     1319            25    1.90%" in result.output


def test_out_of_range_cli_settings_exit_2_instead_of_passing_the_gate(tmp_path: Path) -> None:
    """--min-overlap nan or 5 would count no document as contaminated: the max_rate gate would pass."""
    rng = random.Random(3)
    tests = [_question(rng) for _ in range(20)]
    rows = [_question(rng) for _ in range(100)]
    rows[10] = {"text": tests[0]["question"]}
    contract = _setup(tmp_path, tests, tests[:1], _write(tmp_path / "train.jsonl", rows))
    assert runner.invoke(app, ["contamination", str(contract)]).exit_code == 1
    for option, value in [("--min-overlap", "nan"), ("--min-overlap", "5"), ("--min-overlap", "-1"),
                          ("--ngram", "0"), ("--ngram", "100")]:
        result = runner.invoke(app, ["contamination", str(contract), option, value])
        assert result.exit_code == 2, (option, value, result.output)
        assert f"{option}: " in result.output and "fix:" in result.output and "Traceback" not in result.output


def test_an_out_that_is_a_file_exits_2_before_the_index_is_built(tmp_path: Path) -> None:
    rng = random.Random(4)
    tests = [_question(rng) for _ in range(5)]
    contract = _setup(tmp_path, tests, tests[:1], _write(tmp_path / "train.jsonl", [_question(rng) for _ in range(20)]))
    taken = tmp_path / "taken"
    taken.write_text("keep me", encoding="utf-8")
    result = runner.invoke(app, ["contamination", str(contract), "--out", str(taken)])
    assert result.exit_code == 2, result.output
    assert f"{taken}: --out: is a file" in result.output and "n-gram overlap" not in result.output
    assert taken.read_text(encoding="utf-8") == "keep me"


def test_a_nodata_gate_is_printed_once_as_nodata(tmp_path: Path) -> None:
    rng = random.Random(3)
    tests = [_question(rng) for _ in range(5)]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["contamination", str(_setup(tmp_path, tests, tests[:1], empty))])
    lines = [line for line in result.output.splitlines() if line.startswith("gate ")]
    assert lines and all(": nodata: " in line and "nodata: nodata" not in line for line in lines), result.output
    assert result.exit_code != 0
