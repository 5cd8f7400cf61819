"""Imported responses: read a JSONL file of generations made elsewhere and match each row to a task document.

A row is `{"task": T, "doc_id": N, "response": "..."}` or, instead of `doc_id`,
`"doc": {fields that identify the document}` (e.g. `question`, `prompt`, `question_id`). `task`
may name a group (`mmlu_pro`); its leaf tasks are searched. An optional `"target"` (the reference
answer the other tool recorded, as converters from lmms-eval and VLMEvalKit write it) is checked
against the task's own `doc_to_target`: a row whose document has another answer is reported as
unmatched (its data order or copy differs), and it picks the one document among several that share
the identifying fields (ChartQA asks the same question of many charts). Rows that match nothing, match
ambiguously, or repeat a response already kept for their document are reported, never silently
dropped. Documents without a response are not scored: the runner scores the answered ones and
records answered / expected documents (coverage) and the missing ids in the manifest. A row that
answers a document more often than the protocol samples it with a different response is an
InputError naming both lines: which response is the true one cannot be guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate._core.jsonio import iter_jsonl
from rlgate.harness.lmeval.backends import canonical_json
from rlgate.results.manifest import ImportReport

MAX_EXAMPLES = 8


@dataclass(frozen=True)
class ResponseRow:
    line: int
    task: str
    doc_id: int | None
    doc: dict[str, Any] | None
    response: str
    target: str | None = None
    #: the source tool's own row index (VLMEvalKit's `index`): orders rows that match the same documents
    index: int | None = None
    #: the prompt the source tool sent (OpenCompass's `origin_prompt`), compared with the one lm-eval renders
    prompt: str | None = None


def refuse_other_formats(path: Path) -> None:
    """Another tool's predictions, or a folder, given as a responses file: named as what it is, with the way in
    (cheap: names and first bytes), before any task loads or line is parsed."""
    from rlgate.harness.detect import import_format

    seen = import_format(path) if path.exists() else None
    if seen is not None:
        raise InputError(f"not a responses JSONL: this looks like {seen[1]}", file=path, fix=seen[2])
    if path.is_dir():
        raise InputError("is a folder, not a responses JSONL (no harness's importer reads it either)", file=path,
                         fix="give a JSONL of {\"task\", \"doc_id\", \"response\"} rows, or stored outputs of an "
                             "importing harness (SWE-bench reports, BFCL result files, inspect logs)")


def read_responses(path: Path) -> list[ResponseRow]:
    """Parse the file; a malformed row is an InputError naming its line."""
    refuse_other_formats(path)
    if not path.is_file():
        raise InputError(f"responses file '{path}' does not exist", file=path,
                         fix="check the path given to --responses")
    fix = 'one JSON object per line: {"task": ..., "doc_id": ..., "response": ...}'
    rows: list[ResponseRow] = [_row(row, path, number) for number, row in iter_jsonl(path, fix=fix)]
    if not rows:
        raise InputError("the responses file has no rows", file=path, fix="write one JSON object per line")
    return rows


def _row(row: Any, path: Path, number: int) -> ResponseRow:
    def bad(message: str, key: str | None = None) -> InputError:
        return InputError(message, file=path, line=number, field=key,
                          fix='rows look like {"task": "gsm8k", "doc_id": 0, "response": "..."} or '
                              '{"task": "gsm8k", "doc": {"question": "..."}, "response": "..."}')

    if not isinstance(row, dict):
        raise bad("a row must be a JSON object")
    unknown = set(row) - {"task", "doc_id", "doc", "response", "target", "index", "prompt"}
    if unknown:
        raise bad(f"unknown key(s) {', '.join(sorted(unknown))}", sorted(unknown)[0])
    task, response = row.get("task"), row.get("response")
    if not isinstance(task, str) or not task:
        raise bad("'task' must be the lm-eval task name", "task")
    if not isinstance(response, str):
        raise bad("'response' must be a string", "response")
    doc_id, doc = row.get("doc_id"), row.get("doc")
    if (doc_id is None) == (doc is None):
        raise bad("give exactly one of 'doc_id' (the document's index) or 'doc' (fields that identify it)",
                  "doc_id")
    if doc_id is not None and (not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0):
        raise bad("'doc_id' must be a non-negative integer", "doc_id")
    if doc is not None and (not isinstance(doc, dict) or not doc):
        raise bad("'doc' must be a non-empty object of identifying fields", "doc")
    target = row.get("target")
    if target is not None and not isinstance(target, (str, int, float)):
        raise bad("'target' must be the reference answer as a string or number", "target")
    index = row.get("index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise bad("'index' must be the source's integer row index", "index")
    prompt = row.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise bad("'prompt' must be the prompt text the source tool sent", "prompt")
    return ResponseRow(number, task, doc_id, doc, response, None if target is None else str(target), index, prompt)


def _norm(value: Any) -> str:
    return canonical_json(value.strip() if isinstance(value, str) else value)


def same_target(given: str, expected: Any) -> bool:
    """Reference answers agree: equal ignoring case and outer space, or equal numbers ("42" vs "42.0", from xlsx)."""
    wanted = expected[0] if isinstance(expected, list) and len(expected) == 1 else expected
    a, b = given.strip().casefold(), str(wanted).strip().casefold()
    if a == b:
        return True
    if "####" in b:  # GSM8K's answer is the worked solution then "#### N"; other tools record N alone
        b = b.rsplit("####", 1)[1].strip().replace(",", "")
    try:
        return float(a) == float(b)
    except ValueError:
        return False


TargetOf = Callable[[str, int], Any]


@dataclass
class MatchResult:
    """(leaf task, doc id) -> responses in file order, plus the report of what did not match."""

    responses: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    report: ImportReport | None = None
    #: (leaf task, doc id) -> the prompt the source tool recorded for it (rows that carry one)
    prompts: dict[tuple[str, int], str] = field(default_factory=dict)

    def doc_ids(self, leaf: str) -> list[int]:
        return sorted(doc_id for task, doc_id in self.responses if task == leaf)


def _leaf_candidates(task: str, leaves: Iterable[str], groups: Mapping[str, list[str]]) -> list[str]:
    names = set(leaves)
    if task in names:
        return [task]
    out: list[str] = []
    stack = list(groups.get(task, []))
    while stack:
        child = stack.pop(0)
        if child in names:
            out.append(child)
        stack.extend(groups.get(child, []))
    return out


def _conflict(row: ResponseRow, hit: tuple[str, int], kept: list[int], repeats: int, source: str) -> InputError:
    """A row that answers a document again with a different response: no rule says which one is true."""
    where = source or "the responses file"
    if repeats == 1:
        message = (f"conflicting responses for {hit[0]} doc {hit[1]}: {where}:{kept[0]} and {where}:{row.line} "
                   "give different responses")
    else:
        earlier = ", ".join(f"{where}:{line}" for line in kept)
        message = (f"{hit[0]} doc {hit[1]} has more responses than the protocol samples (n={repeats}): {earlier} "
                   f"and {where}:{row.line}, which differs from them")
    return InputError(message, file=source or None, line=row.line,
                      fix="keep one response per document and sample (delete the wrong line), or raise "
                      "protocol.sampling.n if every response is a real sample")


def match_rows(rows: Iterable[ResponseRow], docs: Mapping[str, list[dict[str, Any]]],
               groups: Mapping[str, list[str]], repeats: int = 1, source: str = "",
               target_of: TargetOf | None = None) -> MatchResult:
    """Resolve every row to (leaf task, doc id); `docs` holds each leaf's documents in lm-eval's order.

    `target_of(leaf, doc_id)` gives a document's reference answer, checked against a row's `target`.
    """
    indexes: dict[tuple[str, tuple[str, ...]], dict[tuple[str, ...], list[int]]] = {}
    result = MatchResult()
    problems: list[str] = []
    lines: dict[tuple[str, int], list[int]] = {}  # the lines whose responses were kept, per document
    unmatched = duplicates = unknown = total = 0
    placed: list[tuple[ResponseRow, tuple[str, int]]] = []
    tied: dict[tuple[tuple[str, int], ...], list[ResponseRow]] = {}
    for row in rows:
        total += 1
        leaves = _leaf_candidates(row.task, docs, groups)
        if not leaves:
            unknown += 1
            problems.append(f"line {row.line}: task '{row.task}' is not evaluated by this contract")
            continue
        hits: list[tuple[str, int]] = []
        if row.doc_id is not None:
            if len(leaves) > 1:
                problems.append(f"line {row.line}: doc_id is ambiguous for group '{row.task}'; name the subtask "
                                "or identify the document with 'doc'")
                unmatched += 1
                continue
            if row.doc_id < len(docs[leaves[0]]):
                hits = [(leaves[0], row.doc_id)]
        else:
            assert row.doc is not None
            keys = tuple(sorted(row.doc))
            wanted = tuple(_norm(row.doc[k]) for k in keys)
            for leaf in leaves:
                index = indexes.get((leaf, keys))
                if index is None:
                    index = defaultdict(list)
                    for doc_id, doc in enumerate(docs[leaf]):
                        if all(k in doc for k in keys):
                            index[tuple(_norm(doc[k]) for k in keys)].append(doc_id)
                    indexes[(leaf, keys)] = index
                hits += [(leaf, doc_id) for doc_id in index.get(wanted, [])]
        if row.target is not None and target_of is not None and hits:
            agreeing = [hit for hit in hits if same_target(row.target, target_of(*hit))]
            if not agreeing and len(hits) == 1:
                unmatched += 1
                problems.append(f"line {row.line}: {hits[0][0]} doc {hits[0][1]} has target "
                                f"{str(target_of(*hits[0]))!r}, the row says {row.target!r} (different data order "
                                "or copy?)")
                continue
            hits = agreeing
        if len(hits) > 1 and row.index is not None:  # same question and answer: placed by the source's index
            tied.setdefault(tuple(sorted(hits)), []).append(row)
            continue
        if len(hits) != 1:
            unmatched += 1
            what = "matches no document" if not hits else f"matches {len(hits)} documents"
            problems.append(f"line {row.line}: {row.task} row {what}")
            continue
        placed.append((row, hits[0]))
    for hits_key, group in tied.items():
        # documents that share every identifying field and the answer: the k rows (by the source's index)
        # take the k documents in order, the same way for every run of the same source file
        if len({r.index for r in group}) != len(group) or len(group) > len(hits_key):
            unmatched += len(group)
            shown = ", ".join(str(r.index) for r in group[:4])
            problems.append(f"line {group[0].line}: {len(group)} rows (index {shown}"
                            f") share their fields with {len(hits_key)} documents")
            continue
        placed += list(zip(sorted(group, key=lambda r: r.index or 0), hits_key, strict=False))
    for row, hit in sorted(placed, key=lambda item: item[0].line):
        answers = result.responses.setdefault(hit, [])
        kept = lines.setdefault(hit, [])
        if len(answers) >= repeats:
            if row.response in answers:  # the same row again (e.g. a file appended twice): collapsed, counted
                duplicates += 1
                problems.append(f"line {row.line}: identical duplicate of line {kept[answers.index(row.response)]} "
                                f"for {hit[0]} doc {hit[1]} (collapsed)")
                continue
            raise _conflict(row, hit, kept, repeats, source)
        answers.append(row.response)
        kept.append(row.line)
        if row.prompt is not None:
            result.prompts.setdefault(hit, row.prompt)
    matched = sum(len(v) for v in result.responses.values())
    result.report = ImportReport(file=source, rows=total, matched=matched, unmatched=unmatched,
                                 duplicates=duplicates, unknown_task=unknown, examples=problems[:MAX_EXAMPLES])
    return result
