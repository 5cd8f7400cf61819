"""Making untrusted text (prompts, responses, names from result files) inert in every output format.

The rule is escape, never strip: a reviewer must see exactly what the model wrote, including the
`<script>` tag or the control character, as visible text that does nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rlgate.visible import visible_controls

__all__ = ["json_for_script", "md_inline", "truncate", "visible_controls", "xml_text"]

#: XML 1.0 cannot carry these even escaped; JUnit consumers would reject the file.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
#: Inline punctuation GitHub-flavoured Markdown acts on anywhere in a line: escapes, code spans, emphasis,
#: links and images, table cells, strikethrough, math. Other punctuation (`.`, `:`, `+`, `-`, `(`) is literal.
_MD_ALWAYS = re.compile(r"([\\`*\[\]|~$])")
#: `_` makes emphasis only at a word edge (GFM leaves snake_case alone).
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: Autolinks (`https://…`, `www.…`), @mentions and #123 references GitHub would turn into links.
_MD_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto)(:)|\b(www)(\.)")
_MD_MENTION = re.compile(r"([@#])(?=[A-Za-z0-9])")
#: Characters that start a block (heading, quote, list, setext line) when they open the text.
_MD_BLOCK_START = re.compile(r"^(\s*)(>|#{1,6}(?=\s|$)|[-+*](?=\s|$)|\d{1,9}[.)](?=\s|$))")
#: `&` only where it would start a character reference.
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def xml_text(text: str) -> str:
    """Text safe for an XML 1.0 document (ElementTree escapes <, >, & and quotes itself)."""
    return _XML_BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", visible_controls(text))


def _escape_block_start(m: re.Match[str]) -> str:
    marker = m.group(2)
    escaped = f"{marker[:-1]}\\{marker[-1]}" if marker[0].isdigit() else "\\" + marker  # `1\.` but `\-`
    return m.group(1) + escaped


def md_inline(text: object) -> str:
    """Markdown-escape untrusted text for one line or one table cell of GitHub-flavoured Markdown.

    Escapes only what GitHub would act on: `<` (no raw HTML or autolinks), entity-like `&`, inline
    markup (code, emphasis, links, images, strikethrough, math, table pipes), autolinked URLs,
    mentions and issue references, and a block marker at the start. Newlines become a visible `⏎`
    so a cell stays on one row. `demo: +35.71 >= 2` stays as it is.
    """
    value = visible_controls(str(text))
    value = _MD_ENTITY.sub("&amp;", value).replace("<", "&lt;")
    value = _MD_ALWAYS.sub(r"\\\1", value)
    value = _MD_UNDERSCORE.sub(r"\\_", value)
    value = _MD_AUTOLINK.sub(lambda m: "\\".join(m.group(1, 2) if m.group(1) else m.group(3, 4)), value)
    value = _MD_MENTION.sub(r"\\\1", value)
    value = _MD_BLOCK_START.sub(_escape_block_start, value)
    return value.replace("\t", " ").replace("\n", " ⏎ ")


def truncate(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` characters and how many were cut (0 when nothing was)."""
    if limit <= 0 or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


_JSON_SCRIPT = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                ("\u2029", "\\u2029"))


def json_for_script(data: Any) -> str:
    """JSON to place inside `<script type="application/json">`: cannot close the element or be parsed as HTML.

    `<`, `>` and `&` (so `</script>` and `<!--` cannot appear) and U+2028/2029 are written as JSON
    `\\u` escapes, which JSON.parse turns back into the original characters.
    """
    # check_circular off: the payload is built here from lists and dicts, never a cycle (~1 ms on 12,000 rows)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
    for char, escaped in _JSON_SCRIPT:  # str.replace per character: far faster than translate on megabytes
        if char in text:
            text = text.replace(char, escaped)
    return text
