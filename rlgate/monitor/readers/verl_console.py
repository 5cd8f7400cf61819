"""verl's console logger: `step:N - key:value - key:value ...` lines inside whatever else the run printed.

Real console logs interleave Ray prefixes (`(main_task pid=...)`), ANSI colour codes, configuration
dumps, model prints and sampled responses that may themselves contain "step:". Only lines whose
`step:N - ` is followed by `key:value` pairs count. Older verl prints the validation before and after
training as `Initial/Final validation metrics: {...}`; those are read too (step 0 and the last step).
A malformed pair is a problem naming its line and column; the other pairs on the line are kept.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rlgate.monitor.readers import _bounds
from rlgate.monitor.readers._probe import LogProbe, LogReader
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

FORMAT = "verl_console"
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
STEP_LINE = re.compile(r"(?:^|[\s)\]])step:(\d+) - (\S+?:\S.*)$")
SNIFF = re.compile(rb"(?:^|[\s)\]])step:\d+ - [\w/@.()\-]+:-?[\d.na]")
VALIDATION = re.compile(r"(Initial|Final) validation metrics: (\{.*\})")
_WRAPPED = re.compile(r"^[A-Za-z_][\w.]*\((.*)\)$")


def sniff_bytes(head: bytes) -> bool:
    return SNIFF.search(ANSI.sub(b"", head)) is not None


def parse_value(text: str) -> float | None:
    """`0.5`, `-0.000`, `nan`, `np.float64(0.5)`, `tensor(0.5)` -> float; None when not a number."""
    text = text.strip()
    wrapped = _WRAPPED.match(text)
    if wrapped:
        text = wrapped.group(1).split(",")[0].strip()
    try:
        return float(text)
    except ValueError:
        return None


def _validation(text: str, path: Path, number: int, last_step: int | None, builder: SeriesBuilder,
                problems: list[ReadProblem]) -> None:
    match = VALIDATION.search(text)
    if match is None:
        return
    try:
        values = ast.literal_eval(match.group(2))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        problems.append(ReadProblem(str(path), "unreadable validation metrics", line=number,
                                    column=match.start(2) + 1))
        return
    if not isinstance(values, dict):
        return
    step = 0 if match.group(1) == "Initial" else (last_step if last_step is not None else 0)
    for key, value in values.items():
        # Use the key the step lines use for the same score (`val/test_score/...` or `test_score/...`), and
        # never override a value a step line gave for the same step.
        seen = builder.keys()
        name = f"val/{key}" if f"val/{key}" in seen else str(key)
        if not builder.has_point(name, step):
            builder.add_many(step, {name: value})


def _pairs(body: str, offset: int, path: Path, number: int, truncated: bool, step: int, builder: SeriesBuilder,
           problems: list[ReadProblem]) -> None:
    position = offset
    segments = body.split(" - ")
    for index, segment in enumerate(segments):
        key, sep, raw = segment.rpartition(":")
        value = parse_value(raw) if sep else None
        if key.strip() and value is not None:
            builder.add(step, key.strip(), value)
        elif truncated and index == len(segments) - 1:
            problems.append(ReadProblem(str(path), f"truncated line: the log ends inside '{segment[:40]}'",
                                        line=number, column=position + 1,
                                        fix="the earlier values on this line and every earlier line were read"))
        elif key.strip() and sep:
            builder.ignore(key.strip())
        else:
            problems.append(ReadProblem(str(path), f"malformed 'key:value' pair '{segment[:40]}'", line=number,
                                        column=position + 1, fix="the other pairs on this line were read"))
        position += len(segment) + 3


def _lines(handle: IO[bytes]) -> Iterator[bytes | None]:
    """The file's lines; None for a line over `_bounds.MAX_LINE_BYTES` that holds a `step:` metrics line (other
    long lines, a model print or a sampled response, are skipped as the reader skips all other output)."""
    limit = _bounds.MAX_LINE_BYTES
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw
            continue
        metrics = SNIFF.search(ANSI.sub(b"", raw[:4096])) is not None
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(limit + 1)
        yield None if metrics else b""


def read(path: Path) -> TrainingLog:
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    last_step: int | None = None
    validations: list[tuple[int, str]] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(_lines(handle), start=1):
            if raw is None:  # over the line limit: skipped, and named when it looks like a metrics line
                problems.append(ReadProblem(str(path), _bounds.too_long(), line=number,
                                            fix="the lines before and after it were read"))
                continue
            if b"step:" not in raw and b"validation metrics" not in raw:
                continue
            truncated = not raw.endswith(b"\n")
            text = ANSI.sub(b"", raw).decode("utf-8", errors="replace").rstrip("\r\n")
            match = STEP_LINE.search(text)
            if match is None:
                if "validation metrics" in text:
                    validations.append((number, text))
                continue
            step = int(match.group(1))
            last_step = step if last_step is None else max(last_step, step)
            _pairs(match.group(2), match.start(2), path, number, truncated, step, builder, problems)
    for number, text in validations:
        _validation(text, path, number, last_step, builder, problems)
    return builder.build(path, FORMAT, problems)


def sniff_log(probe: LogProbe) -> bool:
    """verl's `step:N - key:value` lines anywhere in the file's head (so tried after the formats that
    recognise a file by its start)."""
    return not probe.is_dir and sniff_bytes(probe.head)


LOG_FORMAT = LogReader(FORMAT, sniff_log, read, fallback=True)
