"""Keeping a report small: shared prompt prefixes stored once, and a byte budget for sample text.

A 12,000-document task with few-shot prompts holds hundreds of megabytes of text; the report keeps
every document's verdict but only as much text as the budget allows, changed pairs first, so the
model, report_model.json and report.html stay bounded. Full text stays in the runs' sample files.
"""

from __future__ import annotations

import heapq
import os
from array import array
from collections.abc import Iterator, Sequence
from itertools import compress, repeat
from operator import add, eq
from typing import Any

from rlgate._core.text import utf8_size
from rlgate.report.model import CHANGES, SampleTable, TaskSection

#: UTF-8 bytes of sample text kept in one report (prompts after their shared prefix, responses).
TEXT_BUDGET = 6_000_000
#: Longest single prompt or response kept; longer text is cut and says how much is missing.
FIELD_CAP = 20_000
_MIN_PREFIX = 200
_MAX_PREFIXES = 64


def factor_prefixes(prompts: list[str | None]) -> tuple[list[str], list[tuple[int, str | None]]]:
    """Shared prompt prefixes (few-shot context) stored once: (prefixes, [(prefix index or -1, rest)]).

    A prefix is the common start of three consecutive unmatched prompts (so two questions that merely
    begin alike do not make one), cut after a newline and at least 200 characters long; later
    prompts that start with a known prefix reuse it.
    """
    if not _may_share(prompts):
        return [], [(-1, prompt) for prompt in prompts]
    prefixes: list[str] = []
    out: list[tuple[int, str | None]] = []
    raw: list[str] = []
    recent: list[int] = []
    for prompt in prompts:
        if prompt is None:
            out.append((-1, None))
            continue
        hit = next((i for i in recent if prompt.startswith(prefixes[i])), -1)
        head = prompt[:_MIN_PREFIX]
        if (hit < 0 and len(raw) == 2 and len(prefixes) < _MAX_PREFIXES
                and raw[0].startswith(head) and raw[1].startswith(head)):  # cheap test before the full scan
            common = os.path.commonprefix([*raw, prompt])  # noqa: RUF071 (characters, not paths)
            cut = common.rfind("\n") + 1
            if cut >= _MIN_PREFIX:
                prefixes.append(common[:cut])
                hit = len(prefixes) - 1
        if hit >= 0:
            if recent[:1] != [hit]:
                recent = [hit, *[i for i in recent if i != hit]]
            out.append((hit, prompt[len(prefixes[hit]):]))
        else:
            out.append((-1, prompt))
            raw = [*raw[-1:], prompt]
    return prefixes, out


def _may_share(prompts: list[str | None]) -> bool:
    """Whether a prompt is long enough to hold or start a shared prefix (short ones never do)."""
    return max(map(len, filter(None, prompts)), default=0) >= _MIN_PREFIX


def _capped(texts: list[str | None], field_cap: int) -> list[str | None]:
    return [None if t is None else t[:field_cap] for t in texts]


def _factored(table: dict[str, list[Any]], field_cap: int) -> list[str]:
    """Factor the table's prompts (in place) and cap its texts; returns the shared prefixes."""
    if not table:
        return []
    prefixes, rows = factor_prefixes(table["prompt"])
    table["prompt"] = [rest[-field_cap:] if rest is not None else None for _, rest in rows]
    table["prompt_prefix"] = [pfx if pfx >= 0 else None for pfx, _ in rows]
    for role in ("baseline", "candidate"):
        table[f"{role}_response"] = _capped(table[f"{role}_response"], field_cap)
    return prefixes


def _column_costs(texts: list[str | None]) -> array[int]:
    """`utf8_size` of each text, written out (a function call per text costs more than the measuring)."""
    return array("q", (0 if not t else len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass"))
                       for t in texts))


def _costs(table: dict[str, list[Any]]) -> array[int]:
    """Each document's text cost, 8 bytes a document (a list of ints was ~40 bytes each at 10^6 documents)."""
    if not table:
        return array("q")
    prompts, base, cand = (_column_costs(table[name]) for name in ("prompt", "baseline_response",
                                                                   "candidate_response"))
    return array("q", map(add, map(add, prompts, base), cand))


def in_budget_order(changes: Sequence[Sequence[str]]) -> Iterator[tuple[int, int]]:
    """(row, table) of every document of the tables' change columns, changed pairs first (CHANGES' order), then
    by row, then by table (the tables interleaved): the order text budgets are spent in. Made as it is walked
    (a sorted list of (rank, row, table) was ~90 bytes a document at the report's peak)."""
    for change in CHANGES:
        rows = [zip(compress(range(len(column)), map(eq, column, repeat(change))), repeat(t))
                for t, column in enumerate(changes)]
        yield from rows[0] if len(rows) == 1 else heapq.merge(*rows)


def _sample_table(columns: dict[str, list[Any]]) -> SampleTable:
    """The columns as a SampleTable holding these very lists: validating copied each of them (16 lists of
    10^6 entries at the report's peak). `report.samples` makes every column from typed records, so the one
    rule left to check is the validator's: every column, one entry per document."""
    names = set(SampleTable.model_fields)
    if set(columns) != names or len({len(column) for column in columns.values()}) > 1:
        raise ValueError(f"a sample table needs the columns {sorted(names)}, one entry per document each")
    return SampleTable.model_construct(_fields_set=names, **columns)


def apply_text_budget(sections: list[TaskSection], raw: list[dict[str, list[Any]]], text_budget: int = TEXT_BUDGET,
                      field_cap: int = FIELD_CAP) -> tuple[list[TaskSection], int]:
    """Sections with their samples, prompt prefixes factored and text kept within the budget; and how
    many documents lost their text.

    `raw` holds each section's samples as SampleTable-shaped columns (`report.samples.RawTable`; an empty
    dict for a task whose samples are withheld). Texts are capped at `field_cap` (prompts keep their end,
    where the question is; responses their start). Documents are taken changed pairs first, tasks
    interleaved, until the budget is spent; when everything fits, nothing needs ordering.
    """
    prefix_lists = [_factored(table, field_cap) for table in raw]
    used = sum(utf8_size(p) for prefixes in prefix_lists for p in prefixes)
    costs = [_costs(table) for table in raw]
    left_out = 0
    if used + sum(sum(c) for c in costs) > text_budget:
        for i, t in in_budget_order([table.get("change", []) for table in raw]):
            cost = costs[t][i]
            if cost and used + cost > text_budget:
                left_out += 1
                table = raw[t]
                table["prompt"][i] = table["baseline_response"][i] = table["candidate_response"][i] = None
                continue
            used += cost
    out = [section.model_copy(update={"samples": _sample_table(table) if table else SampleTable(),
                                      "prompt_prefixes": prefixes})
           for section, table, prefixes in zip(sections, raw, prefix_lists, strict=True)]
    return out, left_out
