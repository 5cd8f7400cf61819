"""The text-safety module: untrusted text is shown exactly and can do nothing in any format (display, storage, CI)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from markdown_it import MarkdownIt

from rlgate._core.text import (
    json_for_script,
    md_inline,
    stored_text,
    truncate,
    visible_controls,
    visible_line,
    visible_surrogates,
    workflow_data,
    workflow_property,
    xml_text,
)


def test_visible_controls_shows_invisible_and_bidi_characters() -> None:
    assert visible_controls("a\x07b\u202ec\u2028d\x00") == "a\\u0007b\\u202ec\\u2028d\\u0000"
    assert visible_controls("line1\nline2\ttab\r\n") == "line1\nline2\ttab\n"
    assert visible_controls("lone\rcr") == "lone\\rcr"


def test_md_inline_escapes_markdown_and_html() -> None:
    text = "<script>x</script> | [l](javascript:a) ![i](http://e/x.png) `c` *b* @user #1 $x$\nnext"
    out = md_inline(text)
    for raw in ("<", "`c`", "*b*", "| [", "\n"):
        assert raw not in out
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(out)
    for tag in ("<a", "<img", "<em", "<code", "<script", "<s>", "<del"):
        assert tag not in html, (tag, html)
    assert "&lt;script>" in out
    assert "\\|" in out and "\\[l\\](javascript:a)" in out and "http\\://e/x.png" in out
    assert "\\@user" in out and "\\#1" in out and "\\$x\\$" in out
    assert out.endswith("⏎ next")


def test_md_inline_keeps_entities_literal() -> None:
    assert md_inline("&lt;b&gt;") == "&amp;lt;b&amp;gt;"


def test_md_inline_leaves_alone_what_github_shows_literally() -> None:
    assert md_inline("demo: +35.71 >= 2 (snake_case) a-b") == "demo: +35.71 >= 2 (snake_case) a-b"
    assert md_inline("- item") == "\\- item" and md_inline("12. x") == "12\\. x" and md_inline("# h") == "\\# h"


def test_json_for_script_cannot_close_the_element_and_round_trips() -> None:
    data = {"t": "</script><script>alert(1)</script><!-- & \u2028\u2029 é"}
    text = json_for_script(data)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == data


def test_xml_text_makes_any_string_parseable() -> None:
    element = ET.Element("x", {"a": xml_text("\x00\x1b<&>\"")})
    element.text = xml_text("\x08 \ud800 ok")
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.get("a") == '\\u0000\\u001b<&>"'
    assert parsed.text == "\\u0008 \\ud800 ok"


def test_truncate() -> None:
    assert truncate("abcdef", 4) == ("abcd", 2)
    assert truncate("abc", 4) == ("abc", 0)


def test_workflow_escaping_follows_github_rules() -> None:
    assert workflow_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert workflow_data("a:b,c") == "a:b,c"
    assert workflow_property("50%\r\n a:b,c") == "50%25%0D%0A a%3Ab%2Cc"
    # `%` first: an already-escaped-looking value stays literal.
    assert workflow_data("%0A") == "%250A"


def test_visible_line_keeps_a_name_on_one_line() -> None:
    assert visible_line("a\n::error::x\u202e") == "a\\n::error::x\\u202e"


def test_storage_safe_text_encodes_as_utf8_and_keeps_what_was_written() -> None:
    assert visible_surrogates({"k\ud800": ["x\udcff", 1]}) == {"k\\ud800": ["x\\udcff", 1]}
    stored = stored_text("ckpt\udcff\x00/step")
    assert stored == "ckpt\\udcff\\u0000/step"
    stored.encode("utf-8")
    assert stored_text(3) == 3 and stored_text(None) is None


@pytest.mark.parametrize("text", ["", "plain ascii", "é", "a" * (1 << 20) + "é" + "€" * 3, "😀" * ((1 << 20) + 1)])
def test_utf8_size_is_the_encoded_length(text: str) -> None:
    from rlgate._core.text import utf8_size

    assert utf8_size(text) == len(text.encode())
    assert utf8_size(None) == 0 and utf8_size("a\udc80") == len("a\udc80".encode("utf-8", "surrogatepass")) == 4


def test_utf8_size_counts_utf8_bytes() -> None:
    """What the report's text budgets measure (moved here with the measure, from tests/results)."""
    from rlgate._core.text import utf8_size

    assert [utf8_size(t) for t in (None, "", "abc", "é", "日本")] == [0, 0, 3, 2, 6]
