"""Predictions written by lmms-eval or VLMEvalKit, converted into the rows `rlgate eval --responses` scores.

rlgate never re-scores with another tool's metric: it turns each stored prediction into
`{"task", "doc_id" | "doc", "response", "target"}` and lm-eval's own task (filters and metric
functions) scores it. `target` is the other tool's reference answer; the importer checks it against
the task's `doc_to_target`, so a row that lands on the wrong document (another data order or copy)
is reported, never scored. The mapping per format and task is in the README ("Importing lmms-eval
and VLMEvalKit predictions"). Files are read row by row and the output is streamed to disk.

lmms-eval (`lmms_eval --log_samples`): `<date>_samples_<task>.jsonl`, one row per document with
`doc_id`, `target`, `resps` (raw) or only `filtered_resps` (when equal), and the task's
per-sample metric values (MMMU's `mmmu_acc.id`, MathVista's `*.question_id`); releases before
Sept. 2024 wrote `<name>.json` with `{"args", "logs": [rows that still hold "doc"]}`.

VLMEvalKit (`run.py`): `<model>_<dataset>.xlsx` (or .tsv / .csv / .json with PRED_FORMAT), the
dataset's TSV columns (`index`, `question`, `answer`, `category`, `split`, ...) plus `prediction`.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from rlgate._core.errors import InputError, MissingExtraError
from rlgate._core.jsonio import MAX_LINE_BYTES, iter_jsonl, load_document
from rlgate.harness.base import ConvertReport

FORMATS = ("lmms-eval", "vlmevalkit", "opencompass")
#: lm-eval's chartqa and rlgate's mathvista_testmini read the answer after this marker; lmms-eval and
#: VLMEvalKit prompt for a bare answer instead (see `--answer-marker`).
MARKER = "Final Answer:"
MARKER_TASKS = ("chartqa", "mathvista_testmini")
_MARKER_RE = re.compile(r"final answer\s*:", re.IGNORECASE)
#: VLMEvalKit dataset name -> (lm-eval task, the document field its `question` column matches)
VLMEVALKIT_DATASETS = {"ChartQA_TEST": ("chartqa", "query"), "MMMU_DEV_VAL": ("mmmu_val", "question"),
                       "MathVista_MINI": ("mathvista_testmini", "question")}
#: the lm-eval document field each task's question text lives in, for VLMEvalKit files named by --task
QUESTION_FIELD = {"chartqa": "query", "mmmu_val": "question", "mathvista_testmini": "question"}
#: VLMEvalKit's ChartQA `split` -> the HF ChartQA document's `human_or_machine` (0 human-written, 1 augmented)
CHARTQA_SPLITS = {"human": 0, "augmented": 1, "machine": 1}




def lmms_task(name: str) -> str:
    """lmms-eval task name -> lm-eval / rlgate task name (its prompt variants share one document set)."""
    if name.startswith("mathvista_testmini"):
        return "mathvista_testmini"
    if name.startswith("mmmu_val"):
        return "mmmu_val"
    return name


def _task_from_samples_name(path: Path) -> str | None:
    match = re.search(r"_samples_(.+)$", path.stem)
    return match.group(1) if match else None


def _responses(value: Any) -> list[str]:
    """lmms-eval's resps / filtered_resps: a string, a list of strings, or lists of them (one per request)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _responses(item)]
    return []


def _metric_value(row: dict[str, Any], key: str) -> Any:
    """A value lmms-eval's per-sample metric dicts carry (MMMU `mmmu_acc.id`, MathVista `*.question_id`)."""
    for value in row.values():
        if isinstance(value, dict) and key in value:
            return value[key]
    return None


def lmms_rows(path: Path, task: str | None) -> Iterator[tuple[int, dict[str, Any], list[str]]]:
    """(line or log number, identity {"task", "doc_id"|"doc", "target"}, responses) per lmms-eval sample."""
    legacy = _legacy_logs(path)
    if legacy is not None:
        source_task, logs = legacy
        name = task or source_task
        if name is None:
            raise InputError("this lmms-eval log does not say which task it holds (args.tasks names several)",
                             file=path, field="args.tasks", fix="pass --task NAME (e.g. --task chartqa)")
        rows: Iterator[tuple[int, Any]] = ((n + 1, row) for n, row in enumerate(logs))
        where = "log entry"
    else:
        name = task or _task_from_samples_name(path)
        if name is None:
            raise InputError("cannot tell the task from the file name (lmms-eval writes <date>_samples_<task>.jsonl)",
                             file=path, fix="pass --task NAME (e.g. --task chartqa)")
        rows = iter_jsonl(path, fix="lmms-eval samples files hold one JSON object per line")
        where = "line"
    mapped = lmms_task(name)
    for number, row in rows:
        def bad(message: str, key: str, number: int = number) -> InputError:
            return InputError(message if where == "line" else f"{where} {number}: {message}", file=path,
                              line=number if where == "line" else None,
                              field=key, fix="convert the samples file lmms-eval wrote with --log_samples, unedited "
                              "(rows hold doc_id, target and resps or filtered_resps)")

        if not isinstance(row, dict):
            raise bad("a sample must be a JSON object", "doc_id")
        doc_id = row.get("doc_id")
        if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
            raise bad("'doc_id' is missing or not a non-negative integer", "doc_id")
        key = "resps" if "resps" in row else "filtered_resps"
        responses = _responses(row.get(key))
        if key not in row or not responses:
            raise bad("no response: neither 'resps' nor 'filtered_resps' holds text", key)
        identity: dict[str, Any] = {"task": mapped, "doc_id": doc_id}
        raw_doc = row.get("doc")
        doc: dict[str, Any] = raw_doc if isinstance(raw_doc, dict) else {}
        if mapped == "mmmu_val":  # lm-eval splits MMMU into 30 subject tasks: the document id finds the subject
            mmmu_id = doc.get("id") or _metric_value(row, "id")
            if not isinstance(mmmu_id, str):
                raise bad("an MMMU sample needs the document id (mmmu_acc.id, e.g. validation_Art_1) to find its "
                          "subject task", "mmmu_acc")
            identity = {"task": mapped, "doc": {"id": mmmu_id}}
        elif mapped == "mathvista_testmini":
            pid = doc.get("pid") or _metric_value(row, "question_id")
            if pid is not None:
                identity = {"task": mapped, "doc": {"pid": str(pid)}}
        if row.get("target") is not None:
            identity["target"] = str(row["target"])
        yield number, identity, responses


def _legacy_logs(path: Path) -> tuple[str | None, list[Any]] | None:
    """lmms-eval < 0.2.3 wrote one JSON document {"args", "logs"} per task; None for a JSONL samples file."""
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip()
    if not head.startswith(b"{") or (b'"args"' not in head and b'"logs"' not in head):
        return None
    try:
        data = load_document(path, fix="")
    except InputError:  # broken JSON, bytes or numbers: the line-by-line reading locates them
        return None  # a JSONL file whose first row mentions "args": read line by line
    if not isinstance(data, dict) or not isinstance(data.get("logs"), list):
        return None
    args = data.get("args")
    tasks = str(args.get("tasks") or "") if isinstance(args, dict) else ""
    return (tasks if tasks and "," not in tasks else None), data["logs"]


# --------------------------------------------------------------------------- VLMEvalKit
def _dataset_of(path: Path) -> str | None:
    return next((name for name in VLMEVALKIT_DATASETS if path.stem.endswith(name)), None)


@contextlib.contextmanager
def _restored_field_limit(previous: int) -> Iterator[None]:
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _table(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(spreadsheet row number, row) of a VLMEvalKit result file; the header is row 1."""
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        yield from _xlsx(path)
    elif suffix in (".tsv", ".csv"):
        # a cell past the limit is csv.Error: one located error, not a traceback; the limit is process-wide (the
        # monitor's CSV readers keep csv's own), so it is put back when the table is read
        previous = csv.field_size_limit(MAX_LINE_BYTES)
        with path.open(encoding="utf-8", newline="") as handle, _restored_field_limit(previous):
            reader = csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ",")
            number = 1
            try:
                for number, row in enumerate(reader, start=2):
                    yield number, dict(row)
            except UnicodeDecodeError:
                fix = "re-export the file as UTF-8, as VLMEvalKit writes it (or pass the .xlsx)"
                raise InputError("is not UTF-8 text", file=path, fix=fix) from None
            except csv.Error as exc:
                raise InputError(f"not a readable table ({exc})", file=path, line=number + 1,
                                 fix="give the .tsv / .csv VLMEvalKit wrote, unedited (or the .xlsx)") from None
    elif suffix == ".json":
        data = load_document(path, fix="VLMEvalKit's .json result is a list of row objects, as UTF-8 JSON")
        if not isinstance(data, list):
            raise InputError("a VLMEvalKit .json result is a list of row objects", file=path,
                             fix="convert the file VLMEvalKit wrote with PRED_FORMAT=json, unedited")
        for number, row in enumerate(data, start=2):
            yield number, row if isinstance(row, dict) else {}
    else:
        raise InputError(f"unsupported VLMEvalKit result file type '{path.suffix}'", file=path,
                         fix="give the .xlsx (default), .tsv, .csv or .json file VLMEvalKit wrote")


def _xlsx(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        from openpyxl import load_workbook
    except ImportError:
        raise MissingExtraError.for_extra("a VLMEvalKit .xlsx result", "vlm", "openpyxl") from None
    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile/KeyError/InvalidFileException on a broken workbook
        raise InputError(f"cannot read the workbook ({type(exc).__name__}: {str(exc)[:120]})", file=path,
                         fix="re-export it from VLMEvalKit, or run it with PRED_FORMAT=tsv") from None
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        header = [str(c) if c is not None else "" for c in next(rows, ())]
        for number, values in enumerate(rows, start=2):
            yield number, dict(zip(header, values, strict=False))
    finally:
        book.close()


def _cell(value: Any) -> str | None:
    """A spreadsheet cell as text; numbers keep their shortest form (42.0 -> "42"); empty -> None."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    return text if text.strip() else None


def vlmevalkit_rows(path: Path, task: str | None) -> Iterator[tuple[int, dict[str, Any], list[str]]]:
    """(spreadsheet row, identity, [prediction]) per VLMEvalKit result row; MMMU's dev split is skipped."""
    dataset = _dataset_of(path)
    if task is None and dataset is None:
        known = ", ".join(VLMEVALKIT_DATASETS)
        raise InputError(f"cannot tell the dataset from the file name (VLMEvalKit writes <model>_<dataset>.xlsx; "
                         f"known: {known})", file=path, fix="pass --task NAME (chartqa, mmmu_val, mathvista_testmini)")
    name, question_field = (task, QUESTION_FIELD.get(task, "question")) if task else VLMEVALKIT_DATASETS[str(dataset)]
    columns: list[str] | None = None
    for number, row in _table(path):
        if columns is None:
            columns = list(row)
            absent = [c for c in ("question", "prediction") if c not in row]
            if absent:
                raise InputError(f"column '{absent[0]}' is missing (columns: {', '.join(columns[:12])})",
                                 file=path, field=absent[0],
                                 fix="convert the result file VLMEvalKit wrote (it adds 'prediction' to the "
                                     "dataset's columns index, question, answer, ...), unedited")
        if str(row.get("split") or "").lower() == "dev" and name == "mmmu_val":
            yield number, {}, []  # MMMU's dev split is not part of lm-eval's mmmu_val
            continue
        question, prediction = _cell(row.get("question")), _cell(row.get("prediction"))
        if question is None:
            raise InputError(f"row {number}: 'question' is empty", file=path, line=number, field="question",
                             fix="every result row needs the question it answers; re-export the file")
        mmmu_id, subject = _cell(row.get("id")), _cell(row.get("category"))
        doc: dict[str, Any] = {"id": mmmu_id} if name == "mmmu_val" and mmmu_id else {question_field: question}
        split = str(_cell(row.get("split")) or "").lower()
        if name == "chartqa" and split in CHARTQA_SPLITS:  # ChartQA's human / augmented questions
            doc["human_or_machine"] = CHARTQA_SPLITS[split]
        # MMMU's `category` is the subject (Art_Theory): the row is matched within lm-eval's subject task
        leaf = f"mmmu_val_{subject.lower().replace(' ', '_')}" if name == "mmmu_val" and subject else name
        identity: dict[str, Any] = {"task": leaf, "doc": doc}
        answer = _cell(row.get("answer"))
        if answer is not None:
            identity["target"] = answer
        index = _cell(row.get("index"))
        if index is not None and index.lstrip("-").isdigit():
            identity["index"] = int(index)  # places rows that share question and answer with other documents
        yield number, identity, [prediction or ""]


# --------------------------------------------------------------------------- writing
def convert(files: list[Path], fmt: str, out: Path, *, task: str | None = None,
            answer_marker: bool = False) -> ConvertReport:
    """Convert every file into one responses JSONL at `out` (written whole or not at all)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format '{fmt}'", field="--from", fix=f"use one of: {', '.join(FORMATS)}")
    if out.is_dir():
        raise InputError("is a folder", file=out, field="--out", fix="name the responses file to write, e.g. "
                         "--out responses.jsonl")
    report = ConvertReport(marker=MARKER)
    partial = out.with_name(out.name + ".partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for path in files:
            _refuse_other_format(path, fmt)
        if fmt == "opencompass":
            from rlgate.harness.lmeval.opencompass import prediction_files

            files = [f for path in files for f in prediction_files(path)]
        with partial.open("w", encoding="utf-8") as handle:
            for path in files:
                if not path.is_file():
                    raise InputError("file does not exist", file=path, fix="check the path")
                _write_file(handle, path, fmt, task, answer_marker, report)
        if not sum(report.rows.values()):
            raise InputError("no predictions found", file=files[0] if files else None,
                             fix="give the lmms-eval samples file or VLMEvalKit result file of a finished run")
        partial.replace(out)
    except OSError as exc:
        raise InputError(f"cannot write the responses file ({exc.strerror or exc})", file=out, field="--out",
                         fix="choose a writable path for --out") from None
    finally:
        with contextlib.suppress(OSError):  # nothing was written where nothing could be
            partial.unlink(missing_ok=True)
    return report


def _refuse_other_format(path: Path, fmt: str) -> None:
    """A file whose names say it is another tool's output is refused as that, not misread as `fmt`."""
    from rlgate.harness.detect import import_format

    if not path.exists():
        return
    seen = import_format(path)
    if seen is not None and seen[0] != fmt:
        raise InputError(f"not {fmt} output: this looks like {seen[1]}", file=path, field="--from",
                         fix=f"convert it with --from {seen[0]}")


def _write_file(handle: TextIO, path: Path, fmt: str, task: str | None, answer_marker: bool,
                report: ConvertReport) -> None:
    if fmt == "opencompass":
        from rlgate.harness.lmeval.opencompass import benchmark_version, dataset_of, opencompass_rows

        rows = opencompass_rows(path, task)
        abbr, mapped = dataset_of(path)
        name = task or mapped or abbr
        report.versions[name] = benchmark_version(path)  # OpenCompass's dataset config
        report.notes.append(f"{name}: OpenCompass generated these responses from its own prompt (dataset config "
                            f"{report.versions[name]}), which lm-eval's '{name}' task only re-scores; `rlgate eval "
                            "--responses` compares each recorded prompt with lm-eval's and warns where they differ "
                            "(the responses then answer another input than an lm-eval run of the task)")
    else:
        rows = lmms_rows(path, task) if fmt == "lmms-eval" else vlmevalkit_rows(path, task)
    checked: set[str] = set()
    for number, identity, responses in rows:
        if identity.get("task") and identity["task"] not in checked:
            _require_scorable(identity["task"], path, fmt, number)
            checked.add(identity["task"])
        if not responses:
            report.skipped["MMMU dev split (not in mmmu_val)"] += 1
            continue
        for response in responses:
            if identity["task"] in MARKER_TASKS and not _MARKER_RE.search(response):  # mmmu_val_* never
                report.bare[identity["task"]] += 1
                if answer_marker:
                    response = f"{MARKER} {response.strip()}"
            handle.write(json.dumps({**identity, "response": response}, ensure_ascii=False) + "\n")
            report.rows[lmms_task(identity["task"])] += 1


def _require_scorable(task: str, path: Path, fmt: str, line: int) -> None:
    """Refuse, at import, a file of a task no lm-eval task (built in or rlgate's) can score: otherwise the
    file converts fine and fails only at `rlgate eval`, far from the file."""
    from rlgate.harness.lmeval.tasks import _folder_for

    if _folder_for(task) is not None:
        return
    raise InputError(f"this {fmt} file answers task '{task}', which no lm-eval task rlgate knows can score "
                     "(rlgate re-scores imported responses with lm-eval's own task, never with another tool's "
                     "metric)", file=path, line=line, field="task",
                     fix="convert only files of tasks lm-eval has (e.g. chartqa, mmmu_val, mathvista_testmini, "
                         "gsm8k), or pass --task NAME naming the lm-eval task that holds the same documents")
