"""The openai backend (lm-eval's local-completions) against a local OpenAI-compatible server.

The server answers every completion with a fixed GSM8K-style answer and fails on purpose for one
question, so the test sees retries give up, the failure counted in the drops manifest, the other
answers cached, and a second run send only the failed request again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rlgate.app.runs import check_checkpoint, evaluate, select_tasks
from rlgate.harness.vocabulary import load_contract

ContractFactory = Callable[..., Path]

pytest.importorskip("lm_eval")
pytest.importorskip("aiohttp")



def _reply_json(handler: BaseHTTPRequestHandler, body: object) -> None:
    """Answer a request of the local test server with a JSON body."""
    data = json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)

class FakeServer:
    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.fail_on: str | None = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
                owner.prompts.extend(prompts)
                if owner.fail_on and any(owner.fail_on in p for p in prompts):
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b"boom")
                    return
                choices = [{"index": i, "text": " She has 3 + 4 = 7.\n#### 7", "finish_reason": "stop"}
                           for i in range(len(prompts))]
                _reply_json(self, {"choices": choices, "model": body.get("model")})

            def log_message(self, *args: object) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    thread = threading.Thread(target=fake.httpd.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.httpd.shutdown()


@pytest.mark.parametrize("concurrency", [1, 4])
def test_openai_backend_counts_failures_and_caches_the_rest(write_contract: ContractFactory, server: FakeServer,
                                                             shared_data: Path, tmp_path: Path,
                                                             concurrency: int) -> None:
    contract = write_contract(
        [{"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
          "data_files": str(shared_data / "gsm8k/test.jsonl")}],
        protocol={"backend": "openai", "openai": {"base_url": server.url, "model": "fake", "concurrency": concurrency,
                                                  "max_retries": 1}})
    resolved = load_contract(contract)
    tasks = select_tasks(resolved, None, release_gate=False)
    docs = [json.loads(line)["question"] for line in (shared_data / "gsm8k/test.jsonl").open()][:6]
    server.fail_on = docs[2]
    cache = tmp_path / "cache"
    info = check_checkpoint(resolved, "fake-served-model", cache_dir=cache)
    first = evaluate(resolved, tasks, tmp_path / "run1", cache_dir=cache, checkpoint=info, limit=6)
    task = first.manifest.tasks[0]
    assert task.drops.errored == 1 and "doc 2" in task.drops.examples[0]
    assert (task.generated, task.requests) == (5, 6)
    assert first.manifest.model_spec["lm_eval_model"] == "local-completions"
    assert all(p.startswith("Question: ") for p in server.prompts)
    lines = [json.loads(x) for x in next((tmp_path / "run1").rglob("samples_gsm8k_*.jsonl")).read_text().splitlines()]
    by_doc = {s["doc_id"]: s for s in lines if s["filter"] == "flexible-extract"}
    assert by_doc[2]["resps"] == [[""]] and by_doc[0]["filtered_resps"] == ["7"]

    server.prompts.clear()
    server.fail_on = None
    second = evaluate(resolved, tasks, tmp_path / "run2", cache_dir=cache, checkpoint=info, limit=6)
    assert len(server.prompts) == 1 and docs[2] in server.prompts[0]  # only the failed request again
    assert second.manifest.tasks[0].drops.errored == 0 and second.manifest.tasks[0].cached == 5


def test_samples_answered_out_of_order_rerun_from_the_cache_in_the_same_order(write_contract: ContractFactory,
                                                                              shared_data: Path,
                                                                              tmp_path: Path) -> None:
    """n samples of one prompt answered concurrently finish in any order; the cache keeps each where the run used it.

    lm-eval's per-response hook reports completions as they finish; a re-run from the cache must
    give every document the very samples, in the very order, the live run scored.
    """
    import time

    arrivals: dict[str, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["prompt"] if isinstance(body["prompt"], str) else body["prompt"][0]
            with lock:
                k = arrivals[prompt] = arrivals.get(prompt, -1) + 1
            time.sleep(0.3 - 0.1 * k)  # the first to arrive finishes last
            _reply_json(self, {"choices": [{"index": 0, "text": f" sample {k}", "finish_reason": "stop"}]})

        def log_message(self, *args: object) -> None:
            return None

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        contract = write_contract(
            [{"task": "gsm8k", "split": "test_public", "num_fewshot": 0,
              "data_files": str(shared_data / "gsm8k/test.jsonl")}],
            protocol={"backend": "openai", "sampling": {"temperature": 0.7, "n": 3, "max_tokens": 16},
                      "openai": {"base_url": f"http://127.0.0.1:{httpd.server_address[1]}/v1", "model": "fake",
                                 "concurrency": 4}})
        resolved = load_contract(contract)
        tasks = select_tasks(resolved, None, release_gate=False)
        info = check_checkpoint(resolved, "fake-served-model", cache_dir=tmp_path / "cache")
        runs = []
        for name in ("live", "cached"):
            out = evaluate(resolved, tasks, tmp_path / name, cache_dir=tmp_path / "cache", checkpoint=info, limit=2)
            lines = next((tmp_path / name).rglob("samples_gsm8k_*.jsonl")).read_text().splitlines()
            runs.append({(s["doc_id"], s["filter"]): s["resps"] for s in map(json.loads, lines)})
            assert out.manifest.tasks[0].generated == (6 if name == "live" else 0)
    finally:
        httpd.shutdown()
    assert sorted(runs[0][(0, "flexible-extract")][0]) == [" sample 0", " sample 1", " sample 2"]
    assert runs[1] == runs[0]
