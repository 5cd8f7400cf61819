"""Copy a whole history between backends (`rlgate history --export FILE` / `--import FILE`), losing nothing."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from rlgate._core.errors import InputError
from rlgate._core.files import write_text_atomic
from rlgate.store.protocol import HistoryStore
from rlgate.store.records import HISTORY_SCHEMA_VERSION, CheckpointRecord, CounterRecord


class HistoryExport(BaseModel):
    """Every checkpoint and counter of one history, as written by --export."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = HISTORY_SCHEMA_VERSION
    checkpoints: list[CheckpointRecord]
    counters: list[CounterRecord]


def export_history(store: HistoryStore, path: Path) -> tuple[int, int]:
    checkpoints, counters = store.dump()
    # json, not model_dump_json: pydantic writes a NaN or infinite metric as null, which no import accepts back
    text = json.dumps(HistoryExport(checkpoints=checkpoints, counters=counters).model_dump(), indent=1,
                      allow_nan=True, ensure_ascii=False)
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise InputError(f"cannot write the export: {exc.strerror or exc}", file=path, field="--export",
                         fix="name a file in a writable folder, e.g. --export history.json") from None
    return len(checkpoints), len(counters)


def import_history(store: HistoryStore, path: Path) -> tuple[int, int]:
    """Load an export in one transaction (checkpoints upserted, counters take the larger value)."""
    try:
        data = HistoryExport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise InputError(f"{path} does not exist", file=path, fix="pass a file written by rlgate history --export") \
            from None
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
        raise InputError(f"not a history export: {str(exc).splitlines()[0]}", file=path,
                         fix="pass a file written by rlgate history --export") from None
    except OSError as exc:
        raise InputError(f"cannot read the export: {exc.strerror or exc}", file=path, field="--import",
                         fix="pass a file written by rlgate history --export") from None
    if data.schema_version > HISTORY_SCHEMA_VERSION:
        raise InputError(f"the export has schema version {data.schema_version}; this rlgate reads up to "
                         f"{HISTORY_SCHEMA_VERSION}", file=path, fix="upgrade rlgate")
    store.load(data.checkpoints, data.counters)
    return len(data.checkpoints), len(data.counters)
