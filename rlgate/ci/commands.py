"""GitHub Actions workflow commands and environment files, written the way the runner parses them.

Model and user text reaches annotations (gate reasons, metric names), so every value is escaped
exactly as `@actions/core` does (`rlgate._core.text.workflow_data` / `workflow_property`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TextIO

from rlgate._core.text import workflow_data, workflow_property

AnnotationLevel = Literal["error", "warning", "notice"]
#: GitHub rejects a step summary over 1 MiB; stay under it with room for the truncation note.
SUMMARY_LIMIT_BYTES = 1_000_000


def annotation(
    level: AnnotationLevel,
    message: str,
    *,
    title: str | None = None,
    file: str | None = None,
    line: int | None = None,
) -> str:
    """One `::error title=...::message` line for the job log, which GitHub turns into an annotation."""
    props: list[str] = []
    if title:
        props.append(f"title={workflow_property(title)}")
    if file:
        props.append(f"file={workflow_property(file)}")
        if line is not None:
            props.append(f"line={line}")
    head = f"::{level}"
    if props:
        head += " " + ",".join(props)
    return f"{head}::{workflow_data(message)}"


def emit(line: str, stream: TextIO) -> None:
    """Print one workflow command on its own line."""
    stream.write(line + "\n")
    stream.flush()


def write_outputs(outputs: Mapping[str, str], env: Mapping[str, str] | None = None) -> bool:
    """Append step outputs to `$GITHUB_OUTPUT`; return False when not running under Actions.

    Uses the delimiter form (`name<<DELIM`) for every value, so a value holding a newline cannot
    forge another output.
    """
    path = (env if env is not None else os.environ).get("GITHUB_OUTPUT")
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            if delimiter in value or delimiter in name:
                raise ValueError(f"output {name!r} contains its own delimiter")
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return True


def truncate_summary(markdown: str, note: str, limit: int = SUMMARY_LIMIT_BYTES) -> str:
    """Cut Markdown to fit GitHub's step-summary limit, on a line boundary, ending with `note`."""
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown
    room = limit - len(note.encode("utf-8")) - 2
    cut = data[:room].decode("utf-8", errors="ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    return cut + "\n" + note + "\n"


def append_summary(markdown: str, env: Mapping[str, str] | None = None) -> Path | None:
    """Append Markdown to `$GITHUB_STEP_SUMMARY`; return the file, or None outside Actions."""
    path = (env if env is not None else os.environ).get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return Path(path)
