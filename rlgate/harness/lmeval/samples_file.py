"""One lm-eval samples_<task>_<ts>.jsonl, decoded by msgspec into typed lines and merged into records by doc_id.

lm-eval writes one line per (filter, document). Each line is decoded into a struct that holds only what
rlgate uses (ids, filter, metric names and values, responses, target, prompt, document); the hashes of
prompt and target and anything else on the line are skipped by the decoder, never built. The metric values
sit under keys named by each line's `metrics` list, so the struct type is made per file from the names seen
(msgspec.defstruct, renamed fields). Lines msgspec refuses (NaN / Infinity, broken JSON) go through
`json.loads`, so issue 15's rules hold exactly: non-finite scores and wrong types are corrupt, identical
repeats of a (document, filter) line collapse, conflicting ones are a located error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from rlgate.errors import InputError
from rlgate.jsonl_fast import decode, lines, read_bytes
from rlgate.results.integrity import SampleLines, classify, shown
from rlgate.results.models import CorruptScore, SampleRecord, doc_order

_KNOWN = ("doc_id", "filter", "metrics", "doc_hash", "target", "resps", "filtered_resps", "arguments", "doc",
          "response_tokens", "truncated")
_UNSET = msgspec.UNSET
_FIX = "the samples file is corrupt or truncated; re-run lm_eval for this task"
_FIX_CONFLICT = ("two lines for the same document and filter disagree, so neither can be trusted; "
                 "re-run lm_eval for this task (or delete the line that is wrong)")


class SamplesRead(NamedTuple):
    """One samples file: a record per document, the scores taken out as corrupt, identical repeats collapsed."""

    samples: list[SampleRecord]
    corrupt: list[CorruptScore]
    duplicate_lines: int


class _LineType:
    """The struct type for the metric names seen so far; grows (and a line is decoded again) on a new name."""

    def __init__(self) -> None:
        self.attr: dict[str, str] = {}  # metric name -> struct attribute
        self._build()

    def _build(self) -> None:
        extra = [name for name in self.attr if name not in _KNOWN]
        fields = [(k, Any, _UNSET) for k in _KNOWN] + [(f"m{i}", Any, _UNSET) for i in range(len(extra))]
        rename = {f"m{i}": name for i, name in enumerate(extra)}
        self.type = msgspec.defstruct("SampleLine", fields, rename=rename)
        self.decoder = msgspec.json.Decoder(self.type)
        self.attr = {name: name if name in _KNOWN else f"m{extra.index(name)}" for name in self.attr}

    def add(self, names: list[Any]) -> bool:
        """Add unseen (string) metric names; True when the type changed."""
        new = [n for n in names if isinstance(n, str) and n not in self.attr]
        for name in new:
            self.attr[name] = ""
        if new:
            self._build()
        return bool(new)


def _agreeing(row: Any) -> dict[str, Any]:
    """What two lines for the same document and filter must agree on (compared only when a line repeats)."""
    if isinstance(row, bytes):
        row = json.loads(row)
    names = row["metrics"] if isinstance(row.get("metrics"), list) else []
    return {"response": row.get("resps"), "filtered answer": row.get("filtered_resps"),
            "document": row.get("doc_hash"), "target": row.get("target"), **{str(m): row.get(m) for m in names}}


def _prompt(arguments: Any) -> str | None:
    if isinstance(arguments, dict):  # lm-eval >= 0.4.3: {"gen_args_0": {"arg_0": prompt, ...}}
        first = arguments.get("gen_args_0") or {}
        value = first.get("arg_0") if isinstance(first, dict) else None
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        value = arguments[0][0]
    else:
        value = None
    return value if isinstance(value, str) else None


def _responses(resps: Any) -> list[str]:
    if not isinstance(resps, list) or not resps:
        return []
    first = resps[0]
    if isinstance(first, list):
        return [str(r) for r in first]
    return [str(r) for r in resps]


def _value(value: Any) -> Any:
    return None if value is _UNSET else value


_BASE_SET = frozenset(("doc_id", "doc_hash", "prompt", "target", "responses", "filtered", "scores", "doc", "extra"))


def _record(row: Any) -> dict[str, Any]:
    """A SampleRecord's state, every field in declaration order (`_construct` makes the object from it)."""
    target = _value(row.target)
    doc = row.doc
    tokens, truncated = row.response_tokens, row.truncated
    # optional per-response details a runner may add to lm-eval's sample lines
    tokens = tokens if isinstance(tokens, list) and all(isinstance(t, int) for t in tokens) else None
    truncated = truncated if isinstance(truncated, list) and all(isinstance(t, bool) for t in truncated) else None
    return {"doc_id": row.doc_id, "doc_hash": str(_value(row.doc_hash) or ""),
            "prompt": _prompt(row.arguments), "target": None if target is None else str(target),
            "responses": _responses(row.resps), "filtered": {}, "scores": {},
            "doc": doc if isinstance(doc, dict) else None, "response_tokens": tokens, "truncated": truncated,
            "extra": {}, "trajectory": None}


def _construct(state: dict[str, Any]) -> SampleRecord:
    """What `SampleRecord.model_construct(**given)` builds, without its per-field default machinery: the same
    `__dict__` (every field, declaration order) and the same fields-set (the fields the reader gave)."""
    record = SampleRecord.__new__(SampleRecord)
    given = set(_BASE_SET)
    if state["response_tokens"] is not None:
        given.add("response_tokens")
    if state["truncated"] is not None:
        given.add("truncated")
    object.__setattr__(record, "__dict__", state)
    object.__setattr__(record, "__pydantic_fields_set__", given)
    object.__setattr__(record, "__pydantic_extra__", None)
    object.__setattr__(record, "__pydantic_private__", None)
    return record


def read_samples_file(file: Path) -> SamplesRead:
    """Merge a samples_<task>_<ts>.jsonl (one line per filter and document) into records by doc_id.

    A line repeating (doc_id, filter) is collapsed when identical and refused (InputError naming both
    lines) when it disagrees. A NaN / infinite score, or a non-number where the metric is numeric on
    other lines, is listed as corrupt instead of kept; non-numeric values of a metric that is never
    numeric (corpus metrics such as bleu keep (reference, prediction) per sample) are skipped as before.
    """
    data = read_bytes(file)
    records: dict[int, dict[str, Any]] = {}
    seen = SampleLines(file, fix=_FIX_CONFLICT, fields=_agreeing)
    corrupt: list[CorruptScore] = []
    odd: list[tuple[int, int, str, str, Any]] = []  # (doc_id, line, filter, metric, value) not numbers
    kind = _LineType()
    last_names: Any = None
    where = file.name
    for number, _, raw in lines(data):
        row: Any = decode(kind.decoder, raw, file, number, _FIX)
        if not isinstance(row, kind.type):  # msgspec refused the line; json.loads read it
            if not isinstance(row, dict) or not isinstance(row.get("doc_id"), int):
                raise InputError("a sample line needs an integer 'doc_id'", file=file, line=number,
                                 fix="this is not an lm-eval samples file")
            kind.add(row["metrics"] if isinstance(row.get("metrics"), list) else [])
            row = msgspec.convert(row, kind.type, strict=False)
            last_names = None
        doc_id = row.doc_id
        if not isinstance(doc_id, int):
            raise InputError("a sample line needs an integer 'doc_id'", file=file, line=number,
                             fix="this is not an lm-eval samples file")
        names = row.metrics
        if not isinstance(names, list):
            names = []
        if names != last_names:
            if kind.add(names):  # new metric names: their values were skipped, decode the line again
                row = decode(kind.decoder, raw, file, number, _FIX)
                if not isinstance(row, kind.type):
                    row = msgspec.convert(row, kind.type, strict=False)
            last_names = names
        filt = "none" if row.filter is _UNSET else row.filter
        if not seen.first(doc_id, str(filt), number, raw):
            continue
        record = records.get(doc_id)
        if record is None:
            record = records[doc_id] = _record(row)
        filtered = row.filtered_resps
        if isinstance(filtered, list) and filtered:
            first = filtered[0]
            if isinstance(first, list):
                record["extra"].setdefault("filtered_all", {})[filt] = [str(v) for v in first]
                first = first[0] if first else ""
            record["filtered"][filt] = str(first)
        scores = record["scores"].setdefault(filt, {})
        for metric in names:
            attr = kind.attr.get(metric) if isinstance(metric, str) else None
            if attr is None:
                continue
            value = getattr(row, attr)
            if value is _UNSET:
                continue  # listed but not written: the sample lacks it (counted by the engine as missing)
            if type(value) is float and value - value == 0.0:  # the common case, finite: no call
                scores[metric] = value
                continue
            usable, problem = classify(value)
            if usable is not None:
                scores[metric] = usable
            elif problem == "non_finite":
                corrupt.append(CorruptScore(doc_id=doc_id, metric=metric, filter=filt, problem=problem,
                                            value=shown(value), where=f"{where}:{number}"))
            else:
                odd.append((doc_id, number, filt, metric, value))
    numeric = {(c.filter, c.metric) for c in corrupt}  # a NaN is still a number
    if odd:
        numeric |= {(f, m) for r in records.values() for f, values in r["scores"].items() for m in values}
    for doc_id, number, filt, metric, value in odd:
        if value is None or (filt, metric) in numeric:  # a number elsewhere: this line's value is broken
            corrupt.append(CorruptScore(doc_id=doc_id, metric=metric, filter=filt, problem="wrong_type",
                                        value=shown(value), where=f"{where}:{number}"))
    corrupt.sort(key=lambda c: (doc_order(c.doc_id), c.filter, c.metric))
    # Every field was built above with its declared type, so validation would only cost time.
    samples = [_construct(r) for r in records.values()]
    return SamplesRead(samples, corrupt, seen.collapsed)

