"""InputError's one message: file, line, field, reason and fix, shown safely on a terminal or in a CI log."""

from __future__ import annotations

from pathlib import Path

from rlgate._core.errors import InputError


def test_text_from_the_data_is_shown_visible_in_the_message() -> None:
    """A message quotes ids and names from the bad file: an escape sequence or bidi override there acted on the
    terminal that printed the error; intended line breaks (the fix, listed differences) stay."""
    error = InputError("id 'x\x1b[2J\u202ey' is unknown\n  first difference", file=Path("runs/a\x1b[31m.json"),
                       line=3, field="id\u2066", fix="remove the row\x07")
    text = str(error)
    assert text == ("runs/a\\u001b[31m.json:3: id\\u2066: id 'x\\u001b[2J\\u202ey' is unknown\n  first difference"
                    "\n  fix: remove the row\\u0007")
