"""The reward harness without a model: RewardBench's format and categories, ties, bad input, the served scorer."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rlgate._core.errors import InputError
from rlgate.harness.registry import get_harness
from rlgate.harness.reward.data import load_pairs
from rlgate.harness.reward.scorers import EndpointRewardScorer
from rlgate.harness.reward.scores import RewardScores, RewardTask, ScoredPair, to_run


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _row(i: int, **kw: Any) -> dict[str, Any]:
    return {"id": i, "prompt": f"p{i}", "chosen": f"c{i}", "rejected": f"r{i}", **kw}


def test_rewardbench_subsets_map_to_their_sections_and_a_category_wins(tmp_path: Path) -> None:
    file = _write(tmp_path / "p.jsonl", [_row(0, subset="mt-bench-hard"), _row(1, subset="donotanswer"),
                                         _row(2, subset="hep-go"), _row(3, subset="my-own"),
                                         _row(4, subset="donotanswer", category="Chat Hard")])
    pairs, where = load_pairs(str(file))
    assert [p.category for p in pairs] == ["chat_hard", "safety", "reasoning", "my_own", "chat_hard"]
    assert where.startswith("p.jsonl@sha256:") and len(where) == len("p.jsonl@sha256:") + 12
    only, _ = load_pairs(str(file), ["Safety"])
    assert [p.id for p in only] == ["1"]


@pytest.mark.parametrize(("rows", "message", "line"), [
    ([_row(0), {"id": 1, "prompt": "p", "chosen": "c"}], "has no text field rejected", 2),
    ([_row(0), _row(0)], "pair id '0' appears twice", 2),
    ([_row(0), [1, 2]], "a pair must be a JSON object", 2),
])
def test_bad_pairs_are_one_located_error(tmp_path: Path, rows: list[Any], message: str, line: int) -> None:
    file = _write(tmp_path / "p.jsonl", rows)
    with pytest.raises(InputError) as caught:
        load_pairs(str(file))
    assert message in caught.value.message and caught.value.line == line and caught.value.fix


def test_truncated_file_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "p.jsonl"
    file.write_text(json.dumps(_row(0)) + "\n" + json.dumps(_row(1))[:20] + "\n")
    with pytest.raises(InputError) as caught:
        load_pairs(str(file))
    assert caught.value.line == 2 and "not valid JSON" in caught.value.message


def test_the_hub_is_not_asked_when_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(InputError) as caught:
        load_pairs(None)
    assert "HF_DATASETS_OFFLINE" in caught.value.message and "data_files" in (caught.value.fix or "")


def _scored(i: int, chosen: float, rejected: float, category: str = "chat") -> ScoredPair:
    return ScoredPair(id=str(i), category=category, doc_hash=f"h{i}", prompt="p", chosen="c", rejected="r",
                      chosen_score=chosen, rejected_score=rejected)


def test_ties_count_half_and_each_category_is_a_leaf_under_the_task() -> None:
    scores = RewardScores(model="m", tasks=[RewardTask(task="rb", dataset="d", format="plain", pairs=[
        _scored(0, 2.0, 1.0), _scored(1, 1.0, 1.0), _scored(2, 0.0, 1.0), _scored(3, 3.0, -1.0, "safety")])])
    run = to_run(scores, Path("x"), None)
    assert run.groups == {"rb": ["rb_chat", "rb_safety"]}
    values = [s.scores["none"]["accuracy"] for s in run.tasks["rb_chat"].samples]
    assert values == [1.0, 0.5, 0.0] and run.tasks["rb_chat"].metrics["none"]["accuracy"] == 0.5
    vocabulary = get_harness("reward").vocabulary_of("rb_chat")
    assert vocabulary.closed and vocabulary.metric("accuracy").kind == "fraction"


class _Pooling(BaseHTTPRequestHandler):
    answers: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).answers.append(body)
        scores = [[float(len(text))] for text in body["input"]]  # longer = better: a deterministic "RM"
        data = json.dumps({"data": [{"index": i, "data": s} for i, s in enumerate(scores)]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


def test_served_reward_model_through_the_pooling_endpoint() -> None:
    server = HTTPServer(("127.0.0.1", 0), _Pooling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        scorer = EndpointRewardScorer(f"http://127.0.0.1:{server.server_port}/v1", "rm", batch_size=2)
        assert scorer.score([("p", "long answer"), ("p", "x"), ("p", "mid")]) == [13.0, 3.0, 5.0]
        assert _Pooling.answers[0] == {"model": "rm", "input": ["p\nlong answer", "p\nx"]}
    finally:
        server.shutdown()
    with pytest.raises(InputError) as caught:
        EndpointRewardScorer(f"http://127.0.0.1:{server.server_port}/v1", "rm", timeout_s=2).score([("p", "r")])
    assert "did not answer" in caught.value.message and "vllm serve" in (caught.value.fix or "")


def test_runs_that_fed_the_model_differently_are_a_protocol_difference() -> None:
    from rlgate.contract.models import GateConfig, RegressionGate
    from rlgate.engine.decision import decide

    def scored(fmt: str) -> RewardScores:
        return RewardScores(model=fmt, tasks=[RewardTask(task="rb", dataset="p.jsonl@sha256:0", format=fmt,
                                                         pairs=[_scored(i, 1.0, 0.0) for i in range(5)])])

    config = GateConfig(regression=[RegressionGate(metric="rb/accuracy", max_drop=0.05)])
    base, cand = to_run(scored("plain"), Path("b"), None), to_run(scored("chat_template"), Path("c"), None)
    with pytest.raises(InputError) as caught:
        decide(config, base, cand, seed=0, contract_name="c")
    assert "format" in caught.value.message and "allow_protocol_mismatch" in (caught.value.fix or "")
    same = decide(config, base, to_run(scored("plain"), Path("c"), None), seed=0, contract_name="c")
    assert same.gates[0].verdict in ("pass", "inconclusive")
