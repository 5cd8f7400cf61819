"""The openai backend and the LLM judge against a real server: `transformers serve` with SmolLM2-135M-Instruct.

The server is transformers' own OpenAI-compatible server, in its own process on a loopback port,
serving a folder saved from the GGUF. `rlgate check` runs GSM8K through lm-eval's
local-chat-completions and a pairwise LLM judge through the same server; a 135M model does not
reliably write the JSON the judge must return: its invalid answers are errors, never wins, and
the judge gate fails closed. A server killed mid-run leaves the run complete with the unanswered
requests counted as errored drops, and a re-run against the restarted server sends only those.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fixtures.real_server import TransformersServer

pytest.importorskip("lm_eval")
pytest.importorskip("gguf")
pytest.importorskip("fastapi")
pytest.importorskip("deepeval")
pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]



@pytest.fixture(scope="module")
def server(smollm2_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TransformersServer]:
    srv = TransformersServer(smollm2_folder, tmp_path_factory.mktemp("server") / "server.log").start()
    try:
        yield srv
    finally:
        srv.stop()


def write_contract(root: Path, shared_data: Path, srv: TransformersServer, *, judge: bool, retries: int = 1) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    task: dict[str, object] = {"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
                               "data_files": str(shared_data / "gsm8k" / "test.jsonl")}
    gates: dict[str, object] = {"primary": {"metric": "gsm8k/exact_match/flexible-extract", "min_delta": 0.0}}
    if judge:
        task["judge"] = {"type": "llm", "samples": 1, "model": {
            "base_url": srv.base_url, "model": srv.model, "max_tokens": 48, "max_retries": 0, "timeout_s": 300},
            "evaluation_steps": ["Check each response's arithmetic", "Prefer the response with the right answer"]}
        gates["hard"] = [{"metric": "gsm8k/judge_win_rate", "min": 0.0}]
    (root / "suite.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "served", "tasks": [task]}))
    (root / "contract.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "served", "baseline": {"checkpoint": "smollm2-baseline"},
        "protocol": {"backend": "openai", "chat_template": True,
                     "sampling": {"temperature": 0.0, "max_tokens": 24},
                     "openai": {"base_url": srv.base_url, "model": srv.model, "concurrency": 1,
                                "max_retries": retries, "timeout_s": 300}},
        "splits": {"test_public": {"visibility": "nightly"}}, "suites": ["suite.yaml"], "gates": gates}))
    return root / "contract.yaml"


def served_requests(srv: TransformersServer) -> int:
    return srv.tail(10**7).count('"POST /v1/chat/completions HTTP/1.1" 200')


def test_check_with_the_openai_backend_and_a_judge_on_a_real_server(tmp_path: Path, shared_data: Path,
                                                                     server: TransformersServer) -> None:
    from typer.testing import CliRunner

    from rlgate.cli.app import app

    contract = write_contract(tmp_path / "c", shared_data, server, judge=True)
    before = served_requests(server)
    result = CliRunner().invoke(app, ["check", str(contract), "--checkpoint", "smollm2-candidate", "--limit", "2",
                                      "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    # baseline and candidate: 2 + 2 generations; the judge: 2 pairwise items
    assert served_requests(server) - before == 6, server.tail()
    assert result.exit_code == 1, result.output  # block: judge answers that are not valid JSON fail closed
    decision = json.loads((tmp_path / "out" / "decision.json").read_text())
    assert decision["decision"] == "block"
    judge = decision["extensions"]["judge"]["tasks"]["gsm8k"]
    assert len(judge["items"]) == 2 and judge["llm_calls"] == 2, judge
    # greedy SmolLM2 as judge: one answer is not JSON (an error, never a win), the other is parsed;
    # any error above max_error_rate (0) makes the judge gate an error, and the gate fails closed
    errors = [item for item in judge["items"] if item["outcome"] == "error"]
    assert errors and judge["errors"] == len(errors) and judge["error_rate"] > 0, judge
    assert all("invalid JSON" in (call["error"] or "") for item in errors for call in item["calls"]), judge
    verdicts = [g for g in decision["gates"] if g["metric"].startswith("gsm8k/judge_win_rate")]
    # fail closed either way: undecided judge items leave the win rate uncovered (nodata) or errored, never a pass
    assert verdicts and all(g["verdict"] in ("error", "nodata") and g["effect"] == "block" for g in verdicts), verdicts
    for kind in ("html", "markdown", "junit"):
        assert kind in result.output
    manifest = json.loads(next((tmp_path / "out").rglob("run_manifest.json")).read_text())
    assert manifest["model_spec"]["lm_eval_model"] == "local-chat-completions"
    samples = [json.loads(x) for x in next((tmp_path / "out").rglob("samples_gsm8k_*.jsonl")).read_text().splitlines()]
    assert all(s["resps"][0][0].strip() for s in samples)  # the real model answered every question


def _rows(cache: Path) -> int:
    db = cache / "cache.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM generations").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_a_server_dying_mid_run_leaves_a_resumable_run(tmp_path: Path, shared_data: Path, smollm2_folder: Path) -> None:
    docs = 4
    srv = TransformersServer(smollm2_folder, tmp_path / "server.log").start()
    contract = write_contract(tmp_path / "c", shared_data, srv, judge=False, retries=0)
    cmd = [sys.executable, "-m", "rlgate.cli.app", "eval", str(contract), "--checkpoint", "smollm2", "--limit",
           str(docs), "--cache", str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        child = subprocess.Popen([*cmd, "--out", str(tmp_path / "first")], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 400
        while _rows(tmp_path / "cache") < 1 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert child.poll() is None, child.stdout.read().decode()[-2000:]  # type: ignore[union-attr]
        srv.kill()
        output = child.communicate(timeout=600)[0].decode()
        assert child.returncode == 0, output[-3000:]  # the run finishes; unanswered requests are counted, not lost
        first = json.loads((tmp_path / "first" / "run_manifest.json").read_text())["tasks"][0]
        answered = _rows(tmp_path / "cache")
        assert 1 <= answered < docs and first["generated"] == answered
        assert first["drops"]["errored"] == docs - answered and "errored" in output

        srv.start()  # the same URL and model name: the same served fingerprint, so the cache applies
        again = subprocess.run([*cmd, "--out", str(tmp_path / "second")], capture_output=True, text=True, env=env,
                               timeout=600)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        second = json.loads((tmp_path / "second" / "run_manifest.json").read_text())["tasks"][0]
        assert (second["cached"], second["generated"], second["drops"]["errored"]) == (answered, docs - answered, 0)
    finally:
        srv.stop()

    def responses(folder: Path) -> dict[int, str]:
        lines = [json.loads(x) for x in next(folder.rglob("samples_gsm8k_*.jsonl")).read_text().splitlines()]
        return {s["doc_id"]: s["resps"][0][0] for s in lines if s["filter"] == "flexible-extract"}

    kept, final = responses(tmp_path / "first"), responses(tmp_path / "second")
    assert sorted(final) == list(range(docs)) and all(final.values())
    assert all(final[d] == text for d, text in kept.items() if text)  # what the first run got is what it keeps
