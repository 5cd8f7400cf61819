"""Set deepeval's environment before it is imported: no telemetry, no `.env` autoloading, files in the run folder.

deepeval reads these once, at import: `DEEPEVAL_TELEMETRY_OPT_OUT` (config/settings.py, telemetry),
`DEEPEVAL_DISABLE_DOTENV` (settings.autoload_dotenv, called from deepeval/__init__), and
`DEEPEVAL_CACHE_FOLDER` (constants.HIDDEN_DIR, its local cache/results folder) plus `DEEPEVAL_HOME`
(telemetry identity, default ~/.deepeval). Once deepeval is imported in a process its folder is
fixed, so the report records the folder actually in use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rlgate._core.errors import MissingExtraError

FORCED = {"DEEPEVAL_TELEMETRY_OPT_OUT": "1", "DEEPEVAL_DISABLE_DOTENV": "1",
          "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0"}
DEFAULT_FOLDER = Path.home() / ".cache" / "rlgate" / "deepeval"


def set_deepeval_env(folder: Path | None = None) -> None:
    """Switch off telemetry and dotenv loading; point deepeval's folders at `folder` (if not yet imported)."""
    os.environ.update(FORCED)
    if "deepeval" in sys.modules:
        return
    target = folder if folder is not None else Path(os.environ.get("DEEPEVAL_CACHE_FOLDER") or DEFAULT_FOLDER)
    target.mkdir(parents=True, exist_ok=True)
    os.environ["DEEPEVAL_CACHE_FOLDER"] = str(target)
    os.environ["DEEPEVAL_HOME"] = str(target)


def prepare_deepeval(folder: Path | None = None) -> str:
    """Set the environment, import deepeval, and return the folder deepeval really uses."""
    set_deepeval_env(folder)
    try:
        import deepeval.constants
    except ImportError as exc:
        raise MissingExtraError.for_extra("the LLM judge", "judge", "deepeval") from exc
    return str(Path(deepeval.constants.HIDDEN_DIR).resolve())
