"""Which demo a folder belongs to: a demo writes only into a folder it created (or one it is forced into).

Every demo has its own default folder, and a marker file records which demo made a folder, so running the
demos one after another never replaces another demo's contract, checkpoints or reports (which would make
the first demo's printed re-run line gate the wrong checkpoint under the wrong contract).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from rlgate._core.errors import InputError

DemoKind = Literal["text", "agent", "vlm", "real", "capability"]
MARKER = ".rlgate-demo.json"
DEFAULT_FOLDERS: dict[DemoKind, str] = {
    "text": "rlgate-demo", "agent": "rlgate-demo-agent", "vlm": "rlgate-demo-vlm", "real": "rlgate-demo-real",
    "capability": "rlgate-demo-capability"}
FLAGS: dict[DemoKind, str] = {"text": "rlgate demo", "agent": "rlgate demo --agent", "vlm": "rlgate demo --vlm",
                              "real": "rlgate demo --real", "capability": "rlgate demo --capability"}


class DemoMarker(BaseModel):
    """The marker a demo leaves in the folder it creates."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[1] = 1
    demo: DemoKind


def folder_owner(folder: Path) -> DemoKind | None:
    """The demo that made `folder`, or None (no marker, or one that is not a demo's)."""
    try:
        return DemoMarker.model_validate_json((folder / MARKER).read_bytes()).demo
    except (OSError, ValidationError):
        return None


def claim_folder(folder: Path, demo: DemoKind, *, force: bool = False) -> Path:
    """Make `folder` this demo's, refusing a non-empty folder that another demo or command wrote (unless forced)."""
    if folder.is_dir() and any(folder.iterdir()):
        owner = folder_owner(folder)
        if owner != demo and not force:
            what = (f"holds the outputs of `{FLAGS[owner]}`" if owner is not None
                    else "is not empty and was not created by a demo")
            raise InputError(f"{what}; `{FLAGS[demo]}` would overwrite them", file=folder, field="--out",
                             fix=f"pass a new folder with --out (the default is {DEFAULT_FOLDERS[demo]}/), or "
                                 "--force to write into this one (files with the demo's names are replaced)")
    folder.mkdir(parents=True, exist_ok=True)
    if folder_owner(folder) != demo:
        (folder / MARKER).write_text(DemoMarker(demo=demo).model_dump_json() + "\n", encoding="utf-8")
    return folder
