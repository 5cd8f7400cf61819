"""jsonl_fast: the standard-library fallback never hands on a string that cannot be written as UTF-8."""

from __future__ import annotations

from pathlib import Path

from rlgate._core.jsonio import loads_exact


def test_unpaired_surrogate_escapes_become_visible_text_and_pairs_stay_characters() -> None:
    line = rb'{"resps": [["a\ud800b"]], "k\uDC01": "\ud83d\ude00 \\ud800"}'
    value = loads_exact(line, Path("s.jsonl"), 1, "fix")
    assert value == {"resps": [["a\\ud800b"]], "k\\udc01": "\U0001f600 \\ud800"}
    for text in (value["resps"][0][0], *value, value["k\\udc01"]):
        text.encode("utf-8")
