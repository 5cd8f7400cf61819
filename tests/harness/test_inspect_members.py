"""The member by member read of `.eval` logs (`harness.inspect.members`) gives exactly what inspect's own models give.

Every real inspect log of the conformance corpus, and logs written here with inspect's own writer holding the
shapes the strict decode refuses (reasoning content, a NaN score, a deprecated field), must read to the same
RunResult through both paths (`read_logs(fast=True)` and `fast=False`, which reads through `read_eval_log`), and a
corrupt log must raise the same error through both.
"""

from __future__ import annotations

import math
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from rlgate._core.errors import InputError
from rlgate.harness.inspect.log import read_logs, sample_record
from rlgate.harness.inspect.members import read_samples

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "data" / "conformance" / "inspect"
REAL = sorted([*CORPUS.glob("*/*.eval"), *CORPUS.glob("*/*.json")]) if CORPUS.is_dir() else []


def _plain(value: Any) -> Any:
    """A model dump with NaN as a marker, so two dumps compare equal exactly when their values are the same."""
    if isinstance(value, float) and math.isnan(value):
        return "<NaN>"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _both(path: Path) -> tuple[Any, Any]:
    """(member by member, inspect's read_eval_log): each a plain dump of the RunResult, or the error's text."""
    out = []
    for fast in (True, False):
        try:
            out.append(_plain(read_logs(path, "test", fast=fast).model_dump(warnings=False)))
        except InputError as exc:
            out.append(f"InputError: {exc}")
    return out[0], out[1]


@pytest.mark.parametrize("path", REAL, ids=[p.parent.name for p in REAL])
def test_real_logs_read_the_same_both_ways(path: Path) -> None:
    fast, exact = _both(path)
    assert fast == exact
    if path.suffix == ".eval":  # the strict decode takes the real logs, rather than handing them all to inspect
        read = read_samples(path, 1, sample_record)
        assert read is not None and read.records and read.exact == 0


def test_the_corpus_has_eval_logs() -> None:
    if not CORPUS.is_dir():
        pytest.skip("the conformance corpus (../shared/data/conformance) is absent from this checkout")
    assert any(p.suffix == ".eval" for p in REAL)


def _samples(epochs: int) -> list[Any]:
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import EvalError, EvalSample, EvalSampleLimit
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageTool,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo

    def sample(sample_id: int | str, epoch: int, *, reasoning: bool = False, nan: bool = False,
               crashed: bool = False) -> Any:
        call = ToolCall(id=f"c-{sample_id}", function="search", arguments={"q": "ledger", "n": 3})
        answer: Any = [ContentReasoning(reasoning="think"), ContentText(text="done")] if reasoning else "done"
        messages = [ChatMessageUser(content=[ContentText(text=f"task {sample_id}")]),
                    ChatMessageAssistant(content="calling", tool_calls=[call]),
                    ChatMessageTool(content="", tool_call_id=call.id, function="search",
                                    error=ToolCallError("timeout", "too slow") if epoch == 1 else None),
                    ChatMessageAssistant(content=answer)]
        events = [ModelEvent(model="mockllm/model", input=[], tools=[ToolInfo(name="search", description="s"),
                                                                      ToolInfo(name="read", description="r")],
                             tool_choice="auto", config=GenerateConfig(), output=ModelOutput())]
        value: Any = math.nan if nan else {"success": float(epoch == 1), "state_success": 1.0, "unsafe": "maybe"}
        return EvalSample(
            id=sample_id, epoch=epoch, input=messages[:1], target=["a", "b"], messages=messages,
            output=ModelOutput(model="mockllm/model", choices=[]),  # completion from nothing: ""
            scores={"checker": Score(value=value, explanation="why", metadata={"state_success": 1})},
            model_usage={"m": ModelUsage(input_tokens=5, output_tokens=7, total_tokens=12)}, events=events,
            working_time=3, store={"k": [1, 2]}, metadata={"level": 2, "nested": {"x": 1}},
            error=EvalError(message="boom", traceback="", traceback_ansi="") if crashed else None,
            limit=EvalSampleLimit(type="token", limit=100) if crashed else None)

    out = [sample(1, 1), sample("s-2", 1, reasoning=True), sample(3, 1, nan=True), sample(4, 1, crashed=True)]
    if epochs > 1:
        out += [sample(1, 2), sample(3, 2)]  # s-2 and 4 lack their second epoch: placeholders
    return out


def _write(path: Path, epochs: int, *, sample_ids: bool) -> Path:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    samples = _samples(epochs)
    ids = list(dict.fromkeys(s.id for s in samples)) if sample_ids else None
    spec = EvalSpec(created=datetime.now(timezone.utc).isoformat(), task="odd", task_version=1, task_id="odd",
                    dataset=EvalDataset(name="odd", samples=4, sample_ids=ids), model="mockllm/model",
                    config=EvalConfig(epochs=epochs))
    write_eval_log(EvalLog(eval=spec, status="success", samples=samples), str(path), format="eval")
    return path


@pytest.mark.parametrize(("epochs", "sample_ids"), [(1, True), (2, True), (2, False)])
def test_odd_samples_read_the_same_both_ways(tmp_path: Path, epochs: int, sample_ids: bool) -> None:
    log = _write(tmp_path / "odd.eval", epochs, sample_ids=sample_ids)
    fast, exact = _both(log)
    assert not isinstance(fast, str) and fast == exact
    read = read_samples(log, epochs, sample_record)
    assert read is not None and read.tools == ["read", "search"]
    assert read.exact == 2  # reasoning content and NaN scores go through inspect's models
    (task,) = fast["tasks"].values()
    assert task["n_samples"] == (8 if epochs > 1 else 4)


def test_records_give_every_field_of_their_models(tmp_path: Path) -> None:
    """`_built` models share a fields-set only when given every field: a field added to a model shows here."""
    from rlgate.results.models import SampleRecord, ToolCall, Trajectory, TrajectoryStep

    read = read_samples(_write(tmp_path / "odd.eval", 1, sample_ids=True), 1, sample_record)
    assert read is not None
    record = read.records[0]
    assert set(record.__dict__) == set(SampleRecord.model_fields) == record.model_fields_set
    assert record.trajectory is not None and set(record.trajectory.__dict__) == set(Trajectory.model_fields)
    step = next(s for s in record.trajectory.steps if s.tool_calls)
    assert set(step.__dict__) == set(TrajectoryStep.model_fields)
    assert set(step.tool_calls[0].__dict__) == set(ToolCall.model_fields)
    assert Trajectory.model_validate(record.trajectory.model_dump()) == record.trajectory  # a valid model


def _rewrite(source: Path, target: Path, member: str, data: bytes) -> Path:
    import inspect_ai._util.zipfile as inspect_zip

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", **inspect_zip.zipfile_compress_kwargs) as new:
        for name in old.namelist():
            new.writestr(name, data if name == member else old.read(name))
    return target


CORRUPT = [b'{"id": 1, "epoch": 1, "inp', b'{"id": 1, "epoch": "one", "input": "x"}',
           b'{"id": 1, "epoch": 1, "input": "x", "target": "t", "messages": [{"content": 3}]}']


@pytest.mark.parametrize("corrupt", CORRUPT)
def test_a_corrupt_sample_fails_the_same_both_ways(tmp_path: Path, corrupt: bytes) -> None:
    good = _write(tmp_path / "good.eval", 1, sample_ids=True)
    bad = _rewrite(good, tmp_path / "bad.eval", "samples/1_epoch_1.json", corrupt)
    fast, exact = _both(bad)
    assert isinstance(fast, str) and fast.startswith("InputError: ") and fast == exact
    assert "cannot read this inspect log" in fast


def test_a_truncated_log_fails_the_same_both_ways(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.eval", 1, sample_ids=True)
    cut = tmp_path / "cut.eval"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    fast, exact = _both(cut)
    assert isinstance(fast, str) and fast == exact
