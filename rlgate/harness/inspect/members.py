"""An `.eval` log's samples read member by member: a strict msgspec decode of what rlgate uses, inspect's models
for anything else.

inspect's `read_eval_log` validates every sample into its pydantic models (hashing each message for its message
cache) and keeps the whole log alive: at 10^4-10^5 trajectories that is most of a gate's time and memory
(bench/bench_scale.py). Here each `samples/*.json` member of the zip is decoded into the structs below, which
type the fields rlgate reads with the types inspect's models give them (an id `int | str`, a message tagged by
its role, content a string or text parts, a tool error of one of inspect's error types, ...); the record is
built at once and the member dropped. A member the structs refuse (another content type, a NaN, a deprecated
field that inspect migrates, a string where inspect would coerce a number) is validated by inspect's own
`EvalSample`, as `read_eval_log` does, so it reads exactly as before. Anything that fails there, and any zip
that cannot be read this way, is handed back (`None`): the caller then takes inspect's full read, which raises
the error it always raised. Fields rlgate never reads (the events past their tool lists, the sandbox, the
attachments) are not validated by the strict decode.
"""

from __future__ import annotations

import functools
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from rlgate._core.gcpause import collector_paused

UNSET: Any = msgspec.UNSET


class _Text(msgspec.Struct, tag_field="type", tag="text"):
    text: str


_Content = str | list[_Text]


class _ToolCall(msgspec.Struct):
    id: str
    function: str
    arguments: dict[str, Any]
    parse_error: str | None = None


class _ToolError(msgspec.Struct):
    type: str  # one of inspect's error types (checked in `_valid`)
    message: str


class _System(msgspec.Struct, tag_field="role", tag="system"):
    role: ClassVar[str] = "system"
    content: _Content


class _User(msgspec.Struct, tag_field="role", tag="user"):
    role: ClassVar[str] = "user"
    content: _Content


class _Assistant(msgspec.Struct, tag_field="role", tag="assistant"):
    role: ClassVar[str] = "assistant"
    content: _Content
    tool_calls: list[_ToolCall] | None = None


class _Tool(msgspec.Struct, tag_field="role", tag="tool"):
    role: ClassVar[str] = "tool"
    content: _Content
    tool_call_id: str | None = None
    error: _ToolError | None = None
    tool_error: None = None  # inspect turns a (deprecated) tool_error string into `error`: left to inspect


_Message = _System | _User | _Assistant | _Tool


class _Choice(msgspec.Struct):
    message: _Assistant


class _Output(msgspec.Struct):
    completion: str = ""
    choices: list[_Choice] = []


class _Score(msgspec.Struct):
    value: str | int | float | bool | list[str | int | float | bool] | dict[str, str | int | float | bool | None]
    explanation: str | None = None
    metadata: dict[str, Any] | None = None


class _Usage(msgspec.Struct):
    total_tokens: int = 0


class _Error(msgspec.Struct):
    message: str
    traceback: str
    traceback_ansi: str


class _Limit(msgspec.Struct):
    type: str  # one of inspect's limit types (checked in `_valid`)
    limit: float


class _ToolInfo(msgspec.Struct):
    name: str


class _Event(msgspec.Struct):
    event: str
    tools: list[_ToolInfo] | None = None


class _Sample(msgspec.Struct):
    """The fields of inspect's `EvalSample` that rlgate reads, with their defaults there."""

    id: int | str
    epoch: int
    input: str | list[_Message]
    target: str | list[str]
    messages: list[_Message] = []
    output: _Output = msgspec.field(default_factory=_Output)
    scores: dict[str, _Score] | None = None
    metadata: dict[str, Any] = {}
    store: dict[str, Any] = {}
    events: list[_Event] = []
    model_usage: dict[str, _Usage] = {}
    working_time: float | None = None
    error: _Error | None = None
    limit: _Limit | None = None
    score: Any = UNSET  # deprecated fields inspect migrates on reading: such a sample is left to inspect
    transcript: Any = UNSET


_DECODER = msgspec.json.Decoder(_Sample)


@functools.lru_cache(maxsize=1)
def _literals() -> tuple[frozenset[str], frozenset[str]]:
    """(tool error types, sample limit types) as inspect's models define them."""
    from typing import get_args, get_type_hints

    from inspect_ai.log import EvalSampleLimit
    from inspect_ai.tool import ToolCallError

    return (frozenset(get_args(get_type_hints(ToolCallError)["type"])),
            frozenset(get_args(get_type_hints(EvalSampleLimit)["type"])))


def _valid(sample: _Sample) -> bool:
    """What the struct types cannot say: no deprecated field, error and limit types that inspect knows."""
    if sample.score is not UNSET or sample.transcript is not UNSET:
        return False
    errors, limits = _literals()
    if sample.limit is not None and sample.limit.type not in limits:
        return False
    messages = [*(() if isinstance(sample.input, str) else sample.input), *sample.messages,
                *(choice.message for choice in sample.output.choices)]
    return all(m.error.type in errors for m in messages if type(m) is _Tool and m.error is not None)


def _first_tools(events: list[Any]) -> list[str] | None:
    """The tool names of a sample's first model event; None when it has none."""
    for event in events:
        if event.event == "model":
            return sorted({tool.name for tool in event.tools or []})
    return None


def _fast(raw: bytes) -> _Sample | None:
    try:
        sample = _DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not _valid(sample):
        return None
    if not sample.output.completion and sample.output.choices:  # inspect's ModelOutput fills it so
        sample.output.completion = "\n".join(_text_parts(sample.output.choices[0].message.content))
    return sample


def _text_parts(content: str | list[_Text]) -> list[str]:
    return [content] if isinstance(content, str) else [part.text for part in content]


def _exact(raw: bytes) -> Any:
    """The sample as inspect's `read_eval_log` makes it (its model, then its read-time resolution)."""
    import json

    from inspect_ai._util.constants import get_deserializing_context
    from inspect_ai.log import EvalSample
    from inspect_ai.log._file import _resolve_sample_for_read

    return _resolve_sample_for_read(EvalSample.model_validate(json.loads(raw), context=get_deserializing_context()),
                                    False)


def sort_key(sample_id: Any, epoch: int) -> tuple[int, str]:
    """inspect's own sample order (`sort_samples`): by epoch, then by id (numbers zero-filled)."""
    return epoch, sample_id if isinstance(sample_id, str) else str(sample_id).zfill(20)


@dataclass
class LogSamples:
    """What rlgate takes from a log's samples, in inspect's order."""

    records: list[Any] = field(default_factory=list)
    ids: list[Any] = field(default_factory=list)  # sample ids, each once, as inspect lists them
    tools: list[str] | None = None  # the first model event's tools of the first sample that has one
    scored: bool = False  # some sample has a score
    exact: int = 0  # samples read through inspect's models (the strict decode refused them)


def read_samples(file: Path, epochs: int, build: Callable[[Any, int], Any]) -> LogSamples | None:
    """Every sample member of an `.eval` log as `build(sample, epochs)`; None when the log must be read by
    inspect's `read_eval_log` instead (a zip or member that cannot be read here, a sample inspect refuses)."""
    import inspect_ai._util.zipfile  # noqa: F401  (zstd members: how inspect itself opens them)

    rows: list[tuple[tuple[int, str], Any, list[str] | None, Any]] = []
    out = LogSamples()
    try:
        with zipfile.ZipFile(file) as log, collector_paused():
            names = [n for n in dict.fromkeys(log.namelist()) if n.startswith("samples/") and n.endswith(".json")]
            for name in names:
                raw = log.read(name)
                sample = _fast(raw)
                if sample is None:
                    sample = _exact(raw)
                    out.exact += 1
                tools = _first_tools(sample.events or [])
                out.scored = out.scored or bool(sample.scores)
                rows.append((sort_key(sample.id, int(sample.epoch)), build(sample, epochs), tools, sample.id))
                del sample, raw
    except Exception:  # inspect's own read (the caller's) raises the error the user sees
        return None
    rows.sort(key=lambda row: row[0])
    out.records = [row[1] for row in rows]
    out.ids = list(dict.fromkeys(row[3] for row in rows))
    out.tools = next((row[2] for row in rows if row[2] is not None), None)
    return out
