"""`import rlgate` and the runner/orchestration modules stay light: no torch, lm-eval, vLLM or transformers."""

from __future__ import annotations

import subprocess
import sys


def test_light_imports() -> None:
    code = ("import sys, rlgate, rlgate.harness, rlgate.app.check, rlgate.cli.app, rlgate.demo.build; "
            "heavy = [m for m in ('torch', 'lm_eval', 'vllm', 'transformers', 'datasets', 'nltk') "
            "if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
