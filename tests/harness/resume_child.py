"""Child process for the kill-and-resume test: `rlgate eval` with lm-eval's HF model instrumented.

Every request the real model is asked for, and every generate call it makes, is appended to a log
(and each call is slowed down so the parent can kill the process mid-run).
Usage: python resume_child.py LOG DELAY_S -- <rlgate eval arguments>
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    log, delay = Path(sys.argv[1]), float(sys.argv[2])
    args = sys.argv[sys.argv.index("--") + 1:]
    from lm_eval.models.huggingface import HFLM

    original_until, original_generate = HFLM.generate_until, HFLM._model_generate

    def write(event: dict[str, Any]) -> None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(event) + "\n")
            handle.flush()

    def generate_until(self: HFLM, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        for request in requests:
            write({"event": "sent", "context": request.args[0]})
        return original_until(self, requests, disable_tqdm=disable_tqdm)

    def model_generate(self: HFLM, *a: Any, **k: Any) -> Any:
        out = original_generate(self, *a, **k)
        write({"event": "generated", "batch": int(k["context"].shape[0])})
        time.sleep(delay)
        return out

    HFLM.generate_until = generate_until  # type: ignore[method-assign]
    HFLM._model_generate = model_generate  # type: ignore[method-assign]
    from rlgate.cli.app import app

    app(["eval", *args], standalone_mode=True)


if __name__ == "__main__":
    main()
