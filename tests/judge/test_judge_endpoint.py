"""The real deepeval path against a real OpenAI-compatible HTTP server on loopback.

The test trains a tokenizer with `tokenizers`, builds a randomly initialised GPT-2-style model with
transformers, and serves it over /v1/chat/completions from a thread. Its vocabulary has no braces,
so it cannot write the JSON G-Eval asks for: every judgement must come back as an error, the gate
must fail closed, and a second run must be answered from the cache without any request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from judge_contracts import run, sample, write_contract

from rlgate.harness.vocabulary import load_contract
from rlgate.judge.api import run_judge
from rlgate.judge.gate import judge_gate_verdicts

pytestmark = pytest.mark.slow
CORPUS = ("the answer is correct because each step follows from the one before and the result "
          "matches what was asked so response one is better than response two or both are equal")


def build_tiny_model(folder: Path) -> Path:
    """A word-level tokenizer trained on braces-free text and a random 1-layer GPT-2, saved as HF files."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([CORPUS] * 4, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[EOS]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]",
                                                pad_token="[EOS]")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=256, n_embd=32, n_layer=1,
                                     n_head=2, bos_token_id=1, eos_token_id=1)
    model = transformers.GPT2LMHeadModel(config)
    fast.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


class ChatServer:
    """A minimal OpenAI-compatible server: POST /v1/chat/completions, greedy generation on CPU."""

    def __init__(self, folder: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModelForCausalLM.from_pretrained(folder).eval()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = server.complete(body)
                payload = json.dumps({
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": 0,
                    "model": body["model"], "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                    "choices": [{"index": 0, "finish_reason": "length",
                                 "message": {"role": "assistant", "content": text}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def complete(self, body: dict[str, Any]) -> str:
        prompt = "\n".join(m["content"] for m in body["messages"])
        with self.lock:
            self.requests.append(body)
            ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"][:, -200:]
            with self.torch.no_grad():
                out = self.model.generate(ids, attention_mask=self.torch.ones_like(ids), do_sample=False,
                                          max_new_tokens=min(int(body.get("max_tokens", 16)), 16),
                                          pad_token_id=self.tokenizer.eos_token_id)
        return str(self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny_judge"))


@pytest.fixture()
def server(tiny_model: Path) -> Iterator[ChatServer]:
    srv = ChatServer(tiny_model)
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
        srv.thread.join(timeout=10)


def _runs() -> tuple[Any, Any]:
    cand = [sample(d, f"candidate answer number {d}") for d in range(3)]
    base = [sample(d, f"baseline answer {d}") for d in range(3)]
    return run("chat", cand, "cand"), run("chat", base, "base")


def test_geval_through_a_real_endpoint_counts_invalid_judgements_as_errors(tmp_path: Path,
                                                                           server: ChatServer) -> None:
    judge = (f"judge:\n  type: llm\n  model: {{base_url: '{server.base_url}', model: tiny, max_tokens: 16,"
             f" max_retries: 0}}\n  samples: 2\n  evaluation_steps: [Compare the responses, Pick the better]\n")
    gates = ("  primary: {metric: chat/judge_win_rate, min_delta: 0.0}\n"
             "  hard:\n    - {metric: chat/judge_win_rate, min: 0.0}")
    rc = load_contract(write_contract(tmp_path, judge, gates))
    candidate, baseline = _runs()
    report = run_judge(rc, candidate, baseline, tmp_path / "run")
    task = report.tasks["chat"]
    # 3 items x 2 orders, each a real chat-completions request carrying G-Eval's prompt
    assert len(server.requests) == 6
    assert all("Evaluation Steps" in r["messages"][0]["content"] and r["model"] == "tiny" for r in server.requests)
    assert task.judge_model == f"tiny@{server.base_url}"
    assert [i.outcome for i in task.items] == ["error"] * 3
    assert all("invalid JSON" in (c.error or "") for i in task.items for c in i.calls)
    assert task.errors == 3 and task.error_rate == 1.0
    wr = task.win_rate
    assert wr is not None and wr.wins == 0 and wr.errors == 3 and wr.win_rate == 0.0  # errors never win
    verdicts = judge_gate_verdicts(report, rc.gates)
    assert len(verdicts) == 2
    assert all(v.verdict == "error" and v.effect == "block" for v in verdicts)  # fails closed
    assert report.deepeval_folder is not None and report.cache is not None
    assert Path(report.cache).is_relative_to(tmp_path / "run")
    # the same prompts again: answered from the cache, the server sees nothing new
    again = run_judge(rc, candidate, baseline, tmp_path / "run")
    assert len(server.requests) == 6 and again.tasks["chat"].cache_hits == 6
    assert again.tasks["chat"].errors == 3


def test_local_hf_judge_on_the_same_model_also_fails_closed(tmp_path: Path, tiny_model: Path) -> None:
    judge = (f"judge:\n  type: llm\n  model: {{path: '{tiny_model}', max_tokens: 8}}\n  mode: pointwise\n"
             "  evaluation_steps: [Score the response]\n")
    rc = load_contract(write_contract(tmp_path, judge, "  hard:\n    - {metric: chat/judge_win_rate, min: 0.5}"))
    candidate, baseline = _runs()
    report = run_judge(rc, candidate, baseline, tmp_path / "run")
    task = report.tasks["chat"]
    assert task.judge_model == f"local:{tiny_model}"
    assert [i.outcome for i in task.items] == ["error"] * 3 and task.mean_candidate_score is None
    [verdict] = judge_gate_verdicts(report, rc.gates)
    assert verdict.verdict == "error" and verdict.effect == "block"
