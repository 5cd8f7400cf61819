"""The page's sample data: every document's row, with as much text as the page's budget allows.

At 10^6 documents the rows are most of the page. They are encoded a slice of rows at a time
(`Drilldown.script_parts`), so the page never holds a list per document beside its text (those lists were
~180 MB at 10^6 documents, at the gate's peak); `payload` builds the whole structure where it is small.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from rlgate._core.text import json_for_script, truncate
from rlgate.report.budget import FIELD_CAP, TEXT_BUDGET, in_budget_order
from rlgate.report.model import CHANGES, ReportModel, SampleTable

_CODE = {c: i for i, c in enumerate(CHANGES)}
#: rows encoded at a time
_SLICE = 1 << 14
Texts = tuple[str | None, str | None, str | None]  # prompt rest, baseline response, candidate response


@dataclass
class Drilldown:
    """Per task (one with samples): its head (task, section, metric, prefixes) and table; `texts`, per task,
    row -> the texts the budget kept (None: every row's texts as the table holds them)."""

    heads: list[dict[str, Any]]
    tables: list[SampleTable]
    texts: list[dict[int, Texts]] | None
    text_left_out: int

    @property
    def changes(self) -> list[str]:
        return list(CHANGES)

    @property
    def tasks(self) -> list[dict[str, Any]]:
        """Each task's head with its rows (every row built: for small pages and templates that read them)."""
        return [{**head, "rows": self.rows(t, 0, len(table))} for t, (head, table) in
                enumerate(zip(self.heads, self.tables, strict=True))]

    def payload(self) -> dict[str, Any]:
        return {"changes": self.changes, "tasks": self.tasks, "text_left_out": self.text_left_out}

    def rows(self, task: int, start: int, stop: int) -> list[list[Any]]:
        """The task's rows start..stop-1: compact fields, and the texts the budget kept (text goes in exactly as
        the model wrote it; the page shows invisible characters as \\uXXXX when it draws a row)."""
        t = self.tables[task]
        stop = min(stop, len(t.doc_id))
        if self.texts is None:
            kept: Any = zip(t.prompt[start:stop], t.baseline_response[start:stop], t.candidate_response[start:stop],
                            strict=True)
        else:
            chosen = self.texts[task]
            kept = (chosen.get(r, (None, None, None)) for r in range(start, stop))
        return [[doc, _CODE[change], -1 if pfx is None else pfx, prompt, chars, target,
                 b_text, b_chars, b_ext, b_score, c_text, c_chars, c_ext, c_score]
                for doc, change, pfx, chars, target, b_chars, b_ext, b_score, c_chars, c_ext, c_score,
                (prompt, b_text, c_text)
                in zip(*(column[start:stop] for column in (
                    t.doc_id, t.change, t.prompt_prefix, t.prompt_chars, t.target, t.baseline_chars,
                    t.baseline_extracted, t.baseline_score, t.candidate_chars, t.candidate_extracted,
                    t.candidate_score)), kept, strict=True)]

    def script_parts(self) -> list[str]:
        """`json_for_script(self.payload())` as parts to write one after another: each task's rows encoded
        `_SLICE` at a time, never all of them as lists at once."""
        marks = [f"rlgate-rows-{secrets.token_hex(16)}" for _ in self.heads]  # unguessable: no text holds one
        skeleton = {"changes": self.changes, "tasks": [{**head, "rows": mark} for head, mark in
                                                      zip(self.heads, marks, strict=True)],
                    "text_left_out": self.text_left_out}
        rest = json_for_script(skeleton)
        parts: list[str] = []
        for task, mark in enumerate(marks):
            before, rest = rest.split(f'"{mark}"', 1)
            parts += [before, "["]
            for start in range(0, len(self.tables[task]), _SLICE):
                if start:
                    parts.append(",")
                parts.append(json_for_script(self.rows(task, start, start + _SLICE))[1:-1])
            parts.append("]")
        parts.append(rest)
        return parts


def drilldown(model: ReportModel, text_budget: int | None = None, field_cap: int | None = None) -> Drilldown:
    """The page's rows: the model's texts (already budgeted by the builder) as they are, or budgeted again here
    (changed pairs first, tasks interleaved) when a budget or cap is given."""
    heads: list[dict[str, Any]] = []
    tables: list[SampleTable] = []
    for index, section in enumerate(model.tasks):
        if section.samples:
            heads.append({"task": section.task, "section": index, "metric": section.drill_metric,
                          "prefixes": section.prompt_prefixes})
            tables.append(section.samples)
    if text_budget is None and field_cap is None:
        return Drilldown(heads, tables, None, model.text_left_out)
    text_budget = TEXT_BUDGET if text_budget is None else text_budget
    field_cap = FIELD_CAP if field_cap is None else field_cap
    used = sum(len(p.encode()) for head in heads for p in head["prefixes"])
    left_out = 0
    texts: list[dict[int, Texts]] = [{} for _ in tables]
    for r, t in in_budget_order([table.change for table in tables]):
        table = tables[t]
        text = (table.prompt[r], table.baseline_response[r], table.candidate_response[r])
        # prompts keep their end (the question follows the few-shot context), responses their start
        capped = (None if text[0] is None else text[0][-field_cap:],
                  None if text[1] is None else truncate(text[1], field_cap)[0],
                  None if text[2] is None else truncate(text[2], field_cap)[0])
        cost = sum(len(x.encode()) for x in capped if x)
        if used + cost > text_budget and cost:
            left_out += 1
            continue
        used += cost
        if capped != (None, None, None):  # the rows left as they are hold no text
            texts[t][r] = capped
    return Drilldown(heads, tables, texts, left_out + model.text_left_out)


def drilldown_payload(model: ReportModel, text_budget: int | None = None, field_cap: int | None = None) -> dict:
    """`drilldown(...)` as one structure (tests, small pages)."""
    return drilldown(model, text_budget, field_cap).payload()


__all__ = ["Drilldown", "drilldown", "drilldown_payload"]
