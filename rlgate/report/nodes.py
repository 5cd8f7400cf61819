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
}
#: Shown in the Markdown job summary (the rest only in the HTML report).
SUMMARY_SECTIONS = ("monitor", "badcase_top", "badcase_explanations", "next_actions", "judge", "contamination")
MAX_ITEMS = 200
MAX_DEPTH = 6


@dataclass
class Node:
    """text | image | kv | list | table | gallery (captioned images) | details (collapsed); `more` = left out."""

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


_MONITOR_TITLES = {"history_findings": "history findings",
                   "history_rules": "cross-checkpoint rules (on gated results)",
                   "rules_not_run": "log rules not run"}


def monitor_view(report: dict[str, Any]) -> Node:
    """The monitor report: verdict and findings first, plots as a gallery, per-log details collapsed."""
    items: list[tuple[str, Node]] = []
    first = ("severity", "diagnosis", "findings", "history_findings", "history_rules", "rules_not_run")
    for key in first:
        if report.get(key) not in (None, [], {}):
            items.append((_MONITOR_TITLES.get(key, key.replace("_", " ")), to_node(report[key], 1)))
    unchecked = report.get("unchecked_logs")
    if isinstance(unchecked, list) and unchecked:  # "no finding" there means nothing could be looked at
        items.insert(0, ("could not check", Node("text", text=f"{len(unchecked)} training log(s) no rule could "
                                                 f"judge (no recognised metric with a finite value): "
                                                 f"{', '.join(map(str, unchecked[:MAX_ITEMS]))}")))
    if report.get("severity") is None and not report.get("findings"):
        items.insert(0, ("severity", Node("text", text="no finding" if not unchecked else
                                          "no finding in what could be checked")))
    if not report.get("logs") and report.get("rules_not_run"):
        items.insert(1, ("training logs", Node("text", text="none given (monitor.logs is not set): the log rules "
                                                          "below were not run; the cross-checkpoint rules were")))
    plots = report.get("plots")
    if isinstance(plots, list) and plots:
        gallery = Node("gallery")
        for plot in plots[:MAX_ITEMS]:
            if isinstance(plot, dict) and isinstance(plot.get("svg"), str) and is_svg(plot["svg"]):
                caption = str(plot.get("title") or plot.get("metric") or "plot")
                gallery.children.append(Node("image", text=plot["svg"], items=[("caption", Node("text", caption))]))
        gallery.more = len(plots) - len(gallery.children)
        items.append(("plots", gallery))
    rest = {k: v for k, v in report.items() if k not in (*first, "plots")}
    if rest:
        items.append(("logs and settings", Node("details", children=[to_node(rest, 1)])))
    return Node("kv", items=items)


def sections(extensions: dict[str, Any]) -> list[tuple[str, str, Node]]:
    """(key, title, tree) for every non-empty extension: rlgate's known sections first, raw data collapsed."""
    order = [k for k in SECTION_TITLES if k in extensions] + [k for k in extensions if k not in SECTION_TITLES]
    out = []
    for key in order:
        value = extensions[key]
        if value in (None, "", [], {}):
            continue
        if key == "monitor" and isinstance(value, dict):
            tree = monitor_view(value)
        elif key in SECTION_TITLES:
            tree = to_node(value)
        else:
            tree = Node("details", children=[to_node(value)])
        out.append((key, title(key), tree))
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
