"""Where contamination texts come from: training files (streamed) and eval documents.

Training files are JSONL (any strings in each object, or one named field), plain text (one
document per line), optionally gzip-compressed. Eval documents come from a task's local data
files (`data_files:` in the suite) or from the documents logged in an lm-eval output folder.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rlgate._core.errors import InputError
from rlgate.results.models import DocId

#: Fields that hold the question text of common tasks, best first (answers are not the eval's input).
_FAMILY_FIELDS = {"gsm8k": ("question",), "ifeval": ("prompt",)}
_GENERIC_FIELDS = ("question", "prompt", "problem", "input", "query", "instruction", "text", "sentence", "context")
_SPLIT_PREFERENCE = ("test", "validation", "eval", "dev", "train")


@dataclass
class EvalDoc:
    """One evaluation document's text, with where it came from."""

    task: str
    doc_id: DocId
    text: str
    private: bool = False
    leaf: str | None = None  # the lm-eval subtask, when the task is a group


@dataclass
class LineStats:
    """What a training file contributed, and the lines that could not be read."""

    path: str
    lines: int = 0
    malformed: int = 0
    first_malformed: int | None = None
    texts: int = field(default=0)


def _open_text(path: Path) -> IO[str]:
    if not path.is_file():
        raise InputError("training file does not exist", file=str(path), fix="check the --train path")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def _field(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _is_json(path: Path) -> bool:
    suffixes = [s for s in path.suffixes if s != ".gz"]
    return bool(suffixes) and suffixes[-1] in (".jsonl", ".json", ".ndjson")


def _text_of(obj: Any, text_field: str | None) -> str:
    if text_field is not None:
        obj = _field(obj, text_field)
    if isinstance(obj, str):
        return obj
    if isinstance(obj, dict):
        flat = [v for v in obj.values() if type(v) is str]
        if len(flat) != len(obj):
            flat = []
            _strings(obj, flat)
        return " ".join(flat)
    parts: list[str] = []
    _strings(obj, parts)
    return " ".join(parts)


def _decode_json_lines(lines: list[str], numbers: list[int], stats: LineStats) -> list[tuple[int, Any]]:
    """Decode many JSONL lines with one json.loads call; fall back to line by line when one is malformed."""
    try:
        return list(zip(numbers, json.loads("[" + ",".join(lines) + "]"), strict=True))
    except ValueError:
        pass
    out: list[tuple[int, Any]] = []
    for number, line in zip(numbers, lines, strict=True):
        try:
            out.append((number, json.loads(line)))
        except ValueError:
            stats.malformed += 1
            stats.first_malformed = stats.first_malformed or number
    return out


_BINARY_SUFFIXES = (".parquet", ".arrow", ".feather")


def _refuse_binary(path: Path) -> None:
    """Parquet/Arrow training data (verl's own format) read as text is noise that matches nothing: refuse it."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        magic = handle.read(6)
    if path.suffix.lower() in _BINARY_SUFFIXES or magic[:4] == b"PAR1" or magic == b"ARROW1":
        raise InputError("parquet/Arrow training files are not read by the contamination check (read as text they "
                         "would match nothing)", file=str(path), field="contamination.train_files",
                         fix="export the training texts to JSONL (e.g. datasets' to_json) and pass that file")


def training_chunks(path: Path, text_field: str | None, stats: LineStats,
                    chunk_chars: int = 1 << 20) -> Iterator[tuple[list[str], list[int]]]:
    """(texts, 1-based line numbers) in chunks of about `chunk_chars` characters of file.

    JSON lines (`.jsonl`, `.json`, `.ndjson`, optionally `.gz`) give all their strings or `text_field`
    (dotted path); other files give each non-empty line. Malformed JSON lines are counted and skipped.
    """
    _refuse_binary(path)
    as_json = _is_json(path)
    line_no = 0
    with _open_text(path) as handle:
        while True:
            block = handle.readlines(chunk_chars)
            if not block:
                break
            first = line_no + 1
            line_no += len(block)
            stats.lines = line_no
            kept = [(first + i, line) for i, line in enumerate(block) if line.strip()]
            if not kept:
                continue
            numbers = [n for n, _ in kept]
            lines = [line for _, line in kept]
            if not as_json:
                yield lines, numbers
                continue
            decoded = _decode_json_lines(lines, numbers, stats)
            pairs = [(n, _text_of(obj, text_field)) for n, obj in decoded]
            pairs = [(n, t) for n, t in pairs if t]
            if pairs:
                yield [t for _, t in pairs], [n for n, _ in pairs]


def doc_text(family: str, doc: dict[str, Any]) -> str:
    """The text of an eval document that training data must not contain (its input, not its answer)."""
    if family == "mmlu_pro" and isinstance(doc.get("question"), str):
        options = doc.get("options") or []
        return " ".join([doc["question"], *[str(o) for o in options if o is not None]])
    for name in (*_FAMILY_FIELDS.get(family, ()), *_GENERIC_FIELDS):
        value = doc.get(name)
        if isinstance(value, str) and value.strip():
            return value
    parts: list[str] = []
    _strings(doc, parts)
    return " ".join(parts)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError("task data file does not exist", file=str(path), fix="fix data_files in the suite")
    if path.suffix == ".parquet":
        raise InputError("parquet data files are not read by the contamination check", file=str(path),
                         fix="convert the file to JSONL, or pass --results with an lm-eval run of the task")
    rows: list[dict[str, Any]] = []
    with _open_text(path) as handle:
        if [s for s in path.suffixes if s != ".gz"][-1:] == [".json"]:
            try:
                data = json.load(handle)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
            data = data.get("data", data) if isinstance(data, dict) else data
            return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=str(path), line=number, column=exc.colno) from None
            if isinstance(row, dict):
                rows.append(row)
    return rows


def data_file_for(data_files: str | dict[str, str]) -> str:
    """The evaluated split's file: the test split when there are several."""
    if isinstance(data_files, str):
        return data_files
    for split in _SPLIT_PREFERENCE:
        if split in data_files:
            return data_files[split]
    return next(iter(data_files.values()))


def docs_from_data_file(task: str, family: str, path: Path, private: bool) -> list[EvalDoc]:
    """Eval documents from a local data file, doc_id = row index as lm-eval numbers them."""
    return [EvalDoc(task, i, doc_text(family, row), private) for i, row in enumerate(_read_rows(path))]
