"""load_yaml on hostile YAML: recursive aliases, alias bombs and deep nesting are one located InputError."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contract.yamlpos import load_yaml


def _load(tmp_path: Path, text: str) -> InputError:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_yaml(path)
    return info.value


@pytest.mark.parametrize("value", ["&a [*a]", "&a {x: *a}", "&a [1, {y: [*a]}]"])
def test_recursive_alias_is_an_input_error(tmp_path: Path, value: str) -> None:
    error = _load(tmp_path, f"schema_version: 1\nname: t\ndescription: {value}\n")
    assert error.file == tmp_path / "c.yaml" and error.line == 3
    assert "contains itself" in error.message and error.fix


def test_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    lines = ["schema_version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 6)]  # 10^6 values
    error = _load(tmp_path, "\n".join(lines) + "\n")
    assert error.file == tmp_path / "c.yaml" and "aliases expand" in error.message and error.fix


def test_deep_nesting_is_an_input_error(tmp_path: Path) -> None:
    error = _load(tmp_path, "schema_version: 1\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    assert error.file == tmp_path / "c.yaml" and "nested too deeply" in error.message and error.fix


def test_shared_aliases_keep_their_positions(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("a: &s {t: 0.0, n: 1}\nb: *s\nc: [*s, *s]\n", encoding="utf-8")
    doc = load_yaml(path)
    assert doc.data == {"a": {"t": 0.0, "n": 1}, "b": {"t": 0.0, "n": 1}, "c": [{"t": 0.0, "n": 1}] * 2}
    assert doc.pos_of(("b", "n")).line == 1 and doc.pos_of(("c", 1)).line == 1


def test_a_merge_key_override_is_not_a_duplicate_key(tmp_path: Path) -> None:
    """`{<<: *base, metric: c}` overrides the merged `metric` (YAML merge keys), it does not repeat it."""
    path = tmp_path / "c.yaml"
    path.write_text("base: &b {metric: a, max_drop: 0.01}\nother: {<<: *b, metric: c}\n", encoding="utf-8")
    doc = load_yaml(path)
    assert doc.data["other"] == {"metric": "c", "max_drop": 0.01}
    assert doc.pos_of(("other", "metric")).line == 2
    error = _load(tmp_path, "base: &b {metric: a}\nother: {<<: *b, metric: c, metric: d}\n")
    assert (error.line, error.message) == (2, "duplicate key 'metric' (first at line 2)")
