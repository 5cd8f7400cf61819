"""The endpoint judge through the `openai` client against a scripted loopback server: retries on 5xx,
no retry on 4xx, its timeout, a malformed answer, and loopback requests bypassing the environment's proxy."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("deepeval")

from rlgate.contract.judge_policy import JudgeModelSpec
from rlgate.judge.llms import EndpointLLM, JudgeCallError


class Scripted:
    """Answers POST /v1/chat/completions with the next scripted (status, body, delay) and records requests."""

    def __init__(self) -> None:
        self.script: list[tuple[int, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, answer = server.script.pop(0) if server.script else (200, "ok")
                if status == 200 and isinstance(answer, str):
                    answer = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": answer}}]}
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture()
def server() -> Iterator[Scripted]:
    srv = Scripted()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def _llm(srv: Scripted, **kw: Any) -> EndpointLLM:
    return EndpointLLM(JudgeModelSpec.model_validate({"base_url": srv.base_url, "model": "tiny", **kw}))


def test_answers_and_sends_the_policy(server: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "must-not-leak")
    server.script = [(200, "verdict: A")]
    assert _llm(server, temperature=0.0, max_tokens=7).generate("which is better?") == "verdict: A"
    [body] = server.requests
    assert body["model"] == "tiny" and body["max_tokens"] == 7 and body["temperature"] == 0.0
    assert body["messages"] == [{"role": "user", "content": "which is better?"}]
    assert "must-not-leak" not in server.headers[0].get("authorization", "")


def test_api_key_from_the_named_variable(server: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY", "k-123")
    _llm(server, api_key_env="JUDGE_KEY").generate("q")
    assert server.headers[0]["authorization"] == "Bearer k-123"


def test_5xx_is_retried_then_answered(server: Scripted) -> None:
    server.script = [(503, {"error": {"message": "warming up"}}), (200, "fine")]
    assert _llm(server, max_retries=2).generate("q") == "fine"
    assert len(server.requests) == 2


def test_4xx_is_not_retried_and_names_the_status(server: Scripted) -> None:
    server.script = [(400, {"error": {"message": "bad model name"}})] * 3
    with pytest.raises(JudgeCallError, match="HTTP 400") as raised:
        _llm(server, max_retries=2).generate("q")
    assert "bad model name" in str(raised.value) and len(server.requests) == 1


def test_retries_are_bounded(server: Scripted) -> None:
    server.script = [(500, {"error": {"message": "down"}})] * 5
    with pytest.raises(JudgeCallError, match="HTTP 500"):
        _llm(server, max_retries=1).generate("q")
    assert len(server.requests) == 2


def test_malformed_answer_is_a_call_error(server: Scripted) -> None:
    server.script = [(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "tiny", "choices": []})]
    with pytest.raises(JudgeCallError, match="malformed"):
        _llm(server, max_retries=0).generate("q")


def test_unreachable_endpoint_is_a_call_error() -> None:
    spec = JudgeModelSpec.model_validate({"base_url": "http://127.0.0.1:9/v1", "model": "m", "max_retries": 0,
                                          "timeout_s": 2})
    with pytest.raises(JudgeCallError, match=r"127\.0\.0\.1:9"):
        EndpointLLM(spec).generate("q")


def test_loopback_bypasses_the_environment_proxy(server: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there: a proxied request would fail
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert _llm(server, max_retries=0).generate("q") == "ok"
