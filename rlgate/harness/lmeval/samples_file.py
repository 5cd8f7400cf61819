"""One lm-eval samples_<task>_<ts>.jsonl, decoded by msgspec into typed lines and merged into records by doc_id.

lm-eval writes one line per (filter, document). Each line is decoded into a struct that holds only what
rlgate uses (ids, filter, metric names and values, responses, target, prompt, document); the hashes of
prompt and target and anything else on the line are skipped by the decoder, never built. Lines are read
from the file one by one and merged as they come; the prompts and documents are decoded once per document,
all in one call (`samples_decode`). Lines msgspec refuses (NaN / Infinity, broken JSON) go through
`json.loads`, so issue 15's rules hold exactly: non-finite scores and wrong types are corrupt, identical
repeats of a (document, filter) line collapse, conflicting ones are a located error.

Equal texts are kept once where the reader sees them equal (strings only, compared by content): a filter's
name is one string for the whole file, a document's filters that extract the same answer hold one string,
and a target equal to one of its document's fields is that field's string. The runs of a gate share
further in `rlgate.results.shared_values`.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

import msgspec

from rlgate._core.errors import InputError
from rlgate._core.jsonio import read_bytes, require_utf8
from rlgate.harness.lmeval.samples_decode import (
    UNSET,
    LineType,
    Metrics,
    first_lines,
    prompt,
    prompts_and_docs,
    settle,
)
from rlgate.results.integrity import SampleLines, classify, shown
from rlgate.results.models import (
    CorruptScore,
    SampleRecord,
    SampleValue,
    compact_record,
    construct_compact,
    doc_order,
    set_field,
)
from rlgate.results.shared_scores import EMPTY_EXTRA, EMPTY_SCORES, FrozenScores, ScoreTables
from rlgate.results.shared_values import Pairing

_FIX_CONFLICT = ("two lines for the same document and filter disagree, so neither can be trusted; "
                 "re-run lm_eval for this task (or delete the line that is wrong)")


class SamplesRead(NamedTuple):
    """One samples file: a record per document, the scores taken out as corrupt, identical repeats collapsed."""

    samples: list[SampleRecord]
    corrupt: list[CorruptScore]
    duplicate_lines: int


def _agreeing(row: Any) -> dict[str, Any]:
    """What two lines for the same document and filter must agree on (compared only when a line repeats)."""
    if isinstance(row, bytes):
        row = json.loads(row)
    names = row["metrics"] if isinstance(row.get("metrics"), list) else []
    return {"response": row.get("resps"), "filtered answer": row.get("filtered_resps"),
            "document": row.get("doc_hash"), "target": row.get("target"), **{str(m): row.get(m) for m in names}}


def _responses(resps: Any) -> list[str]:
    """The first request's responses as strings, in a list of exactly their number: a decoded or grown list
    keeps spare room (88 bytes for one response instead of 64), and a run keeps one such list per document."""
    if not isinstance(resps, list) or not resps:
        return []
    first = resps[0]
    texts = first if isinstance(first, list) else resps
    if len(texts) == 1:  # the usual: one response per request
        text = texts[0]
        return [text if type(text) is str else str(text)]
    return list(map(str, texts))[:]  # a slice is allocated at its length


_BASE_SET = frozenset(("doc_id", "doc_hash", "prompt", "target", "responses", "filtered", "scores", "doc", "extra"))


def _record(row: Any) -> SampleRecord:
    """A document's SampleRecord, made at its first line (`construct_compact`: its lines fill its containers).

    A fast row's prompt and document stay raw slices here (`_decode_deferred` decodes them for all records).
    The usual line (no per-response details, string hash and target, responses a list of lists) is built
    inline: this runs once per document of every run."""
    tokens, truncated = row.response_tokens, row.truncated
    if tokens is not UNSET or truncated is not UNSET:
        return _detailed_record(row)
    target, doc_hash, resps, arguments, doc = row.target, row.doc_hash, row.resps, row.arguments, row.doc
    text: Any = arguments if type(arguments) is _RAW else prompt(arguments)  # a raw slice until decoded
    source: Any = doc if type(doc) is _RAW or isinstance(doc, dict) else None  # likewise
    return compact_record(
        row.doc_id, doc_hash if type(doc_hash) is str else "" if doc_hash is UNSET else str(doc_hash or ""), text,
        target if type(target) is str else None if target is None or target is UNSET else str(target),
        _responses(resps), {}, EMPTY_SCORES, source, None, None, EMPTY_EXTRA, None, _BASE_SET)


def _detailed_record(row: Any) -> SampleRecord:
    """`_record` of a line that carries response_tokens or truncated (a runner's per-response details)."""
    target = None if row.target is UNSET else row.target
    doc_hash = None if row.doc_hash is UNSET else row.doc_hash
    tokens, truncated = row.response_tokens, row.truncated
    # optional per-response details a runner may add to lm-eval's sample lines (usually absent: no calls)
    if tokens is not UNSET:
        tokens = tokens if isinstance(tokens, list) and all(isinstance(t, int) for t in tokens) else None
    else:
        tokens = None
    if truncated is not UNSET:
        truncated = truncated if isinstance(truncated, list) and all(isinstance(t, bool) for t in truncated) else None
    else:
        truncated = None
    arguments, doc = row.arguments, row.doc
    given = _BASE_SET | {name for name, value in (("response_tokens", tokens), ("truncated", truncated))
                         if value is not None}
    return construct_compact(SampleRecord, {"doc_id": row.doc_id, "doc_hash": str(doc_hash or ""),
            "prompt": arguments if type(arguments) is _RAW else prompt(arguments),
            "target": None if target is None else str(target), "responses": _responses(row.resps),
            "filtered": {}, "scores": EMPTY_SCORES, "doc": doc if type(doc) is _RAW or isinstance(doc, dict) else None,
            "response_tokens": tokens, "truncated": truncated, "extra": EMPTY_EXTRA, "trajectory": None},
        frozenset(given))


_RAW = msgspec.Raw


def _decode_deferred(lazy: list[SampleRecord], pairing: Pairing | None, partners: list[SampleRecord | None]) -> None:
    """Put the values of the records' raw prompt and document slices in their place (in place: key order kept).

    `lazy` holds the records made from fast rows, whose prompt and doc are each a raw slice or None. A target
    that is one of its document's fields as text (GSM8K's answer) becomes that field's string: one object,
    not two of the same text. With a `pairing` (the runs of a gate) each record then shares what equals the
    other run's record of its document (`partners`, in step with `lazy`; `rlgate.results.shared_values`), so
    its copies are freed here."""
    if lazy:
        prompts, docs = prompts_and_docs([r.prompt for r in lazy], [r.doc for r in lazy])
        for record, text, doc in zip(lazy, prompts, docs, strict=True):
            set_field(record, "prompt", text)
            set_field(record, "doc", doc)
            target = record.target
            if type(target) is str and doc:
                for value in doc.values():
                    if value == target and type(value) is str:
                        set_field(record, "target", value)
                        break
        if pairing is not None:
            for record, theirs in zip(lazy, partners, strict=True):
                pairing.share_inputs(record, theirs)


def read_samples_file(file: Path, pairing: Pairing | None = None) -> SamplesRead:
    """Merge a samples_<task>_<ts>.jsonl (one line per filter and document) into records by doc_id.

    A line repeating (doc_id, filter) is collapsed when identical and refused (InputError naming both
    lines) when it disagrees. A NaN / infinite score, or a non-number where the metric is numeric on
    other lines, is listed as corrupt instead of kept; non-numeric values of a metric that is never
    numeric (corpus metrics such as bleu keep (reference, prediction) per sample) are skipped as before.
    `pairing`: the other run of a gate, whose values the records share where equal (`_decode_deferred`).
    """
    try:
        with _lines(file) as lines:
            samples, records, lazy, partners, corrupt, odd, seen = _merge(file, lines, pairing)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=file,
                         fix="restore the file (a compressed one may be truncated)") from None
    except EOFError:
        raise InputError("the compressed file ends early (truncated)", file=file,
                         fix="restore the file or re-run lm_eval for this task with --log_samples") from None
    except InputError:
        # the first byte that is not UTF-8, anywhere in the file, is the error to report (as when the whole
        # file was checked before any line was read); only then the line's own error
        if file.suffix == ".jsonl":
            require_utf8(read_bytes(file), file)
        raise
    _decode_deferred(lazy, pairing, partners)
    numeric = {(c.filter, c.metric) for c in corrupt}  # a NaN is still a number
    if odd:
        numeric |= {(_text(f), m) for r in records.values() for f, values in r.scores.items() for m in values}
    for doc_id, number, filt, metric, value in odd:
        if value is None or (filt, metric) in numeric:  # a number elsewhere: this line's value is broken
            corrupt.append(CorruptScore(doc_id=doc_id, metric=metric, filter=filt, problem="wrong_type",
                                        value=shown(value), where=f"{file.name}:{number}"))
    corrupt.sort(key=lambda c: (doc_order(c.doc_id), c.filter, c.metric))
    return SamplesRead(samples, corrupt, seen.collapsed)


def _lines(file: Path) -> BinaryIO:
    """The file's lines as bytes: plain, gzip (`.gz`) or Zstandard (`.zst`, when `zstandard` is installed)."""
    if file.suffix == ".gz":
        return cast(BinaryIO, gzip.open(file, "rb"))
    if file.suffix == ".zst":
        try:
            import zstandard
        except ImportError:
            raise InputError("is Zstandard-compressed, and the zstandard package is not installed", file=file,
                             fix="pip install zstandard, or decompress it (zstd -d) next to it") from None
        raw = open(file, "rb")  # noqa: SIM115 - closed with the reader that wraps it
        return cast(BinaryIO, io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True),
                                                buffer_size=_BUFFER))
    return open(file, "rb", buffering=_BUFFER)


def _text(filt: Any) -> str:
    """A filter as text: lm-eval writes strings; any other JSON value (1) is its str, one key with "1"."""
    return filt if type(filt) is str else str(filt)


def _first(seen: SampleLines, doc_id: int, filt: Any, number: int, raw: bytes) -> bool:
    """The first line of its (document, filter)? A repeat collapses (False) or is refused (`SampleLines`)."""
    key = (doc_id, _text(filt))
    if key not in seen.seen:
        seen.seen[key] = number
        return True
    return seen.first(doc_id, key[1], number, raw)


_Odd = list[tuple[int, int, str, str, Any]]  # (doc_id, line, filter, metric, value) not numbers


_BUFFER = 1 << 16  # bytes per read: fewer calls than the default 8 KiB, measured faster
#: records whose raw prompt and document slices are decoded together. A raw slice keeps its whole line alive
#: (msgspec.Raw refers into the line's bytes), so decoding them a batch at a time, not all at the end,
#: bounds what reading holds beside the records (a line of ~700 bytes per document until the end before)
_DEFERRED_BATCH = 1 << 14


def _not_utf8(raw: bytes) -> bool:
    """True when a line that is not ASCII is not UTF-8 either (its prompt and document slices, and a repeat
    read back, are decoded as text later)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _merge(file: Path, lines: Iterable[bytes], pairing: Pairing | None) -> tuple[
        list[SampleRecord], dict[int, SampleRecord], list[SampleRecord], list[SampleRecord | None], list[CorruptScore],
        _Odd, SampleLines]:
    """Records from the lines, in first-line order, and by doc_id (each field set with `set_field`):
    filtered answers and scores merged, repeats collapsed or refused. Every field is built with its declared
    type, so validation would only cost time.

    One loop decodes and merges every line (the hot path of reading a run: no generator, no call per line
    but msgspec's); lines the fast type refuses, and changes of metric names, go through `settle`. The lines
    come straight from the file, each freed once merged (reading the whole file and splitting it touched
    twice its size in fresh memory, whose page faults cost more than the reading), or, a document's first
    line, once its batch of raw slices is decoded (`_DEFERRED_BATCH`)."""
    samples: list[SampleRecord] = []
    records: dict[int, SampleRecord] = {}
    lazy: list[SampleRecord] = []  # records whose prompt and doc are still raw slices (or None)
    partners: list[SampleRecord | None] = []  # with a pairing: the other run's record of each in `lazy`
    seen = SampleLines(file, fix=_FIX_CONFLICT, fields=_agreeing)
    keyed = False  # whether seen holds every (document, filter) key met so far
    corrupt: list[CorruptScore] = []
    odd: _Odd = []
    where = file.name
    names: dict[str, str] = {}  # filter name -> the one string of it every record's tables hold
    tables = ScoreTables()
    kind = LineType()
    decoder = kind.fast_decoder
    refused = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)  # checked only when one is raised
    last_names: Any = None
    metrics: Metrics = []
    row: Any
    for number, raw in enumerate(lines, 1):
        if not raw.isascii() and _not_utf8(raw):
            raise InputError("not UTF-8 text", file=file, line=number,  # the caller reports the first bad byte
                             fix="write the file as UTF-8 JSON Lines")
        try:
            row = decoder.decode(raw)
        except refused:
            if raw.isspace():  # a blank line (msgspec refuses it: checked only then)
                continue
            row = None
        if row is None or row.metrics != last_names:
            row, last_names, metrics = settle(raw.rstrip(b"\n"), row, file, number, kind, last_names)
            decoder = kind.fast_decoder
        doc_id = row.doc_id
        filt = row.filter
        if type(filt) is str:
            filt = names.setdefault(filt, filt)  # one string per filter name, not one per line (~60 bytes each)
        elif filt is UNSET:
            filt = "none"
        record = records.get(doc_id)
        # A string filter the record already holds is a repeat (only the first line of a (document,
        # filter) reaches its scores); until then no line numbers are kept. From the first repeat on, or a
        # filter that is not a string (1 and "1" are one key), every line's key goes through `seen`.
        if keyed or type(filt) is not str or (record is not None and filt in record.scores):
            if type(filt) is not str:
                filt = _text(filt)  # 1 and "1" are one filter, "1", in the scores and answers too
            if not keyed:
                keyed = True
                data = read_bytes(file)
                require_utf8(data, file)  # repeats are read back as text: a later bad byte is the located error
                first_lines(data, number, seen.seen)
            if not _first(seen, doc_id, filt, number, raw):
                continue
        if record is None:
            record = records[doc_id] = _record(row)
            samples.append(record)
            theirs = None
            if pairing is not None:
                theirs = pairing.find(doc_id)
                pairing.start_answers(record, theirs)
            if type(record.prompt) is _RAW or type(record.doc) is _RAW:
                lazy.append(record)
                if pairing is not None:
                    partners.append(theirs)
                if len(lazy) == _DEFERRED_BATCH:
                    _decode_deferred(lazy, pairing, partners)
                    lazy.clear()
                    partners.clear()
        filtered = row.filtered_resps
        if type(filtered) is list and filtered:
            first = filtered[0]
            if type(first) is not str:
                if isinstance(first, list):
                    if record.extra is EMPTY_EXTRA:
                        set_field(record, "extra", {})
                    record.extra.setdefault("filtered_all", {})[filt] = [str(v) for v in first]
                    first = first[0] if first else ""
                first = str(first)
            if pairing is None or not pairing.add_answer(record, filt, first):
                answers = record.filtered
                for answer in answers.values():  # the filters' answers are often the same text: one string then
                    if answer == first:
                        first = answer
                        break
                answers[filt] = first
        items: list[tuple[str, SampleValue]] = []
        floats = True  # every value kept is of type float (the common line): its table is keyed by the items
        for metric, name in metrics:
            value = getattr(row, name)
            if type(value) is float and value - value == 0.0:  # the common case, finite: no call
                items.append((metric, value))
                continue
            if value is UNSET:
                continue  # listed but not written: the sample lacks it (counted by the engine as missing)
            usable, problem = classify(value)
            if usable is not None:
                items.append((metric, usable))
                floats = floats and type(usable) is float
            elif problem == "non_finite":
                corrupt.append(CorruptScore(doc_id=doc_id, metric=metric, filter=_text(filt), problem=problem,
                                            value=shown(value), where=f"{where}:{number}"))
            else:
                odd.append((doc_id, number, _text(filt), metric, value))
        # shared tables from the start (`ScoreTables`): no table per document to free once the run is read
        scores = tables.floats(items) if floats else tables.scores(items)
        set_field(record, "scores", tables.added(cast(FrozenScores, record.scores), filt, scores))
    if pairing is not None:
        pairing.finish_answers(records)
    return samples, records, lazy, partners, corrupt, odd, seen
