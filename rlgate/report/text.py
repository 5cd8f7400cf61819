"""Making untrusted text (prompts, responses, names from result files) inert in every output format.

The rule is escape, never strip: a reviewer must see exactly what the model wrote, including the
`<script>` tag or the control character, as visible text that does nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Characters that are invisible or reorder text when shown raw: C0/C1 controls (except tab and
#: newline), line/paragraph separators, bidi overrides and isolates ("trojan source"), zero-width
#: joiners and the BOM. They are shown as `\uXXXX` so nothing hides in the output.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
#: XML 1.0 cannot carry these even escaped; JUnit consumers would reject the file.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
#: ASCII punctuation with a meaning in GitHub-flavoured Markdown (incl. tables, math, mentions, refs).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:@$])")


def visible_controls(text: str) -> str:
    """Show invisible/reordering characters as `\\uXXXX` escapes; keep tab and newline (and CR as \\r)."""
    text = text.replace("\r\n", "\n").replace("\r", "\\r")
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def xml_text(text: str) -> str:
    """Text safe for an XML 1.0 document (ElementTree escapes <, >, & and quotes itself)."""
    return _XML_BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", visible_controls(text))


def md_inline(text: object) -> str:
    """Markdown-escape untrusted text for one line or one table cell of GitHub-flavoured Markdown.

    HTML-significant characters become entities (no raw HTML reaches GitHub's renderer), every
    Markdown punctuation mark is backslash-escaped (no links, images, emphasis, code spans, math,
    mentions or table breaks), and newlines become a visible `⏎` so the cell stays on one row.
    """
    value = visible_controls(str(text))
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _MD_SPECIAL.sub(r"\\\1", value)
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
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escaped in _JSON_SCRIPT:  # str.replace per character: far faster than translate on megabytes
        if char in text:
            text = text.replace(char, escaped)
    return text
