"""`rlgate demo`: build the demo (data, contract, checkpoints) and run the real `check` on it, offline."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rlgate.demo.build import DemoPaths, DemoSettings, build
from rlgate.harness.base import ProgressSink
from rlgate.orchestrate import CheckResult, check


def offline_environment() -> None:
    """The demo needs nothing from the network: say so to every Hugging Face library."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(name, "1")


#: What the demo needs beyond rlgate's core: the `hf` and `ifeval` extras.
DEMO_MODULES = ("torch", "transformers", "tokenizers", "lm_eval", "nltk", "punkt", "langdetect", "immutabledict")


def check_requirements() -> None:
    """Fail with the install command, not a traceback, when an extra the demo needs is missing."""
    import importlib.util

    from rlgate._core.errors import InputError, install_hint

    missing = [m for m in DEMO_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise InputError(f"the demo needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
                         "installed", fix=install_hint("hf,ifeval"))


def run_demo(out: Path, *, settings: DemoSettings | None = None, progress: ProgressSink | None = None,
             log: Callable[[str], None] = print) -> tuple[DemoPaths, CheckResult]:
    """Build what is missing under `out`, then check the candidate against the baseline into `out/report`."""
    check_requirements()
    offline_environment()
    settings = settings or DemoSettings()
    import torch

    torch.set_num_threads(settings.threads)
    paths = build(out, settings, log=log)
    result = check(paths.contract, str(paths.candidate), paths.root / "report", cache_dir=paths.root / "cache",
                   progress=progress)
    return paths, result
