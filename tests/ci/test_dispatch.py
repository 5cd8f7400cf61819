"""repository_dispatch from the trainer: a loopback HTTP server stands in for the GitHub API."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rlgate.ci.dispatch import DispatchError, checkpoint_ready_payload, send_checkpoint_ready, send_dispatch
from rlgate.ci.hooks import notify, trl_callback, verl_hf_checkpoint


class FakeGitHub:
    """Records every request; answers with the queued status codes (then 204)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                status = fake.statuses.pop(0) if fake.statuses else 204
                self.send_response(status)
                payload = b'{"message": "Bad credentials"}' if status >= 400 else b""
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake API is on loopback: never route it through a proxy from the environment."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    yield fake
    fake.close()


def test_checkpoint_ready_event_matches_what_the_workflow_reads(github: FakeGitHub, tmp_path: Path) -> None:
    send_checkpoint_ready("acme/llm", tmp_path, "run-42", pull_request=7, token="t0k", api_url=github.url)
    [request] = github.requests
    assert request["path"] == "/repos/acme/llm/dispatches"
    assert request["headers"]["Authorization"] == "Bearer t0k"
    assert request["headers"]["Accept"] == "application/vnd.github+json"
    assert request["body"] == {"event_type": "checkpoint-ready", "client_payload": {
        "checkpoint": str(tmp_path), "training_run": "run-42", "pull_request": 7}}


def test_server_errors_are_retried_client_errors_are_not(github: FakeGitHub) -> None:
    github.statuses = [502, 503]
    waits: list[float] = []
    send_dispatch("acme/llm", {"checkpoint": "/c"}, token="t", api_url=github.url, sleep=waits.append)
    assert len(github.requests) == 3 and waits == [1.0, 2.0]

    github.requests.clear()
    github.statuses = [401]
    with pytest.raises(DispatchError, match=r"HTTP 401: .*Bad credentials"):
        send_dispatch("acme/llm", {"checkpoint": "/c"}, token="t", api_url=github.url, sleep=waits.append)
    assert len(github.requests) == 1


def test_bad_arguments_fail_before_any_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RLGATE_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(DispatchError, match="no GitHub token"):
        send_dispatch("acme/llm", {})
    with pytest.raises(DispatchError, match="OWNER/NAME"):
        send_dispatch("acme/llm/x", {}, token="t")
    with pytest.raises(DispatchError, match="does not exist"):
        send_checkpoint_ready("acme/llm", tmp_path / "missing", token="t")
    with pytest.raises(DispatchError, match="11 top-level keys"):
        checkpoint_ready_payload("/c", "r", **{f"k{i}": i for i in range(9)})


def test_unreachable_api_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="rlgate.ci"):
        sent = notify("acme/llm", tmp_path, "r", token="t", api_url="http://127.0.0.1:9", attempts=1)
    assert not sent
    assert "could not announce" in caplog.text and "cannot reach http://127.0.0.1:9" in caplog.text


def test_trl_callback_announces_each_checkpoint_the_trainer_writes(github: FakeGitHub, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=1, n_head=2)
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 64, (8, 16), generator=torch.Generator().manual_seed(0))
    dataset = [{"input_ids": row, "labels": row} for row in ids]
    callback = trl_callback("acme/llm", "run-7", token="t", api_url=github.url)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=2, save_steps=1, per_device_train_batch_size=4,
        report_to=[], use_cpu=True, logging_strategy="no", disable_tqdm=True)
    transformers.Trainer(model=model, args=args, train_dataset=dataset, callbacks=[callback]).train()
    checkpoints = [request["body"]["client_payload"]["checkpoint"] for request in github.requests]
    assert checkpoints == [str((tmp_path / "out" / f"checkpoint-{step}").resolve()) for step in (1, 2)]
    for path in checkpoints:  # announced only once the weights were on disk
        assert (Path(path) / "config.json").is_file() and (Path(path) / "model.safetensors").is_file()
    assert {r["body"]["client_payload"]["training_run"] for r in github.requests} == {"run-7"}


def test_verl_hf_checkpoint_requires_the_hugging_face_copy(tmp_path: Path) -> None:
    actor = tmp_path / "global_step_40" / "actor"
    (actor / "huggingface").mkdir(parents=True)
    (actor / "model_world_size_8_rank_0.pt").write_bytes(b"shard")
    (actor / "huggingface" / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DispatchError, match=r"add hf_model to actor_rollout_ref\.actor\.checkpoint\.save_contents"):
        verl_hf_checkpoint(tmp_path, 40)
    (actor / "huggingface" / "model.safetensors").write_bytes(b"weights")
    assert verl_hf_checkpoint(tmp_path, 40) == (actor / "huggingface").resolve()
