"""`rlgate gate` end to end against golden outputs: the fast reading path must not change a decision or a report.

The golden files were written by the reader that built one pydantic `SampleRecord` per sample line with the
standard `json` module (before issue 22's columnar msgspec reader). Every file `gate` writes (decision.json,
report.html, report.md, junit.xml, summary.md) must stay byte-identical except for timestamps, on a small real
pair (Llama-3.1-8B base vs Instruct, MMLU-Pro, 14 subtasks) and on a generated GSM8K pair carrying the faults
issue 15 handles (NaN / string scores, identical duplicate lines). Regenerate with RLGATE_UPDATE_GOLDEN=1 only
when a change of output is intended.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from fixtures.faults import append_first_lines, copy_folder, set_score
from fixtures.lmeval_builders import build_mmlu_pro_llama_folder, build_synthetic_folder
from typer.testing import CliRunner

from rlgate.cli.app import app

pytest.importorskip("lm_eval")
REPO = Path(__file__).resolve().parents[2]
CONTRACTS = REPO / "tests" / "fixtures" / "contracts"
VENDORED = Path(__file__).resolve().parents[1] / "fixtures" / "real"
GOLDEN = Path(__file__).parent / "golden_gate"
OUTPUTS = ("decision.json", "summary.md", "report.md", "junit.xml", "report.html")
# ISO timestamps (decision time, report generation time) and durations are the only things allowed to differ.
_TIMES = [re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)?"),
          re.compile(r'(time(stamp)?=)"[0-9.]+"'), re.compile(r'("(elapsed|duration)_s": )[0-9.e-]+')]


def _normalised(text: str) -> str:
    text = _TIMES[0].sub("<time>", text)
    text = _TIMES[1].sub(r'\1"<t>"', text)
    return _TIMES[2].sub(r"\1<t>", text)


def _gate(contract: Path, cand: Path, base: Path, out: Path, root: Path) -> dict[str, str]:
    result = CliRunner().invoke(app, ["gate", str(contract), "--candidate", str(cand), "--baseline", str(base),
                                      "--out", str(out)])
    assert result.exit_code in (0, 1, 3), result.output
    texts = {name: (out / name).read_text(encoding="utf-8") for name in OUTPUTS if (out / name).exists()}
    assert set(texts) >= {"decision.json", "summary.md", "report.html"}, sorted(texts)
    # the temporary folder's path is in the reports (sources, links): make it stable
    for path, label in ((root, "<tmp>"), (REPO, "<repo>")):  # paths of the checkout and the temporary folder
        escaped = str(path).replace("_", "\\_")  # Markdown escapes the underscores of a path
        texts = {name: text.replace(str(path), label).replace(escaped, label) for name, text in texts.items()}
        # the HTML report breaks long paths with <wbr> after separators: match the path with those in it too
        wrapped = re.compile("(?:<wbr>)?".join(re.escape(char) for char in str(path)))
        texts = {name: wrapped.sub(label, text) for name, text in texts.items()}
    return {name: _normalised(text) for name, text in texts.items()}


def _check(case: str, texts: dict[str, str]) -> None:
    folder = GOLDEN / case
    if os.environ.get("RLGATE_UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (folder / name).write_text(text, encoding="utf-8")
    assert sorted(p.name for p in folder.iterdir()) == sorted(texts), "outputs written differ from the golden set"
    for name, text in texts.items():
        golden = (folder / name).read_text(encoding="utf-8")
        assert text == golden, f"{case}/{name} changed; if intended, regenerate with RLGATE_UPDATE_GOLDEN=1"


def _quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("RLGATE_HISTORY", str(tmp_path / "history.sqlite"))


def test_real_mmlu_pro_pair_matches_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _quiet_env(tmp_path, monkeypatch)
    base = build_mmlu_pro_llama_folder(VENDORED, "base", tmp_path / "base", limit=12)
    cand = build_mmlu_pro_llama_folder(VENDORED, "instruct", tmp_path / "cand", limit=12)
    # 12 documents per subtask is a complete run only where the contract's suite asks for 12 (issue 31: coverage
    # is judged against what the contract expects, never against the run's own --limit)
    contract = tmp_path / "contract"
    contract.mkdir()
    shutil.copy(CONTRACTS / "llama_mmlu_pro.yaml", contract / "llama_mmlu_pro.yaml")
    suite = yaml.safe_load((CONTRACTS / "mmlu_pro_suite.yaml").read_text())
    suite["tasks"][0]["limit"] = 12
    (contract / "mmlu_pro_suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    _check("mmlu_pro", _gate(contract / "llama_mmlu_pro.yaml", cand, base, tmp_path / "out", tmp_path))


def test_faulty_gsm8k_pair_matches_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _quiet_env(tmp_path, monkeypatch)
    base = build_synthetic_folder(tmp_path / "b0", "org/base", {"gsm8k": [i % 2 == 0 for i in range(150)]})
    cand0 = build_synthetic_folder(tmp_path / "c0", "org/cand", {"gsm8k": [i % 5 != 0 for i in range(150)]})
    cand = copy_folder(cand0, tmp_path / "cand")
    set_score(cand, [2, 9], math.nan)
    set_score(cand, [17], "1", filters=["strict-match"])
    append_first_lines(cand, 4)  # identical repeats: collapsed with a warning
    shutil.copy(CONTRACTS / "gsm8k_suite.yaml", tmp_path / "suite.yaml")
    gates = {"primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.02},
             "regression": [{"metric": "gsm8k/exact_match/strict-match", "max_drop": 0.05}], "allow_corrupt": 3}
    contract = {"schema_version": 1, "name": "golden", "baseline": {"checkpoint": "org/base"},
                "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"], "gates": gates}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(contract))
    texts = _gate(tmp_path / "c.yaml", cand, base, tmp_path / "out", tmp_path)
    decision = json.loads(texts["decision.json"])
    assert [(c["doc_id"], c["filter"]) for c in decision["corrupt"]][:3] == [
        (2, "flexible-extract"), (2, "strict-match"), (9, "flexible-extract")]
    _check("gsm8k_faults", texts)
