"""Issue 31 on real lm-eval folders: a partial run described consistently by itself never releases.

Abel-7B / 13B GSM8K generations and Llama-3.1-8B MMLU-Pro predictions (../shared/data), scored by lm-eval's own
code (tests/fixtures/lmeval_builders.py). Each input below released before coverage was judged against the
contract; each must now end in `block` (a `nodata` gate) or, where the contract opts in, `research_only`.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixtures.faults import copy_folder, samples_file
from fixtures.lmeval_builders import cached_folder

from rlgate.engine import decide
from rlgate.harness.lmeval.doc_list import doc_hash, document_list
from rlgate.harness.lmeval.folder import read_lmeval_folder
from rlgate.harness.vocabulary import load_contract
from rlgate.results.expected import cached_documents, write_list
from rlgate.results.models import RunResult

pytest.importorskip("lm_eval")
CONTRACTS = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
GSM8K_DOCS = 1319


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _results(folder: Path) -> Path:
    return next(folder.glob("results_*.json"))


def _claim(folder: Path, task: str, count: int, *, original: int | None = None) -> None:
    """Make the results file describe `count` documents of `task` (effective, sample_len and, where given,
    original): the run's own account of itself, consistent with a cut samples file."""
    path = _results(folder)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["n-samples"][task]["effective"] = count
    if original is not None:
        doc["n-samples"][task]["original"] = original
    doc["results"][task]["sample_len"] = count
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def abel(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    return {"7b": cached_folder(root, "gsm8k_abel", shared_data, "7b"),
            "13b": cached_folder(root, "gsm8k_abel", shared_data, "13b"),
            "regressed": cached_folder(root, "gsm8k_abel", shared_data, "13b", broken=0.2),
            "13b_limit": cached_folder(root, "gsm8k_abel", shared_data, "13b", limit=1000)}


def _gate(baseline: Path | RunResult, candidate: Path | RunResult, contract: str = "abel_gsm8k.yaml", **update: Any
          ) -> Any:
    resolved = load_contract(CONTRACTS / contract)
    gates = resolved.gates.model_copy(update=update) if update else resolved.gates
    base = baseline if isinstance(baseline, RunResult) else read_lmeval_folder(baseline)
    cand = candidate if isinstance(candidate, RunResult) else read_lmeval_folder(candidate)
    return decide(gates, base, cand, seed=7, contract_name=resolved.name)


def test_the_regressed_candidate_blocks_when_complete(abel: dict[str, Path]) -> None:
    decision = _gate(abel["13b"], abel["regressed"])
    assert decision.decision == "block"
    primary = next(g for g in decision.gates if g.kind == "primary")
    assert primary.outcome == "primary_regression" and primary.n == GSM8K_DOCS


def test_an_honest_limit_1000_run_does_not_release(abel: dict[str, Path]) -> None:
    """lm_eval --limit 1000: n-samples {original 1319, effective 1000}, a consistent partial run."""
    decision = _gate(abel["7b"], abel["13b_limit"])
    assert decision.decision == "block", decision.summary
    primary = next(g for g in decision.gates if g.kind == "primary")
    assert primary.verdict == "nodata"
    assert "answered 1000 of the 1319 documents of gsm8k the contract expects" in primary.reason
    assert "319 answered by the baseline run only" in primary.reason and "e.g. gsm8k:1000" in primary.reason
    short = primary.details["shortfall"]
    assert short["run"] == "candidate" and (short["answered"], short["expected"]) == (1000, GSM8K_DOCS)
    hard = next(g for g in decision.gates if g.kind == "hard")  # candidate-only gates are judged alike
    assert hard.verdict == "nodata" and "answered 1000 of the 1319" in hard.reason
    both = _gate(abel["13b_limit"], abel["13b_limit"])  # both limited: the full split is still the contract's
    assert both.decision == "block" and "1000 of the 1319" in both.gates[0].reason
    assert "n-samples original" in both.gates[0].reason


def test_a_limit_the_suite_asks_for_is_complete(abel: dict[str, Path]) -> None:
    base = copy_folder(abel["7b"].parent, abel["7b"].parent.parent / "seven-limit").joinpath(abel["7b"].name)
    rows = _lines(samples_file(base))
    _write(samples_file(base), [r for r in rows if r["doc_id"] < 1000])
    _claim(base, "gsm8k", 1000)
    decision = _gate(base, abel["13b_limit"], task_limits={"gsm8k": 1000})
    assert all(g.verdict != "nodata" for g in decision.gates), decision.summary
    assert decision.gates[0].n == 1000


def _subset_without_losses(abel: dict[str, Path], dest: Path) -> Path:
    """The regressed candidate re-run on the documents where it did not lose to the baseline; its results file's
    counts (effective, original, sample_len) match the subset."""
    base = {r["doc_id"]: r for r in _lines(samples_file(abel["13b"])) if r["filter"] == "flexible-extract"}
    folder = copy_folder(abel["regressed"].parent, dest).joinpath(abel["regressed"].name)
    rows = _lines(samples_file(folder))
    lost = {r["doc_id"] for r in rows if r["filter"] == "flexible-extract"
            and r["exact_match"] < base[r["doc_id"]]["exact_match"]}
    kept = [r for r in rows if r["doc_id"] not in lost]
    _write(samples_file(folder), kept)
    _claim(folder, "gsm8k", GSM8K_DOCS - len(lost), original=GSM8K_DOCS - len(lost))
    assert len(lost) > 150
    return folder


def test_a_subset_that_excludes_the_losses_does_not_release(abel: dict[str, Path], tmp_path: Path) -> None:
    folder = _subset_without_losses(abel, tmp_path / "subset")
    decision = _gate(abel["13b"], folder)
    assert decision.decision == "block", decision.summary
    assert {g.verdict for g in decision.gates} == {"nodata"}
    assert "answered by the baseline run only" in decision.gates[0].reason


def test_changed_documents_count_as_not_covered_naming_the_field(abel: dict[str, Path], tmp_path: Path) -> None:
    """The lost documents' question text gains one trailing space (and their doc_hash follows)."""
    base = {r["doc_id"]: r for r in _lines(samples_file(abel["13b"])) if r["filter"] == "flexible-extract"}
    folder = copy_folder(abel["regressed"].parent, tmp_path / "changed").joinpath(abel["regressed"].name)
    rows = _lines(samples_file(folder))
    lost = {r["doc_id"] for r in rows if r["filter"] == "flexible-extract"
            and r["exact_match"] < base[r["doc_id"]]["exact_match"]}
    for row in rows:
        if row["doc_id"] in lost:
            row["doc"]["question"] += " "
            row["doc_hash"] = doc_hash(row["doc"])
    _write(samples_file(folder), rows)
    decision = _gate(abel["13b"], folder)
    assert decision.decision == "block"
    primary = next(g for g in decision.gates if g.kind == "primary")
    assert primary.verdict == "nodata" and f"{len(lost)} changed between the runs" in primary.reason
    assert "(changed: question)" in primary.reason
    assert decision.pairing[0].document_mismatch == len(lost)


def test_a_manifest_without_expected_counts_keeps_the_count_check(abel: dict[str, Path], tmp_path: Path) -> None:
    """A cut samples file (1000 of the 1319 documents its results file counts) under a run_manifest.json task
    entry that has `documents` but no `expected_documents`."""
    folder = copy_folder(abel["13b"].parent, tmp_path / "cut").joinpath(abel["13b"].name)
    _write(samples_file(folder), [r for r in _lines(samples_file(folder)) if r["doc_id"] < 1000])
    run = read_lmeval_folder(folder)
    from rlgate.results.manifest import RunManifest, TaskRun

    run.provenance.manifest = RunManifest.model_construct(tasks=[TaskRun.model_construct(
        task="gsm8k", documents=1000, expected_documents=None, not_generated=[], missing_documents=[])])
    decision = _gate(abel["7b"], run)
    assert decision.decision == "block" and decision.gates[0].verdict == "nodata"
    assert "1000 of the 1319" in decision.gates[0].reason or "answered 1000 of 1319" in decision.gates[0].reason


def test_a_cached_document_list_is_the_contract(abel: dict[str, Path], shared_data: Path, tmp_path: Path) -> None:
    """Both runs re-hashed consistently (so they pair with each other) are not the task's documents."""
    version = read_lmeval_folder(abel["13b"]).tasks["gsm8k"].protocol.version
    assert version is not None
    listed = document_list("gsm8k", version, shared_data / "gsm8k" / "test.jsonl")
    assert len(listed.doc_hashes) == GSM8K_DOCS
    truth = {r["doc_hash"] for r in _lines(samples_file(abel["13b"]))}
    assert set(listed.doc_hashes) == truth  # lm-eval's own doc_hash, from the local split
    write_list(tmp_path / "lists", listed)
    runs = [read_lmeval_folder(abel["7b"]), read_lmeval_folder(abel["13b"])]
    known = cached_documents(runs, tmp_path / "lists")
    honest = decide(load_contract(CONTRACTS / "abel_gsm8k.yaml").gates, *runs, seed=7, contract_name="x",
                    expected_documents=known)
    assert honest.decision == "release"  # a complete run is judged exactly as before
    for run in runs:
        for sample in run.tasks["gsm8k"].samples[:50]:
            sample.doc_hash = "x" + sample.doc_hash[1:]
    moved = decide(load_contract(CONTRACTS / "abel_gsm8k.yaml").gates, *runs, seed=7, contract_name="x",
                   expected_documents=known)
    assert moved.decision == "block" and "not in the task's cached document list" in moved.gates[0].reason


def test_compressed_samples_are_read_like_plain_ones(abel: dict[str, Path], tmp_path: Path) -> None:
    folder = copy_folder(abel["13b"].parent, tmp_path / "gz").joinpath(abel["13b"].name)
    plain = samples_file(folder)
    with gzip.open(plain.with_suffix(".jsonl.gz"), "wb") as handle:
        handle.write(plain.read_bytes())
    plain.unlink()
    packed = read_lmeval_folder(folder)
    assert len(packed.tasks["gsm8k"].samples) == GSM8K_DOCS
    packed_d, plain_d = _gate(abel["7b"], folder), _gate(abel["7b"], abel["13b"])
    assert packed_d.decision == plain_d.decision == "release"
    assert [g.model_dump() for g in packed_d.gates] == [g.model_dump() for g in plain_d.gates]


def test_zstandard_samples_without_the_library_are_one_clear_error(abel: dict[str, Path], tmp_path: Path) -> None:
    from rlgate._core.errors import InputError

    folder = copy_folder(abel["13b"].parent, tmp_path / "zst").joinpath(abel["13b"].name)
    plain = samples_file(folder)
    try:
        import zstandard
    except ImportError:
        plain.rename(plain.with_suffix(".jsonl.zst"))
        with pytest.raises(InputError, match="zstandard"):
            read_lmeval_folder(folder)
        return
    plain.with_suffix(".jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    plain.unlink()
    assert len(read_lmeval_folder(folder).tasks["gsm8k"].samples) == GSM8K_DOCS


def test_a_newer_run_without_samples_beside_an_older_one_is_refused(abel: dict[str, Path], tmp_path: Path) -> None:
    from rlgate._core.errors import InputError

    folder = copy_folder(abel["13b"].parent, tmp_path / "two").joinpath(abel["13b"].name)
    old = _results(folder)
    newer = folder / "results_2024-07-01T00-00-00.000000.json"
    shutil.copy(old, newer)  # a later aggregate-only run (no --log_samples)
    with pytest.raises(InputError) as info:
        read_lmeval_folder(folder)
    text = str(info.value)
    assert newer.name in text and old.name in text and "ambiguous" in text
    assert len(read_lmeval_folder(old).tasks["gsm8k"].samples) == GSM8K_DOCS  # the file named: read as asked


def test_no_unpaired_fallback_unless_the_contract_opts_in(abel: dict[str, Path], tmp_path: Path) -> None:
    folder = copy_folder(abel["13b"].parent, tmp_path / "agg").joinpath(abel["13b"].name)
    samples_file(folder).unlink()  # lm_eval without --log_samples
    decision = _gate(abel["7b"], folder)
    assert decision.decision == "block" and decision.gates[0].verdict == "nodata"
    assert "--log_samples" in decision.gates[0].reason
    # the derived metrics (parse failures, lengths) are only known from samples: gate the reported ones
    opted = _gate(abel["7b"], folder, allow_unpaired=True, hard=[], diagnostics=[])
    assert opted.decision == "research_only", opted.summary
    assert any("at most research_only" in w for w in opted.warnings)


# --------------------------------------------------------------------------- MMLU-Pro (group of 14 subtasks)
@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    root = tmp_path_factory.getbasetemp()
    return {"base": cached_folder(root, "mmlu_pro_llama", shared_data, "base", generations_only=True),
            "instruct": cached_folder(root, "mmlu_pro_llama", shared_data, "instruct", generations_only=True),
            "base100": cached_folder(root, "mmlu_pro_llama", shared_data, "base", limit=100),
            "instruct100": cached_folder(root, "mmlu_pro_llama", shared_data, "instruct", limit=100)}


def _without_samples(folder: Path, dest: Path, keep: int) -> Path:
    """A copy whose results still list all 14 subtasks, with the samples files of all but the first `keep`
    removed."""
    copy = copy_folder(folder.parent, dest).joinpath(folder.name)
    for path in sorted(copy.glob("samples_*.jsonl"))[keep:]:
        path.unlink()
    return copy


def test_mmlu_pro_with_four_subtask_samples_files_missing_does_not_release(llama: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    complete = _gate(llama["base"], llama["instruct"], "llama_mmlu_pro.yaml")
    assert complete.decision == "block"  # the 2,000 generated texts: too many unparseable answers
    cut = _without_samples(llama["instruct"], tmp_path / "cut", keep=10)
    decision = _gate(llama["base"], cut, "llama_mmlu_pro.yaml")
    assert decision.decision == "block", decision.summary
    assert {g.verdict for g in decision.gates} == {"nodata"}
    hard = next(g for g in decision.gates if g.kind == "hard")
    assert "without per-sample results (re-run lm_eval with --log_samples)" in hard.reason
    assert not any(g.test and g.test.startswith("unpaired") for g in decision.gates)


def test_a_group_with_3_of_14_subtask_samples_counts_every_leaf(llama: dict[str, Path], tmp_path: Path) -> None:
    base = _without_samples(llama["base100"], tmp_path / "b", keep=3)
    cand = _without_samples(llama["instruct100"], tmp_path / "c", keep=3)
    decision = _gate(base, cand, "llama_mmlu_pro.yaml", task_limits={"mmlu_pro": 100})
    assert decision.decision == "block"
    short = decision.gates[0].details["shortfall"]
    assert (short["answered"], short["expected"]) == (300, 1400), short
    # without a suite limit the contract expects the full split of every subtask
    full = _gate(base, cand, "llama_mmlu_pro.yaml")
    assert full.gates[0].details["shortfall"]["expected"] == 12032
    whole = _gate(llama["base100"], llama["instruct100"], "llama_mmlu_pro.yaml", task_limits={"mmlu_pro": 100})
    assert all(g.verdict != "nodata" for g in whole.gates), whole.summary  # complete under its limit
