"""Decoding the lines of an lm-eval samples file with msgspec: typed where the line is plain, loosely where not.

Two struct types are made per file from the metric names seen (the values sit under keys the line's
`metrics` list names; `msgspec.defstruct` with renamed fields):

- the *fast* type types what the merge relies on (an integer doc_id, a string filter, a list of metric
  names) and keeps the prompt (`arguments`) and the document (`doc`) as raw JSON slices
  (`msgspec.Raw`): they are decoded after the merge, once per document rather than once per (filter,
  document) line and all in one call, and the prompt's generation arguments (`arg_1`) are never built
  (in a file that names a metric `doc` or `arguments`, those fields are values, read at once, so the
  metric keeps its score);
- the *loose* type takes anything (every field `Any`); a line the fast type refuses is decoded again with
  it (and by `json.loads` if msgspec refuses the JSON itself), so the exact rules and errors of issue 15
  hold for odd lines.

Lines are decoded one by one and handed on at once (a whole-file `decode_lines` was measured slower:
keeping every line's struct alive costs more than the calls it saves, and it reads whitespace-separated
values, not lines).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import msgspec

from rlgate._core.errors import InputError
from rlgate._core.jsonio import decode_line

KNOWN = ("doc_id", "filter", "metrics", "doc_hash", "target", "resps", "filtered_resps", "arguments", "doc",
         "response_tokens", "truncated")
UNSET: Any = msgspec.UNSET
FIX = "the samples file is corrupt or truncated; re-run lm_eval for this task"
_FAST_TYPES: dict[str, Any] = {"doc_id": int, "filter": str, "metrics": list[str], "arguments": msgspec.Raw,
                               "doc": msgspec.Raw}
_FAST_VALUES = {k: t for k, t in _FAST_TYPES.items() if t is not msgspec.Raw}
_DEFERRED = ("arguments", "doc")  # the fields the fast type keeps raw, unless a metric bears their name
_RAW = msgspec.Raw
_FAST_DEFAULTS: dict[str, Any] = {"filter": "none", "metrics": []}  # what the exact path makes of them missing


class _Gen(msgspec.Struct):
    """`arguments.gen_args_0` of lm-eval >= 0.4.3: the prompt is `arg_0` (`arg_1`, generation kwargs, is skipped)."""

    arg_0: Any = UNSET


class _Args(msgspec.Struct):
    gen_args_0: _Gen | list[Any] | str | float | bool | None = UNSET


class _PlainGen(msgspec.Struct):
    arg_0: str


class _PlainArgs(msgspec.Struct):
    """The usual shape, every part required: a decode into it refuses anything else."""

    gen_args_0: _PlainGen


_PLAIN_PROMPTS = msgspec.json.Decoder(list[_PlainArgs])
_DOCS = msgspec.json.Decoder(list[dict[str, Any]])
_PROMPTS = msgspec.json.Decoder(list[_Args | list[Any] | str | float | bool | None])
_ANY_LIST = msgspec.json.Decoder(list[Any])


@functools.lru_cache(maxsize=256)
def _types(extra: tuple[str, ...], raw: bool) -> tuple[Any, Any, Any, Any]:
    """(loose type, its decoder, fast type, its decoder) for these extra metric names, cached per process:
    a run's task files name the same metrics, and making a struct type costs more than decoding a line.

    `raw` False: a metric is named `doc` or `arguments`, so the fast type reads those two fields as
    values (a score) rather than raw slices."""
    names = [(f"m{i}", Any, UNSET) for i in range(len(extra))]
    rename = {f"m{i}": name for i, name in enumerate(extra)}
    loose = msgspec.defstruct("SampleLine", [(k, Any, UNSET) for k in KNOWN] + names, rename=rename)
    typed = _FAST_TYPES if raw else _FAST_VALUES
    fast_fields = [(k, typed.get(k, Any), _FAST_DEFAULTS.get(k, UNSET)) for k in KNOWN]
    fast = msgspec.defstruct("FastSampleLine", fast_fields + names, rename=rename)
    return loose, msgspec.json.Decoder(loose), fast, msgspec.json.Decoder(fast)


class LineType:
    """The struct types for the metric names seen so far; they grow (and lines are decoded again) on a new name."""

    def __init__(self) -> None:
        self.attr: dict[str, str] = {}  # metric name -> struct attribute
        self._build()

    def _build(self) -> None:
        extra = tuple(name for name in self.attr if name not in KNOWN)
        raw = not any(name in self.attr for name in _DEFERRED)
        self.type, self.decoder, self.fast_type, self.fast_decoder = _types(extra, raw)
        # in place: a reader may hold on to this mapping while the types grow
        self.attr.update({name: name if name in KNOWN else f"m{extra.index(name)}" for name in self.attr})

    def add(self, names: list[Any]) -> bool:
        """Add unseen (string) metric names; True when the types changed."""
        new = [n for n in names if isinstance(n, str) and n not in self.attr]
        for name in new:
            self.attr[name] = ""
        if new:
            self._build()
        return bool(new)


Metrics = list[tuple[str, str]]  # (metric name, struct attribute) per metric a line lists


def settle(raw: bytes, row: Any, file: Path, number: int, kind: LineType, last_names: Any
           ) -> tuple[Any, list[Any], Metrics]:
    """A line the fast decoder refused (`row` None) or whose metric names differ from the line before.

    Returns (the row, its metric names, (name, attribute) per string name): the row decoded loosely where
    the fast type refused it (errors name the line), and again when it names metrics not seen before (their
    values were skipped). The caller takes `kind.fast_decoder` anew after this (the types may have grown)."""
    if row is None:
        row = _loose(raw, file, number, kind)
        last_names = None
    names = row.metrics if isinstance(row.metrics, list) else []
    if names != last_names and kind.add(names):
        try:
            row = kind.fast_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            row = _loose(raw, file, number, kind)
    return row, names, [(name, kind.attr[name]) for name in names if isinstance(name, str)]


class _Key(msgspec.Struct):
    doc_id: Any = UNSET
    filter: Any = UNSET


_KEYS = msgspec.json.Decoder(_Key)


def first_lines(data: bytes, before: int, first: dict[tuple[Any, str], int]) -> None:
    """Fill `first` with the first line number of each (doc_id, filter as text) among the lines before `before`.

    A reader that keeps no line numbers while every line is new calls this once, at its first repeat;
    those lines were read without error already."""
    for number, raw in enumerate(data.split(b"\n"), 1):
        if number >= before:
            return
        if not raw or raw.isspace():
            continue
        try:
            key = _KEYS.decode(raw)
            doc_id, filt = key.doc_id, key.filter
        except (msgspec.DecodeError, msgspec.ValidationError):
            line = json.loads(raw.decode("utf-8"))  # NaN and the like: the standard library read it before
            doc_id, filt = line["doc_id"], line.get("filter", UNSET)
        filt = "none" if filt is UNSET else filt
        first.setdefault((doc_id, filt if type(filt) is str else str(filt)), number)


def _loose(raw: bytes, file: Path, number: int, kind: LineType) -> Any:
    """The line as the loose type (through `json.loads` where msgspec refuses it); it must have an integer doc_id."""
    row: Any = decode_line(kind.decoder, raw, file, number, FIX)
    if not isinstance(row, kind.type):  # msgspec refused the line; json.loads read it
        if not isinstance(row, dict) or type(row.get("doc_id")) is not int:
            raise InputError("a sample line needs an integer 'doc_id'", file=file, line=number,
                             fix="this is not an lm-eval samples file")
        kind.add(row["metrics"] if isinstance(row.get("metrics"), list) else [])
        row = msgspec.convert(row, kind.type, strict=False)
    if type(row.doc_id) is not int:  # true / false are not document ids
        raise InputError("a sample line needs an integer 'doc_id'", file=file, line=number,
                         fix="this is not an lm-eval samples file")
    return row


def prompt(arguments: Any) -> str | None:
    """The prompt in lm-eval's `arguments` (a mapping of lm-eval >= 0.4.3, or the older list of lists)."""
    if isinstance(arguments, _Args):
        gen = arguments.gen_args_0
        value = gen.arg_0 if isinstance(gen, _Gen) else None
    elif isinstance(arguments, dict):  # {"gen_args_0": {"arg_0": prompt, "arg_1": {...}}}
        first = arguments.get("gen_args_0") or {}
        value = first.get("arg_0") if isinstance(first, dict) else None
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        value = arguments[0][0]
    else:
        value = None
    return value if isinstance(value, str) else None


def _joined(raws: list[Any]) -> bytes:
    """The raw JSON values as one JSON array (anything but a raw slice as null)."""
    return b"[" + b",".join([r if type(r) is _RAW else b"null" for r in raws]) + b"]"


def prompts_and_docs(arguments: list[Any], docs: list[Any]) -> tuple[list[str | None], list[dict[str, Any] | None]]:
    """The prompts and documents of the raw `arguments` and `doc` slices, each list decoded in one call.

    The common shapes (every prompt a string at gen_args_0.arg_0, every document a mapping) come straight
    out of a strictly typed decode; any other shape makes that decode refuse, and the list is decoded
    again loosely and judged by `prompt`'s rules. The slices were valid JSON inside a line msgspec
    decoded, so decoding them again cannot fail."""
    joined = _joined(arguments)
    try:
        prompts: list[str | None] = [a.gen_args_0.arg_0 for a in _PLAIN_PROMPTS.decode(joined)]
    except msgspec.ValidationError:
        try:
            args: list[Any] = _PROMPTS.decode(joined)
        except msgspec.ValidationError:
            args = _ANY_LIST.decode(joined)
        prompts = [prompt(a) for a in args]
    joined = _joined(docs)
    try:
        values: list[Any] = _DOCS.decode(joined)
    except msgspec.ValidationError:
        values = [d if isinstance(d, dict) else None for d in _ANY_LIST.decode(joined)]
    return prompts, values
