"""Images of local VLM data: resolved from the rows, checked before model time, resized by the image protocol.

lm-eval's image tasks (chartqa, mmmu_val) read images from Hugging Face datasets, where a column
holds decoded pictures. Local `data_files` hold paths instead (JSON plus an image folder), or
`{"bytes", "path"}` records (parquet written by `datasets`). rlgate wraps the task's own
`doc_to_image` so the same columns are read, then opens each reference relative to the data file,
and applies the contract's image protocol (`max_pixels`, `image_resolution`, `preserve_aspect_ratio`)
itself, so every backend (hf-multimodal, vllm-vlm) sees the same pixels and the protocol is one
setting, not a backend option with backend-specific meaning.

Live runs do not decode either when lm-eval builds its requests (it builds every request of a task
up front, which would hold every picture at once: 3.2 GB at 10,000 320x240 charts): each request
carries a `LazyImage`, and the caching LM decodes a chunk's images just before the backend needs
them and drops them after. For imported responses (`--responses`) only the references travel.
Either way a 10,000-image suite runs in bounded memory (bench/bench_vlm_memory.py).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rlgate._core.errors import InputError
from rlgate.contract.models import ImageProtocol

ImageFn = Callable[[dict[str, Any]], Any]
_MMMU_ID = re.compile(r"^[a-z]+_(?P<subject>.+)_\d+$")


def image_columns(doc_to_image: Any) -> list[str] | None:
    """The columns a task's doc_to_image names, when it names them (None for a function)."""
    if isinstance(doc_to_image, str):
        return [doc_to_image]
    if isinstance(doc_to_image, list) and all(isinstance(c, str) for c in doc_to_image):
        return list(doc_to_image)
    return None


def raw_images(doc_to_image: Any, doc: dict[str, Any]) -> list[Any]:
    """The image references of one document, as the task's own doc_to_image picks them."""
    columns = image_columns(doc_to_image)
    if columns is not None:
        return [doc.get(c) for c in columns if doc.get(c) is not None]
    value = doc_to_image(doc)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def resize(image: Any, protocol: ImageProtocol) -> Any:
    """Apply the image protocol: cap the longest side (or force a square), then cap the pixel count."""
    width, height = image.size
    if protocol.image_resolution is not None:
        side = protocol.image_resolution
        if not protocol.preserve_aspect_ratio:
            width, height = side, side
        elif max(width, height) > side:
            scale = side / max(width, height)
            width, height = max(1, round(width * scale)), max(1, round(height * scale))
    if protocol.max_pixels is not None and width * height > protocol.max_pixels:
        scale = math.sqrt(protocol.max_pixels / (width * height))
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    if (width, height) != image.size:
        from PIL import Image

        image = image.resize((width, height), Image.Resampling.BICUBIC)
    return image


def _open(ref: Any, base: Path) -> Any:
    """A loaded (file closed) RGB PIL image from a path, a {bytes, path} record or a PIL image."""
    from PIL import Image

    if isinstance(ref, Image.Image):
        return ref.convert("RGB")
    if isinstance(ref, dict) and ref.get("bytes"):
        with Image.open(io.BytesIO(ref["bytes"])) as im:
            return im.convert("RGB")
    path = ref.get("path") if isinstance(ref, dict) else ref
    file = (base / str(path)).resolve()
    with Image.open(file) as im:
        return im.convert("RGB")


class LazyImage:
    """One local image, decoded and resized by the image protocol only when its pixels are needed.

    `load()` returns a fresh PIL image each time (nothing is kept), so requests can hold these by
    the thousand; `content_key()` is the cache key of the pixels (the same one a decoded image
    gets), computed once and kept (a few bytes).
    """

    __slots__ = ("_key", "base", "protocol", "ref")

    def __init__(self, ref: Any, base: Path, protocol: dict[str, Any]) -> None:
        self.ref, self.base, self.protocol = ref, base, protocol
        self._key: dict[str, Any] | None = None

    def load(self) -> Any:
        return resize(_open(self.ref, self.base), ImageProtocol.model_validate(self.protocol))

    def content_key(self) -> dict[str, Any]:
        if self._key is None:
            self._key = pixel_key(self.load())
        return self._key

    def __repr__(self) -> str:
        return f"<image {_reference(self.ref)}>"


def pixel_key(image: Any) -> dict[str, Any]:
    """What identifies an image's pixels in a request hash (a PIL repr carries a memory address)."""
    return {"image_sha256": hashlib.sha256(image.tobytes()).hexdigest(), "size": list(image.size), "mode": image.mode}


def materialize(value: Any) -> Any:
    """Request arguments with every LazyImage decoded (for the backend, one chunk at a time)."""
    if isinstance(value, LazyImage):
        return value.load()
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(materialize(v) for v in value)
    return value


def has_lazy_images(value: Any) -> bool:
    if isinstance(value, LazyImage):
        return True
    if isinstance(value, dict):
        return any(has_lazy_images(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_lazy_images(v) for v in value)
    return False


def load_images(doc_to_image: Any, base: str, protocol: dict[str, Any], decode: bool,
                doc: dict[str, Any]) -> list[Any]:
    """doc_to_image for local data (bound with functools.partial, so task hashes stay stable).

    Live runs get LazyImages (decoded per chunk by the caching LM); imported responses get the references.
    """
    refs = raw_images(doc_to_image, doc)
    if not decode:
        return [_reference(r) for r in refs]
    return [LazyImage(r, Path(base), protocol) for r in refs]


def _reference(ref: Any) -> str:
    if isinstance(ref, dict):
        return str(ref.get("path") or "<embedded image>")
    return str(ref) if not hasattr(ref, "size") else "<embedded image>"


def select_mmmu_subject(subject: str, dataset: Any) -> Any:
    """process_docs for an mmmu_val_<subject> leaf over one local file holding every subject."""
    def keep(row: dict[str, Any]) -> bool:
        match = _MMMU_ID.match(str(row.get("id", "")))
        return match is not None and match.group("subject") == subject

    return dataset.filter(keep)


# --------------------------------------------------------------------------- checks before model time
def check_images(task: str, doc_to_image: Any, docs: Iterable[dict[str, Any]], base: Path, data_file: str,
                 field: str) -> int:
    """Every image of every document exists and decodes; returns the count. Raises InputError on the first bad one.

    Each image is opened and verified, then dropped, so checking 10,000 images holds one at a time.
    """
    from PIL import Image, UnidentifiedImageError

    columns = image_columns(doc_to_image)
    checked = 0
    for index, doc in enumerate(docs):
        if columns is not None:
            absent = [c for c in columns if c not in doc]
            if absent:
                present = ", ".join(sorted(doc)[:8])
                raise InputError(f"task '{task}': the data has no image column '{absent[0]}' (row {index} has: "
                                 f"{present})", file=data_file, field=field,
                                 fix=f"add a '{absent[0]}' field holding the image path (relative to the data file) "
                                     "to every row, or rename your image column to it")
        try:
            refs = raw_images(doc_to_image, doc)
        except KeyError as exc:
            raise InputError(f"task '{task}': row {index} lacks the image field {exc}", file=data_file, field=field,
                             fix="every row needs the image columns the task reads (image_1 ... for mmmu)") from None
        if not refs:
            raise InputError(f"task '{task}': row {index} has no image", file=data_file, field=field,
                             fix="give every row an image path relative to the data file")
        for ref in refs:
            if isinstance(ref, Image.Image):
                checked += 1
                continue
            where = (base / str(ref.get("path") if isinstance(ref, dict) else ref)).resolve()
            if not (isinstance(ref, dict) and ref.get("bytes")) and not where.is_file():
                raise InputError(f"task '{task}': row {index} names image '{_reference(ref)}', which does not exist "
                                 f"(looked for {where})", file=data_file, field=field,
                                 fix="image paths are relative to the data file's folder; copy the image there or "
                                     "fix the path in the row")
            try:
                source = io.BytesIO(ref["bytes"]) if isinstance(ref, dict) and ref.get("bytes") else where
                with Image.open(source) as im:
                    im.verify()
            except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
                raise InputError(f"task '{task}': image '{_reference(ref)}' (row {index}) is corrupt or not an image "
                                 f"({type(exc).__name__}: {str(exc)[:120]})", file=str(where), field=field,
                                 fix="re-export the image as PNG or JPEG, or remove the row") from None
            checked += 1
    return checked
