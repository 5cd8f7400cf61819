"""The fast decoding of lm-eval samples files reads back exactly what the line-by-line loose reader reads.

The fast path types the fields the merge needs and keeps the prompt and the document as raw slices,
decoded after the merge; every line it refuses goes through the loose reader. Each file here is read
twice, once as shipped and once with the fast type switched off (every line refused, so every line
takes the loose path that issue 15's rules were written for), and the two must agree field by field,
in the same key order, with the same fields-set, the same corrupt scores and the same repeat count.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest

from rlgate._core import jsonio
from rlgate._core.errors import InputError
from rlgate.harness.lmeval import samples_decode
from rlgate.harness.lmeval.samples_file import SamplesRead, read_samples_file
from rlgate.results import integrity


def _line(doc_id: int, filt: str | None = "strict-match", **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"doc_id": doc_id, "doc": {"question": f"What is {doc_id}?", "answer": f"#### {doc_id}"},
                           "target": f"#### {doc_id}",
                           "arguments": {"gen_args_0": {"arg_0": f"Q: {doc_id}?\nA:", "arg_1": {"until": ["Q:"]}}},
                           "resps": [[f"It is {doc_id}. #### {doc_id}"]], "filtered_resps": [str(doc_id)],
                           "metrics": ["exact_match"], "doc_hash": f"h{doc_id}", "prompt_hash": "p",
                           "exact_match": 1.0}
    if filt is not None:
        row["filter"] = filt
    row.update(fields)
    return row


def _write(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def _state(read: SamplesRead) -> Any:
    """Everything a read gives, key order and fields-set included (NaN compared as its JSON text)."""
    samples = [(list(s.__dict__.items()), sorted(s.model_fields_set)) for s in read.samples]
    return json.dumps([samples, [c.model_dump() for c in read.corrupt], read.duplicate_lines], default=repr)


def _loose_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line refused by the fast type: the whole file goes through the loose line-by-line reader."""
    build = samples_decode.LineType._build

    def refusing(self: samples_decode.LineType) -> None:
        build(self)
        self.fast_decoder = msgspec.json.Decoder(int)  # an object is never an int

    monkeypatch.setattr(samples_decode.LineType, "_build", refusing)


VARIANTS: dict[str, list[dict[str, Any] | str]] = {
    "plain two filters": [_line(i, f) for f in ("strict-match", "flexible-extract") for i in range(4)],
    "prompt shapes": [
        _line(0), _line(1, arguments=[["old style prompt", {"until": []}]]), _line(2, arguments=None),
        _line(3, arguments={"gen_args_0": "not a mapping"}), _line(4, arguments={"gen_args_0": {"arg_0": 7}}),
        _line(5, arguments={"gen_args_0": {}}), _line(6, arguments="text"), _line(7, arguments=[]),
        {k: v for k, v in _line(8).items() if k != "arguments"}, _line(9, arguments={"other": 1}),
        _line(10, arguments={"gen_args_0": {"arg_0": "ünïcödé \u2028 \"quoted\"", "arg_1": [1, {"a": None}]}}),
    ],
    "document shapes": [
        _line(0, doc=["a", "list"]), _line(1, doc=None), {k: v for k, v in _line(2).items() if k != "doc"},
        _line(3, doc={"nested": {"deep": [1, 2.5, None, True]}, "text": "日本"}), _line(4, doc="text"),
    ],
    "odd lines go loose": [
        _line(0), _line(1, filter=None), {k: v for k, v in _line(2).items() if k != "filter"},
        {k: v for k, v in _line(3).items() if k != "metrics"}, _line(4, metrics=["exact_match", 3]),
        _line(5, exact_match=math.nan), _line(6, exact_match="1.0"), _line(7, exact_match=None), _line(8),
    ],
    "metric appearing later": [_line(0), _line(1), _line(2, metrics=["exact_match", "acc"], acc=0.5),
                               _line(3, metrics=["acc"], acc=1.0), _line(0, "flexible-extract")],
    "per-response fields": [
        _line(0, resps=[["a", "bb"]], response_tokens=[3, 4], truncated=[False, True]),
        _line(1, resps=["flat", "list"], filtered_resps=[["x", "y"]]), _line(2, resps=[], filtered_resps=[]),
        _line(3, response_tokens=["3"], truncated=[1]), _line(3, "flexible-extract", filtered_resps=[[]]),
    ],
    "repeats, blank lines and CRLF": [_line(0), "", _line(1), "   ", json.dumps(_line(2)) + "\r", _line(0),
                                      _line(1), _line(1, "flexible-extract")],
    "a repeat after loose lines": [_line(0, exact_match=math.nan), _line(1, filter=None), _line(2), _line(3),
                                   _line(0, exact_match=math.nan), _line(2), _line(1, filter=None), _line(4)],
    "filters that are not strings": [_line(0), _line(0, filter=1), _line(0, filter="1"), _line(1, filter=True),
                                     _line(1, filter=1), _line(2, filter=1.0), _line(2, filter="1.0"), _line(3)],
    "non-string filters with broken scores": [_line(0, filter=1, exact_match=math.nan), _line(1, filter=1),
                                              _line(2, filter=True, exact_match="x"), _line(3, filter=True)],
    "metrics named doc and arguments": [_line(0), _line(1, metrics=["exact_match", "doc", "arguments"], doc=0.5,
                                                        arguments=1.0), _line(2), _line(3, metrics=["doc"], doc=1.0)],
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_fast_reading_equals_the_loose_reader(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "samples_gsm8k_x.jsonl", VARIANTS[name])
    fast = read_samples_file(path)
    with monkeypatch.context() as patch:
        _loose_only(patch)
        loose = read_samples_file(path)
    assert _state(fast) == _state(loose)
    assert fast.samples  # the files are not empty: the comparison compared something


def test_deferred_prompt_and_document_read_back_exactly(tmp_path: Path) -> None:
    rows = VARIANTS["prompt shapes"] + [_line(20 + i, doc=d) for i, d in enumerate(
        [{"q": "ünï", "options": ["a", "b"], "n": 1.5, "none": None}, {}, {"emoji": "\U0001F600"}])]
    path = _write(tmp_path / "samples_t_x.jsonl", rows)
    by_id = {s.doc_id: s for s in read_samples_file(path).samples}
    for row in rows:
        assert isinstance(row, dict)
        sample = by_id[row["doc_id"]]
        args = row.get("arguments")
        if isinstance(args, dict) and isinstance(args.get("gen_args_0"), dict):
            want = args["gen_args_0"].get("arg_0")
        elif isinstance(args, list) and args and isinstance(args[0], list):
            want = args[0][0]
        else:
            want = None
        assert sample.prompt == (want if isinstance(want, str) else None)
        assert sample.doc == (row.get("doc") if isinstance(row.get("doc"), dict) else None)
    assert by_id[10].prompt == "ünïcödé \u2028 \"quoted\""


@pytest.mark.parametrize("broken", [
    '"doc": {"question": "x",}', '"doc": {"question": "x"', '"arguments": {"gen_args_0": {"arg_0": "p"}',
    '"doc": {"question": "\\x"}',
])
def test_a_broken_deferred_field_is_a_located_error(tmp_path: Path, broken: str) -> None:
    """The raw slices are checked as JSON when the line is decoded, so a broken one fails there, naming its line."""
    good = json.dumps(_line(1))
    bad = '{"doc_id": 2, ' + broken + ', "filter": "strict-match", "metrics": ["exact_match"], "exact_match": 1.0}'
    path = _write(tmp_path / "samples_t_x.jsonl", [json.dumps(_line(0)), good, bad])
    with pytest.raises(InputError) as info:
        read_samples_file(path)
    assert info.value.line == 3 and str(info.value.file) == str(path)
    assert "not valid JSON" in info.value.message


def _bad_text(row: dict[str, Any]) -> bytes:
    """The line with its "ZZ" replaced by bytes that are not UTF-8."""
    return json.dumps(row).encode().replace(b"ZZ", b"\xff\xfe")


@pytest.mark.parametrize("where", ["doc", "prompt", "repeated line"])
def test_text_that_is_not_utf8_is_a_located_error(tmp_path: Path, where: str) -> None:
    """Bytes that are not UTF-8 inside a raw slice (decoded after the merge) or a repeated line (read back
    from the file) are the same InputError, naming the first such line, as a line decoded by itself gives."""
    broken = {"doc": _line(1, doc={"question": "ZZ"}), "prompt": _line(1, arguments={"gen_args_0": {"arg_0": "ZZ"}}),
              "repeated line": _line(1, doc={"question": "ZZ"})}[where]
    lines = [json.dumps(_line(0)).encode(), _bad_text(broken), json.dumps(_line(2)).encode()]
    if where == "repeated line":
        lines += [_bad_text(broken), _bad_text(broken)]
    path = tmp_path / "samples_t_x.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError) as info:
        read_samples_file(path)
    assert info.value.line == 2 and str(info.value.file) == str(path)
    assert info.value.message == "not UTF-8 text (invalid start byte)"


def test_a_repeat_before_a_line_that_is_not_utf8_is_still_that_located_error(tmp_path: Path) -> None:
    """The first repeated line reads the file back (to find its first occurrence): a bad byte further down is
    the located InputError there too, never a UnicodeDecodeError (whether the repeat agrees or not)."""
    good = json.dumps(_line(0)).encode()
    for repeat in (good, json.dumps(_line(0, exact_match=0.0)).encode()):
        path = tmp_path / "samples_t_x.jsonl"
        path.write_bytes(b"\n".join([good, repeat, _bad_text(_line(1, doc={"question": "ZZ"}))]) + b"\n")
        with pytest.raises(InputError) as info:
            read_samples_file(path)
        assert (info.value.line, info.value.message) == (3, "not UTF-8 text (invalid start byte)")


def test_a_bare_carriage_return_inside_a_line_keeps_the_repeats_line_numbers(tmp_path: Path) -> None:
    """A CR alone is JSON whitespace, not a line break: repeats are read back by the reader's numbering."""
    first = json.dumps(_line(0)).replace(', "target"', ',\r"target"')
    path = _write(tmp_path / "samples_t_x.jsonl", [first, json.dumps(_line(1)), json.dumps(_line(1))])
    read = read_samples_file(path)
    assert [s.doc_id for s in read.samples] == [0, 1] and read.duplicate_lines == 1


def test_the_utf8_check_counts_lines_across_its_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check decodes a large file in pieces cut at newlines; the line it names counts from the file's start."""
    monkeypatch.setattr(jsonio, "_CHUNK", 64)
    rows = [json.dumps(_line(i, doc={"question": "ünï"}), ensure_ascii=False).encode() for i in range(40)]
    rows[29] = _bad_text(_line(29, doc={"question": "ZZ"}))
    path = tmp_path / "samples_t_x.jsonl"
    path.write_bytes(b"\n".join(rows[:29]) + b"\n\n" + b"\n".join(rows[29:]))  # a blank line counts too
    with pytest.raises(InputError) as info:
        read_samples_file(path)
    assert info.value.line == 31
    path.write_bytes(b"\n".join(rows[:29] + rows[30:]))  # and a clean file passes it
    assert len(read_samples_file(path).samples) == 39


def test_metrics_named_like_the_deferred_fields_keep_their_scores(tmp_path: Path) -> None:
    """A metric called `doc` or `arguments` is a score, not the raw document or prompt (read as before)."""
    path = _write(tmp_path / "samples_t_x.jsonl", VARIANTS["metrics named doc and arguments"])
    by_id = {s.doc_id: s for s in read_samples_file(path).samples}
    assert by_id[1].scores == {"strict-match": {"exact_match": 1.0, "doc": 0.5, "arguments": 1.0}}
    assert by_id[1].doc is None and by_id[1].prompt is None
    assert by_id[3].scores == {"strict-match": {"doc": 1.0}}
    assert by_id[2].doc == {"question": "What is 2?", "answer": "#### 2"} and by_id[2].prompt == "Q: 2?\nA:"


def test_a_broken_score_under_a_filter_that_is_not_a_string_is_listed(tmp_path: Path) -> None:
    """A filter written as 1 or true is the text "1" / "True" (one key with "1"), in the corrupt list too."""
    path = _write(tmp_path / "samples_t_x.jsonl", VARIANTS["non-string filters with broken scores"])
    corrupt = [(c.doc_id, c.filter, c.problem, c.value, c.where) for c in read_samples_file(path).corrupt]
    assert corrupt == [(0, "1", "non_finite", "NaN", "samples_t_x.jsonl:1"),
                       (2, "True", "wrong_type", '"x"', "samples_t_x.jsonl:3")]


def test_a_non_finite_number_inside_the_document_reads_as_before(tmp_path: Path) -> None:
    """msgspec refuses NaN anywhere in the line; json.loads then reads it, the document keeps its NaN."""
    path = _write(tmp_path / "samples_t_x.jsonl", [_line(0, doc={"x": math.nan}), _line(1)])
    by_id = {s.doc_id: s for s in read_samples_file(path).samples}
    assert math.isnan(by_id[0].doc["x"]) and by_id[1].doc == {"question": "What is 1?", "answer": "#### 1"}


def test_many_repeats_read_the_file_back_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows: list[dict[str, Any] | str] = [_line(i) for i in range(300)]
    path = _write(tmp_path / "samples_t_x.jsonl", rows + rows)
    opened: list[str] = []
    real_open = open

    def counting(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(integrity, "open", counting, raising=False)
    read = read_samples_file(path)
    assert read.duplicate_lines == 300 and len(read.samples) == 300
    assert opened == [str(path)]
    _write(path, [*rows, *rows[:5], _line(5, exact_match=0.0)])
    with pytest.raises(InputError, match=r"samples_t_x\.jsonl:6 and .*samples_t_x\.jsonl:306 disagree"):
        read_samples_file(path)


def test_a_plain_line_takes_the_fast_type_with_raw_slices() -> None:
    """Guards the comparisons above: plain lines really go the fast way (prompt and document left raw)."""
    kind = samples_decode.LineType()
    kind.add(["exact_match"])
    row = kind.fast_decoder.decode(json.dumps(_line(0)).encode())
    assert type(row.arguments) is msgspec.Raw and type(row.doc) is msgspec.Raw
    assert getattr(row, kind.attr["exact_match"]) == 1.0


def test_each_record_says_which_optional_fields_its_line_gave(tmp_path: Path) -> None:
    """The fields-set is the reader's fields plus the per-response details the line carried, one set per record."""
    path = _write(tmp_path / "samples_t_x.jsonl", [_line(0), _line(1, response_tokens=[3]), _line(2, truncated=[True])])
    by_id = {s.doc_id: s for s in read_samples_file(path).samples}
    base = {"doc_id", "doc_hash", "prompt", "target", "responses", "filtered", "scores", "doc", "extra"}
    assert by_id[0].model_fields_set == base
    assert by_id[1].model_fields_set == base | {"response_tokens"}
    assert by_id[2].model_fields_set == base | {"truncated"}
    assert by_id[0].model_fields_set is not by_id[1].model_fields_set


def test_equal_texts_of_a_file_are_one_string(tmp_path: Path) -> None:
    """A filter's name is one string for every record, a document's filters that extract the same answer
    hold one string of it, and a target that is its document's field is that field's string."""
    rows = [_line(i, f, filtered_resps=[answer]) for f in ("strict-match", "flexible-extract")
            for i, answer in ((1000, "1000"), (1001, "x" if f == "strict-match" else "1001"))]
    samples = read_samples_file(_write(tmp_path / "samples_t_x.jsonl", rows)).samples
    assert [s.filtered for s in samples] == [{"strict-match": "1000", "flexible-extract": "1000"},
                                             {"strict-match": "x", "flexible-extract": "1001"}]
    names = [name for s in samples for name in (*s.filtered, *s.scores)]
    assert len({id(name) for name in names}) == 2
    first = samples[0]
    assert first.filtered["strict-match"] is first.filtered["flexible-extract"]
    assert first.doc is not None and first.target is first.doc["answer"]
    changed = read_samples_file(_write(tmp_path / "samples_u_x.jsonl", [_line(5, target="#### 6")])).samples[0]
    assert changed.target == "#### 6" and changed.doc == {"question": "What is 5?", "answer": "#### 5"}


def test_a_pairing_shares_the_other_runs_equal_values_as_it_reads(tmp_path: Path) -> None:
    from rlgate.results.shared_values import Pairing

    reference = read_samples_file(_write(tmp_path / "samples_t_x.jsonl", [_line(i) for i in range(3)])).samples
    rows = [_line(2), _line(1, doc={"question": "What is 1?", "answer": "#### 7"}), _line(0)]
    read = read_samples_file(_write(tmp_path / "samples_t_y.jsonl", rows), Pairing(reference)).samples
    alone = read_samples_file(tmp_path / "samples_t_y.jsonl").samples
    assert _state(SamplesRead(read, [], 0)) == _state(SamplesRead(alone, [], 0))
    by_id = {s.doc_id: s for s in read}
    assert [by_id[r.doc_id].doc is r.doc for r in reference] == [True, False, True]
    assert all(by_id[r.doc_id].prompt is r.prompt and by_id[r.doc_id].doc_hash is r.doc_hash for r in reference)
    assert by_id[1].doc == {"question": "What is 1?", "answer": "#### 7"} and reference[1].doc["answer"] == "#### 1"


def test_score_tables_are_shared_and_read_only_as_they_are_read(tmp_path: Path) -> None:
    """Every record's scores are the reader's shared tables (`ScoreTables`), not a table per document dropped
    once the run is read: equal outcomes are one object, and a write is refused."""
    rows: list[dict[str, Any] | str] = [_line(i, filt, exact_match=float(i % 2)) for filt in ("strict", "flex")
                                        for i in range(6)]
    samples = read_samples_file(_write(tmp_path / "s.jsonl", rows)).samples
    assert [s.scores for s in samples] == [{"strict": {"exact_match": float(i % 2)},
                                            "flex": {"exact_match": float(i % 2)}} for i in range(6)]
    assert samples[0].scores is samples[2].scores is samples[4].scores and samples[1].scores is samples[3].scores
    assert samples[0].scores["strict"] is samples[0].scores["flex"]
    with pytest.raises(TypeError, match="read-only"):
        samples[0].scores["strict"]["exact_match"] = 1.0
