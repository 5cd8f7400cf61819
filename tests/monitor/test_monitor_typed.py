"""The typed (msgspec) JSON-lines path must give exactly what line-by-line `json` parsing gives."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rlgate.monitor.readers import verl_jsonl
from rlgate.monitor.readers._records import read_json_lines
from rlgate.monitor.readers._typed import TypedLayout, leaf_paths
from rlgate.monitor.readers.generic import read_jsonl
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog


def _slow(path: Path) -> TrainingLog:
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    read_json_lines(path, verl_jsonl._extract, builder, problems, fast=None)
    return builder.build(path, "verl_jsonl", problems)


def _same(a: TrainingLog, b: TrainingLog) -> None:
    assert sorted(a.metrics) == sorted(b.metrics) and sorted(a.extra) == sorted(b.extra)
    for name in a.metrics:
        assert np.array_equal(a.metrics[name].steps, b.metrics[name].steps)
        assert np.array_equal(a.metrics[name].values, b.metrics[name].values, equal_nan=True)
    for name in a.extra:
        assert np.array_equal(a.extra[name].values, b.extra[name].values, equal_nan=True)
    assert [(p.line, p.message) for p in a.problems] == [(p.line, p.message) for p in b.problems]


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(-10**15, 10**15),
                    st.sampled_from([0.0, -0.0, 1e-300, 1.5e300, 0.30000000000000004]))
key_names = st.sampled_from(["critic/score/mean", "actor/entropy", "a", "b", "acc@1", "acc@2", "x:y", 'q"uote',
                             "ünï", "response_length/clip_ratio"])


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(key_names, min_size=1, max_size=6, unique=True),
       rows=st.lists(st.tuples(st.lists(numbers, min_size=6, max_size=6), st.randoms(use_true_random=False)),
                     min_size=1, max_size=40),
       shuffle_some=st.booleans(), compact_some=st.booleans())
def test_fast_path_equals_json_parsing(tmp_path_factory: object, keys: list[str], rows: list, shuffle_some: bool,
                                       compact_some: bool) -> None:
    path = Path(tmp_path_factory.mktemp("fj")) / "m.jsonl"  # type: ignore[attr-defined]
    lines = []
    for step, (values, rnd) in enumerate(rows):
        data = dict(zip(keys, values, strict=False))
        if shuffle_some and rnd.random() < 0.3:
            items = list(data.items())
            rnd.shuffle(items)
            data = dict(items)
        separators = (",", ":") if compact_some and rnd.random() < 0.3 else None
        lines.append(json.dumps({"step": step, "data": data}, separators=separators))
    path.write_text("\n".join(lines) + "\n")
    _same(verl_jsonl.read(path), _slow(path))


def test_permuted_keys_go_to_the_exact_path(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    rows = [{"step": i, "data": {"acc@1": float(i), "acc@2": -float(i)}} for i in range(50)]
    rows[20] = {"step": 20, "data": {"acc@2": -20.0, "acc@1": 20.0}}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = verl_jsonl.read(path)
    assert log.extra["acc@1"].values.tolist() == [float(i) for i in range(50)]
    assert log.extra["acc@2"].values.tolist() == [-float(i) for i in range(50)]


def test_typed_layout_rejects_lines_of_another_layout() -> None:
    paths = leaf_paths({"step": 1, "data": {"a": 1.0, "b": 2.0}})
    assert paths == [("step",), ("data", "a"), ("data", "b")]
    layout = TypedLayout(paths)
    lines = [b'{"step": 1, "data": {"a": 0.5, "b": 2}}\n',
             b'{"step": 2, "data": {"a": 0.5, "c": 2}}\n',
             b'{"step": 3, "data": {"a": "x", "b": 2}}\n',
             b'{"step": 4, "data": {"a": NaN, "b": -Infinity}}\n',  # msgspec refuses: the exact path reads it
             b'{"step": 5, "other": {"a": 1, "b": 2}}\n',
             b'{"step": 6, "data": {"b": 4, "a": 3}, "extra": 1}\n',
             b'{"data": {"b": 4, "a": 3}, "step": 7}\n']
    ok, table = layout.decode(lines)
    assert ok.tolist() == [True, False, False, False, False, False, True]
    assert table[0].tolist() == [1.0, 0.5, 2.0] and table[6].tolist() == [7.0, 3.0, 4.0]
    assert math.isnan(table[1][0])
    assert leaf_paths({"step": 1, "data": {"a": True}}) is None and leaf_paths({"a": {"b": {"c": 1}}}) is None


def test_nan_lines_in_a_block_keep_their_values(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    rows = [{"step": i, "data": {"a": float(i), "b": 1.0}} for i in range(100)]
    rows[40]["data"]["a"] = math.nan
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = verl_jsonl.read(path)
    values = log.extra["a"].values
    assert math.isnan(values[40]) and values[41] == 41.0 and len(values) == 100
    _same(log, _slow(path))


def test_generic_jsonl_fast_path_matches(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps({"step": i, "kl": i / 7, "reward": -i / 3}) + "\n" for i in range(1000)))
    log = read_jsonl(path)
    assert log.get("kl_ref").values.tolist() == [i / 7 for i in range(1000)]
    assert log.get("reward_mean").steps.tolist() == list(range(1000))
