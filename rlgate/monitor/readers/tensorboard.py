"""TensorBoard event files, read with the `tensorboard` package (no TensorFlow needed).

Records come from tensorboard's `RawEventFileLoader` (TFRecord framing with CRC checks) and are
parsed as `Event` protos. Scalars may be legacy `simple_value`s or rank-0 tensors (the format newer
writers use); other summaries (histograms, images, text) are skipped. The loader stops quietly at a
truncated or corrupt record, so the bytes it consumed are compared with the file size: a shortfall
is reported as a problem naming the record and byte offset, and every record before it is kept.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

from rlgate._core.errors import MissingExtraError
from rlgate.monitor.series import ReadProblem, SeriesBuilder, TrainingLog

FORMAT = "tensorboard"
FILE_MARK = "tfevents"
_FRAMING = 16  # 8-byte length, 4-byte length CRC, payload, 4-byte payload CRC
_FLOAT_TYPES = {1: np.float32, 2: np.float64, 19: np.float16, 3: np.int32, 9: np.int64}


def sniff_bytes(head: bytes) -> bool:
    """A TFRecord starts with a little-endian length and the first Event holds `brain.Event:` version."""
    if len(head) < 12:
        return False
    (length,) = struct.unpack_from("<Q", head, 0)
    return 0 < length < 1 << 20 and b"brain.Event" in head[:64]


def event_files(path: Path) -> list[Path]:
    """The event files of a run folder (or one level below it), oldest first."""
    if path.is_file():
        return [path]
    direct = sorted(p for p in path.iterdir() if p.is_file() and FILE_MARK in p.name)
    if direct:
        return direct
    nested = sorted({p.parent for p in path.glob(f"*/*{FILE_MARK}*") if p.is_file()})
    if len(nested) == 1:
        return sorted(p for p in nested[0].iterdir() if p.is_file() and FILE_MARK in p.name)
    return []


def _tensor_scalar(tensor: Any) -> float | None:
    if tensor.float_val:
        return float(tensor.float_val[0])
    if tensor.double_val:
        return float(tensor.double_val[0])
    if tensor.half_val or tensor.int_val or tensor.int64_val:
        values = tensor.half_val or tensor.int_val or tensor.int64_val
        if tensor.dtype == 19:  # half values are stored as their uint16 bit patterns
            return float(np.array(values[0], dtype=np.uint16).view(np.float16))
        return float(values[0])
    dtype = _FLOAT_TYPES.get(tensor.dtype)
    if dtype is not None and tensor.tensor_content:
        content = np.frombuffer(tensor.tensor_content, dtype=dtype)
        return float(content[0]) if content.size == 1 else None
    return None


def read_file(path: Path, builder: SeriesBuilder, problems: list[ReadProblem]) -> None:
    try:
        from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
        from tensorboard.compat.proto import event_pb2
    except ImportError:
        raise MissingExtraError.for_extra("reading TensorBoard event files", "monitor", "tensorboard") from None
    from google.protobuf.message import DecodeError

    consumed = 0
    index = 0
    simple_kind = "simple_value"
    for index, record in enumerate(RawEventFileLoader(str(path)).Load(), start=1):
        try:
            event = event_pb2.Event.FromString(record)
        except DecodeError:
            problems.append(ReadProblem(str(path), f"record {index} is not a valid Event", record=index,
                                        fix=f"the {index - 1} records before it were read"))
            return
        consumed += len(record) + _FRAMING
        if not event.HasField("summary"):
            continue
        step = int(event.step)
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == simple_kind:
                builder.add(step, value.tag, float(value.simple_value))
            elif kind == "tensor":
                plugin = value.metadata.plugin_data.plugin_name
                if plugin and plugin != "scalars":
                    continue
                number = _tensor_scalar(value.tensor)
                if number is None:
                    builder.ignore(value.tag)
                else:
                    builder.add(step, value.tag, number)
    size = path.stat().st_size
    if consumed < size:
        problems.append(ReadProblem(
            str(path), f"truncated or corrupt record {index + 1} at byte {consumed} of {size}",
            record=index + 1, fix=f"the {index} records before it were read; a run still writing can end like this"))


def read(path: Path) -> TrainingLog:
    files = event_files(path)
    builder = SeriesBuilder()
    problems: list[ReadProblem] = []
    if not files:
        problems.append(ReadProblem(str(path), "no TensorBoard event files (events.out.tfevents.*) here",
                                    fix="point at the run folder that holds the event files"))
    for file in files:
        read_file(file, builder, problems)
    return builder.build(path, FORMAT, problems)
