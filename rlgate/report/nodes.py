"""Other layers' sections (monitor, badcases, next actions, judge, …) as a small tree every renderer draws.

Sections arrive as arbitrary JSON data; nothing in them is trusted. Strings are text (escaped by
each renderer), never markup. An SVG plot is shown only as an `<img>` with a `data:` URI: inside
an image, SVG cannot run script or load anything.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass, field
from typing import Any

#: Titles for the sections rlgate's own layers add, in display order; others get their key, humanised.
SECTION_TITLES = {
    "monitor": "Training monitor",
    "badcase_top": "Top badcase clusters",
    "badcase_explanations": "Why metrics moved",
    "next_actions": "Next actions",
    "badcase_clusters": "Badcase clusters",
    "judge": "Judge",
    "contamination": "Contamination",
    "history": "History",
}
#: Shown in the Markdown job summary (the rest only in the HTML report).
SUMMARY_SECTIONS = ("monitor", "badcase_top", "badcase_explanations", "next_actions", "judge", "contamination")
MAX_ITEMS = 200
MAX_DEPTH = 6


@dataclass
class Node:
    """text | verdict (the section's one line) | image | kv | list | table | gallery (captioned images) |
    stack (children one after another) | details (collapsed behind `text`); `more` = left out."""

    kind: str
    text: str = ""
    items: list[tuple[str, Node]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[Node]] = field(default_factory=list)
    more: int = 0


def is_svg(value: str) -> bool:
    head = value.lstrip()[:200].lower()
    return head.startswith("<svg") or (head.startswith("<?xml") and "<svg" in head)


def svg_data_uri(value: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(value.encode("utf-8")).decode("ascii")


def _scalar(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    return str(value)


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, dict | list) and not (isinstance(value, str) and is_svg(value))


def _compact(value: Any) -> str | None:
    """A small flat dict or list as one line (`k=v; k=v`), or None when it is not small and flat."""
    if isinstance(value, dict) and len(value) <= 12 and all(_is_scalar(v) for v in value.values()):
        return "; ".join(f"{k}={_scalar(v)}" for k, v in value.items()) or "–"
    if isinstance(value, list) and len(value) <= 12 and all(_is_scalar(v) for v in value):
        return ", ".join(_scalar(v) for v in value) or "–"
    return None


def _flat(value: Any) -> bool:
    return _is_scalar(value) or _compact(value) is not None


def _cell(value: Any, depth: int) -> Node:
    compact = None if _is_scalar(value) else _compact(value)
    return Node("text", text=compact) if compact is not None else to_node(value, depth)


def to_node(value: Any, depth: int = 0) -> Node:
    """A JSON value as a display tree (deep values are shown as JSON text)."""
    if isinstance(value, str):
        return Node("image", text=value) if is_svg(value) else Node("text", text=value)
    if not isinstance(value, dict | list):
        return Node("text", text=_scalar(value))
    if depth >= MAX_DEPTH:
        return Node("text", text=json.dumps(value, ensure_ascii=False, default=str)[:2000])
    if isinstance(value, dict):
        keys = list(value)[:MAX_ITEMS]
        return Node("kv", items=[(str(k), to_node(value[k], depth + 1)) for k in keys],
                    more=len(value) - len(keys))
    shown = value[:MAX_ITEMS]
    more = len(value) - len(shown)
    if shown and all(isinstance(v, dict) for v in shown) and all(_flat(x) for v in shown for x in v.values()):
        # columns that are empty in every row (None, "", [], {}) say nothing: left out
        columns = [k for k in dict.fromkeys(k for v in shown for k in v)
                   if any(v.get(k) not in (None, "", [], {}) for v in shown)]
        rows = [[_cell(v.get(c), depth + 1) if c in v else Node("text") for c in columns] for v in shown]
        return Node("table", columns=[str(c) for c in columns], rows=rows, more=more)
    return Node("list", children=[to_node(v, depth + 1) for v in shown], more=more)


def title(key: str) -> str:
    return SECTION_TITLES.get(key, key.replace("_", " ").capitalize())


def sections(extensions: dict[str, Any]) -> list[tuple[str, str, Node]]:
    """(key, title, tree) for every non-empty extension: rlgate's known sections first, raw data collapsed."""
    order = [k for k in SECTION_TITLES if k in extensions] + [k for k in extensions if k not in SECTION_TITLES]
    out = []
    for key in order:
        value = extensions[key]
        if value in (None, "", [], {}):
            continue
        from rlgate.report.sections import view

        out.append((key, title(key), view(key, value)))
    return out


def flatten(value: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Nested settings as (dotted.key, text) rows, for the rollout card's protocol tables."""
    out: list[tuple[str, str]] = []
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and item:
            out.extend(flatten(item, name + "."))
        elif isinstance(item, list):
            out.append((name, ", ".join(_scalar(v) if not isinstance(v, dict | list) else json.dumps(v)
                                        for v in item) or "–"))
        else:
            out.append((name, _scalar(item) if not isinstance(item, dict) else "–"))
    return out
