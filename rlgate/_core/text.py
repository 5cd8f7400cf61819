"""Making untrusted text inert: the one place that turns names, prompts, responses and messages read from files
into text that is safe where it goes. The rule is escape, never strip: a reviewer sees exactly what the model or the
file had (the `<script>` tag, the control character, the lone surrogate) as visible text that does nothing.

Where the text goes, and the function for it:

- display (terminal, summary.md, every report): `visible_controls` (invisible and reordering characters as
  `\\uXXXX`), `visible_line` (a newline too, for one printed line); `md_inline` (one line or table cell of
  GitHub Markdown), `xml_text` (XML 1.0, JUnit), `json_for_script` (JSON inside an HTML `<script>`);
- storage (JSON files, databases, caches): `visible_surrogates` (a lone surrogate, which no UTF-8 encoder
  writes, as its `\\udXXX` escape), `stored_text` (that and NUL, which PostgreSQL refuses);
- CI annotations (GitHub Actions workflow commands): `workflow_data` (a message after `::`),
  `workflow_property` (a `title=` / `file=` value).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["json_for_script", "md_inline", "stored_text", "truncate", "visible_controls", "visible_line",
           "visible_surrogates", "workflow_data", "workflow_property", "xml_text"]

# ---- display ----

#: Characters that are invisible or reorder text when shown raw: C0/C1 controls (except tab and
#: newline), line/paragraph separators, bidi overrides and isolates ("trojan source"), zero-width
#: joiners and the BOM. They are shown as `\uXXXX` so nothing hides in the output.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def visible_controls(text: str) -> str:
    """Show invisible/reordering characters as `\\uXXXX` escapes; keep tab and newline (and CR as \\r)."""
    text = text.replace("\r\n", "\n").replace("\r", "\\r")
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def visible_line(text: str) -> str:
    """`visible_controls` on one line: a newline shown as \\n too, where a name or message from a data file is
    printed (a line of its own could pass for rlgate's output, or be a GitHub Actions `::` command)."""
    return visible_controls(text).replace("\n", "\\n")


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


# ---- storage ----

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_size(text: str | None) -> int:
    """UTF-8 bytes of `text` (None: 0): an ASCII string's length, else encoded 1 MB at a time (a page's data
    can be tens of MB, never copied whole); an unpaired surrogate (written later as \\udXXX) is counted,
    never an error."""
    if not text:
        return 0
    if text.isascii():
        return len(text)
    return sum(len(text[start:start + _CHUNK].encode("utf-8", "surrogatepass"))
               for start in range(0, len(text), _CHUNK))


_CHUNK = 1 << 20


def visible_surrogates(value: Any) -> Any:
    """`value` (a string, or JSON-like lists and dicts of them) with each unpaired surrogate written as the
    `\\udXXX` text the file had.

    Such a string cannot be encoded as UTF-8, so every report and JSON file written from it failed;
    msgspec refuses these lines and `json.loads` reads them, so readers run this on those lines only. Escaped,
    never dropped: a reviewer sees what the model wrote."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, list):
        return [visible_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {visible_surrogates(k): visible_surrogates(v) for k, v in value.items()}
    return value


def stored_text(value: Any) -> Any:
    """A text as every history backend stores it: a lone surrogate (a checkpoint path of non-UTF-8 bytes) encodes
    in no UTF-8 database and PostgreSQL refuses NUL, so each is kept as its visible `\\uXXXX` escape. Every
    statement's parameters pass here, and so does a name compared with stored records, so it is found by the name
    it was recorded under. Anything but a string is returned as it is."""
    if isinstance(value, str):
        return visible_surrogates(value).replace("\x00", "\\u0000")
    return value


# ---- CI annotations ----
# Exactly as `@actions/core` escapes them: data escapes `%`, CR and LF; properties also escape `:` and `,`.
# Without that, a newline in a reason would end the command and let the rest run as a new one.


def workflow_data(value: str) -> str:
    """Escape a workflow command's message (after `::`)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(value: str) -> str:
    """Escape a workflow command's property value (`title=`, `file=`)."""
    return workflow_data(value).replace(":", "%3A").replace(",", "%2C")
